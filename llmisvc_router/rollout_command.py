"""``llmisvc-router rollout start|status|pause|resume|promote|abort NAMESPACE/GROUP``: a progressive
rollout of a routing group (``workflows.rollout_workflow``), one command per move. The plan comes from
flags (``--steps 10,50,100 --dwell 60s``) or a YAML file (``-f plan.yaml``, flags override it)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import socket
from pathlib import Path
from typing import Any

import yaml
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.workflow import UpdateMethodMultiParam

from activities.rollout_activities import observe
from activities.rollout_models import RolloutMembers
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.rollout import plan as plans
from llmisvc_core.rollout.plan import RolloutPlan
from llmisvc_kube.api import ApiError
from llmisvc_kube.client import KubeClusterApi
from llmisvc_router import options, output, rollout_help
from llmisvc_router.errors import CommandError
from llmisvc_router.orchestrator_commands import run_command, service_key
from llmisvc_runtime import exit_codes, kube, temporal
from llmisvc_runtime.settings import OrchestratorSettings
from workflows.rollout_details import static_details, summary
from workflows.rollout_models import ControlRequest, RolloutInput, RolloutStatus, rollout_workflow_id
from workflows.rollout_workflow import RolloutWorkflow


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from llmisvc_router import help_texts

    parser = help_texts.add_command(commands, "rollout", rollout_help.HELP, rollout_help.DESCRIPTION)
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for action, handler in (
        ("start", _start),
        ("status", _status),
        ("pause", _pause),
        ("resume", _resume),
        ("promote", _promote),
        ("abort", _abort),
    ):
        sub = actions.add_parser(
            action,
            help=rollout_help.ACTIONS[action],
            description=rollout_help.ACTIONS[action],
            epilog=rollout_help.EXAMPLES[action],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument(
            "group", metavar="NAMESPACE/GROUP", help="the routing group (spec.router.route.group)"
        )
        if action == "start":
            _plan_options(sub)
        output.add_argument(sub)
        options.connection(sub)
        sub.set_defaults(handler=lambda a, h=handler: run_command(a, h))


def _plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stable", required=True, metavar="NAME", help="the service that has the traffic now"
    )
    parser.add_argument("--candidate", required=True, metavar="NAME", help="the service to move it to")
    plan = parser.add_argument_group("the plan (docs/rollouts.md); flags override -f")
    plan.add_argument("-f", "--file", metavar="PLAN.yaml", help="the plan as YAML (steps, gates, rollback)")
    plan.add_argument("--steps", metavar="W,W,…", help="the candidate's percent at each step, ending at 100")
    plan.add_argument("--dwell", metavar="DURATION", help="time at each step: 90, 90s, 5m, 1h (default 60s)")
    plan.add_argument(
        "--gate-timeout", metavar="DURATION", help="how long gates may stay pending (default 5m)"
    )
    plan.add_argument("--rollback", choices=("last-good", "stable"), help="where a failed gate goes back to")
    plan.add_argument("--prometheus-url", metavar="URL", help="Prometheus, e.g. http://prometheus:9090")
    plan.add_argument("--query", metavar="PROMQL", help="an instant query with one value (error rate, …)")
    plan.add_argument("--threshold", type=float, metavar="X", help="the query's value must stay at most X")
    plan.add_argument(
        "--pass-when", choices=("below", "above"), help="below (default) or above the threshold"
    )


async def _start(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    """A rollout of the pair, once both services are read and found in the group; its first status."""
    namespace, group = _group(args)
    plan = build_plan(args)  # refused before anything connects
    members = RolloutMembers(namespace=namespace, group=group, stable=args.stable, candidate=args.candidate)
    await asyncio.to_thread(_require_members, settings, members)
    client = await temporal.connect()
    wid = rollout_workflow_id(namespace, group, settings.cluster)
    return _print(wid, await _started(client, settings, wid, RolloutInput(members=members, plan=plan)), args)


async def _status(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    namespace, group = _group(args)
    handle = await _handle(settings, namespace, group)
    return _print(handle.id, await _query(handle, f"{namespace}/{group}"), args)


async def _pause(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    return await _control(args, settings, RolloutWorkflow.pause, "pause")


async def _resume(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    return await _control(args, settings, RolloutWorkflow.resume, "resume")


async def _promote(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    return await _control(args, settings, RolloutWorkflow.promote, "promote")


async def _abort(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    return await _control(args, settings, RolloutWorkflow.abort, "abort")


def _group(args: argparse.Namespace) -> tuple[str, str]:
    """The group's namespace and name; the output format checked too, before anything connects."""
    output.check(args.output)
    return service_key(args.group)


async def _handle(settings: OrchestratorSettings, namespace: str, group: str) -> WorkflowHandle[Any, Any]:
    client = await temporal.connect()
    return client.get_workflow_handle(rollout_workflow_id(namespace, group, settings.cluster))


def _print(wid: str, status: RolloutStatus, args: argparse.Namespace) -> int:
    print(output.render({"id": wid, **status.model_dump(mode="json")}, args.output), end="")
    return exit_codes.OK


def build_plan(args: argparse.Namespace) -> RolloutPlan:
    """The plan from ``-f`` and the flags (flags win); CommandError (exit 2) naming the field."""
    data: dict[str, Any] = {}
    try:
        if args.file:
            loaded = yaml.safe_load(Path(args.file).read_text())
            if not isinstance(loaded, dict):
                raise CommandError(f"{args.file}: expected a mapping (steps: …)", exit_codes.USAGE)
            data = loaded
        if args.steps is None and "steps" not in data:
            raise plans.PlanError("--steps: required (or -f PLAN.yaml with steps)")
        if args.steps is not None:
            dwell = plans.parse_duration(args.dwell) if args.dwell else 60
            data["steps"] = plans.steps_from_flags(args.steps, dwell)
        elif args.dwell:
            raise plans.PlanError("--dwell: give --steps too (the file's steps have their own dwell_seconds)")
        if args.gate_timeout:
            data["gate_timeout_seconds"] = plans.parse_duration(args.gate_timeout, "--gate-timeout")
        if args.rollback:
            data["rollback"] = args.rollback
        gate = _prometheus_flags(args)
        if gate:
            data["prometheus"] = {**(data.get("prometheus") or {}), **gate}
        return plans.parse_plan(data, args.file or "rollout plan")
    except OSError as err:
        raise CommandError(f"{args.file}: {err.strerror}", exit_codes.USAGE) from err
    except yaml.YAMLError as err:
        raise CommandError(f"{args.file}: not YAML ({str(err).splitlines()[0]})", exit_codes.USAGE) from err
    except plans.PlanError as err:
        raise CommandError(str(err), exit_codes.USAGE) from err


def _prometheus_flags(args: argparse.Namespace) -> dict[str, Any]:
    given = {
        "url": args.prometheus_url,
        "query": args.query,
        "threshold": args.threshold,
        "pass_when": args.pass_when,
    }
    return {key: value for key, value in given.items() if value is not None}


def _require_members(settings: OrchestratorSettings, members: RolloutMembers) -> None:
    """Both services exist and are in the group: a rollout of a pair that is not one starts nothing."""
    api_client = kube.connect_kube(settings.kubeconfig, settings.kube_context)
    try:
        api = KubeClusterApi(api_client)
        for name in (members.stable, members.candidate):
            try:
                seen = observe(name, api.get(LLMISVC, members.namespace, name))
            except ApiError as err:
                raise CommandError(
                    f"cannot read LLMInferenceService {members.namespace}/{name}: {err.message}",
                    exit_codes.UNAVAILABLE,
                ) from err
            if not seen.exists:
                raise CommandError(f"no LLMInferenceService {members.namespace}/{name}", exit_codes.NOT_FOUND)
            if seen.group != members.group:
                raise CommandError(
                    f"LLMInferenceService {members.namespace}/{name}: spec.router.route.group is "
                    f"{seen.group or 'not set'}, not {members.group}",
                    exit_codes.USAGE,
                )
    finally:
        api_client.close()


async def _started(
    client: Client, settings: OrchestratorSettings, wid: str, request: RolloutInput
) -> RolloutStatus:
    try:
        handle = await client.start_workflow(
            RolloutWorkflow.run,
            request,
            id=wid,
            task_queue=settings.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,  # one rollout per group
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,  # a finished one may be run again
            static_summary=summary(request.members, request.plan),
            static_details=static_details(request.members),
        )
    except WorkflowAlreadyStartedError as err:
        raise CommandError(
            f"a rollout of group {request.members.namespace}/{request.members.group} is running already: "
            f"{err.workflow_id} (run {err.run_id}); see `llmisvc-router rollout status`, or abort it first",
            exit_codes.FAILED,
        ) from err
    return await _query(handle, f"{request.members.namespace}/{request.members.group}", wait=True)


async def _query(handle: WorkflowHandle[Any, Any], group: str, wait: bool = False) -> RolloutStatus:
    """The ``status`` query; ``wait``: a just started rollout answers once its worker has taken it."""
    for _ in range(50 if wait else 1):
        try:
            status: RolloutStatus = await handle.query(RolloutWorkflow.status)
            if not wait or status.weights is not None:
                return status
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise CommandError(f"no rollout of group {group}", exit_codes.NOT_FOUND) from err
            if not wait:
                raise CommandError(
                    f"cannot query the rollout of {group}: {err}", exit_codes.UNAVAILABLE
                ) from err
        await asyncio.sleep(0.2)
    return await handle.query(RolloutWorkflow.status)


async def _control(
    args: argparse.Namespace,
    settings: OrchestratorSettings,
    update: UpdateMethodMultiParam[[Any, ControlRequest], RolloutStatus],
    verb: str,
) -> int:
    """``update`` of the running rollout, as the person running the command; its status after it."""
    namespace, group = _group(args)
    handle = await _handle(settings, namespace, group)
    request = ControlRequest(by=f"{getpass.getuser()}@{socket.gethostname()}")
    try:
        result: RolloutStatus = await handle.execute_update(update, request)
    except WorkflowUpdateFailedError as err:
        raise CommandError(str(err.cause), exit_codes.FAILED) from err
    except RPCError as err:
        where = f"{namespace}/{group}"
        if err.status == RPCStatusCode.NOT_FOUND:
            raise CommandError(f"no running rollout of group {where}", exit_codes.NOT_FOUND) from err
        raise CommandError(f"cannot {verb} the rollout of {where}: {err}", exit_codes.UNAVAILABLE) from err
    return _print(handle.id, result, args)
