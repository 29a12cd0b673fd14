"""``llmisvc-router plan``: run one reconcile pass offline, from a state file to a plan on stdout.

It runs exactly the rules the live orchestrator runs (``llmisvc_core.planner.passes.plan_pass``); nothing is
contacted and nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import Any

import yaml

from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.planner.passes import plan_pass
from llmisvc_router.errors import CommandError
from llmisvc_router.state_file import ClusterState, StateFileError, parse_state
from llmisvc_runtime import exit_codes
from llmisvc_runtime.environment import environment_from

DESCRIPTION = """\
Plan one router pass for an LLMInferenceService, offline.

Input (-f FILE, or -f - for stdin; -f may be repeated, the files are read as one cluster state and an
object found in two of them is refused): multi-document YAML, or one kind: List in YAML or JSON (as
kubectl get -o json writes it, read much faster than YAML when it holds CRDs), of the cluster state: the
LLMInferenceService(s), Gateways, GatewayClasses, HTTPRoutes and InferencePools (v1 and v1alpha2) with
their status, Services, Deployments, the inferenceservice-config ConfigMap (absent = defaults) and
CustomResourceDefinitions (none in the file = every API installed; any = only those installed).
Other kinds are ignored.

Output on stdout, one YAML document: apply (objects this pass creates or updates), delete (objects it
deletes), status (the service's .status after the pass), outcome (reconciled | precondition-not-met |
invalid-references | failed) and message (when failed). With --all, one such document per
LLMInferenceService of the file, in namespace/name order, each opened by service: NAMESPACE/NAME; every
pass reads the same state (the services of a routing group see each other as the file has them).
Bad input exits 2 with one line on stderr.

Offline, one check of the live router is skipped: the dry-run create by which the API server judges
the merged spec against the LLMInferenceService CRD (KServe #5918; PresetsCombined=False with reason
InvalidRenderedConfig when it refuses it). plan routes the merged spec as if it were accepted.

Environment, as for the controller: POD_NAMESPACE (KServe namespace, default kserve),
GATEWAY_API_WILDCARD_HOSTNAME (default inference), CLUSTER_DOMAIN (or /etc/resolv.conf).

examples:
  llmisvc-router plan -f examples/minimal-presets.yaml
  llmisvc-router plan -f gateways.yaml -f services.yaml --name llm/facebook-opt-125m
  llmisvc-router plan -f examples/routing-group.yaml --all
  kubectl get llmisvc,gateways,httproutes,inferencepools -A -o yaml | llmisvc-router plan -f - --name llm/x
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "plan",
        help="plan one reconcile pass from a state file, offline",
        description=DESCRIPTION,
        epilog=exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-f",
        "--filename",
        required=True,
        action="append",
        metavar="STATE.yaml",
        help="state file, - for stdin (repeat to read several files as one state)",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--name", metavar="NAMESPACE/NAME", help="the LLMInferenceService to plan")
    which.add_argument(
        "--all",
        action="store_true",
        help="plan every LLMInferenceService of the file, one document each",
    )
    parser.add_argument(
        "--now",
        metavar="RFC3339",
        help="time stamped on changed conditions (default: the current time, UTC)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        text, source = _read_all(args.filename)
        state = parse_state(text, source)
        services = every_service(state, source) if args.all else [choose_service(state, args.name, source)]
        now = _timestamp(args.now)
    except StateFileError as err:
        raise CommandError(str(err), exit_codes.USAGE) from err
    env = environment_from()
    if not args.all:
        plan = plan_pass(services[0], state.snapshot, env, now)
        yaml.safe_dump(plan.to_document(), sys.stdout, sort_keys=False, default_flow_style=False)
        return 0
    documents = [
        {"service": f"{svc.namespace}/{svc.name}", **plan_pass(svc, state.snapshot, env, now).to_document()}
        for svc in services
    ]
    yaml.safe_dump_all(documents, sys.stdout, sort_keys=False, default_flow_style=False)
    return 0


def every_service(state: ClusterState, source: str) -> list[LLMInferenceService]:
    """Every service of the file in namespace/name order (``--all``); none is an error."""
    if not state.services:
        raise StateFileError(f"{source}: no LLMInferenceService in the file")
    return sorted(state.services, key=lambda s: (s.namespace, s.name))


def _read_all(filenames: list[str]) -> tuple[str, str]:
    """The files as one multi-document text (each checked on its own first, so errors name their file)."""
    if len(filenames) == 1:
        return _read(filenames[0])
    documents: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str], str] = {}
    for filename in filenames:
        text, source = _read(filename)
        parse_state(text, source)
        for obj in _objects_of(text):
            meta = obj.get("metadata") or {}
            identity = (str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))
            if identity in seen:
                kind, namespace, name = identity
                where = f"{namespace}/{name}" if namespace else name
                raise StateFileError(
                    f"{seen[identity]} and {source} both hold {kind} {where}; keep each object in one file"
                )
            seen[identity] = source
            documents.append(obj)
    return yaml.safe_dump_all(documents, sort_keys=False), " + ".join(filenames)


def _objects_of(text: str) -> list[dict[str, Any]]:
    """The objects of a checked state file: its documents, or the items of its one List."""
    documents = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    if len(documents) == 1 and documents[0].get("kind") == "List":
        documents = [i for i in documents[0].get("items") or [] if isinstance(i, dict)]
    return documents


def _read(filename: str) -> tuple[str, str]:
    if filename == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(filename, encoding="utf-8") as handle:
            return handle.read(), filename
    except OSError as err:
        raise StateFileError(f"{filename}: cannot read: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise StateFileError(f"{filename}: not UTF-8 text ({err.reason} at byte {err.start})") from err


def choose_service(state: ClusterState, name: str | None, source: str) -> LLMInferenceService:
    """The service named by ``--name``, or the only one in the file."""
    found = {f"{s.namespace}/{s.name}": s for s in state.services}
    listing = ", ".join(sorted(found)) or "none"
    if name is not None:
        if "/" not in name:
            raise StateFileError(f"--name {name}: expected NAMESPACE/NAME")
        if name not in found:
            raise StateFileError(f"{source}: no LLMInferenceService {name} in the file (found: {listing})")
        return found[name]
    if not found:
        raise StateFileError(f"{source}: no LLMInferenceService in the file")
    if len(found) > 1:
        raise StateFileError(
            f"{source}: {len(found)} LLMInferenceServices ({listing}); choose one with --name NAMESPACE/NAME"
            " or plan them all with --all"
        )
    return next(iter(found.values()))


def _timestamp(value: str | None) -> str:
    if value is None:
        return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as err:
        raise StateFileError(f"--now {value}: not an RFC 3339 time (e.g. 2026-01-02T03:04:05Z)") from err
    if parsed.tzinfo is None:
        raise StateFileError(f"--now {value}: the time needs a zone (e.g. a trailing Z)")
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
