"""For the same cluster state, a live pass writes exactly what ``llmisvc-router plan`` prints.

Each scenario brings the cluster to a state and freezes it (no gateway controller running), dumps what
the router may read to a state file, runs ``llmisvc-router plan`` on it, then runs one live pass against the
same state and compares the objects created, updated and deleted and the status written (modulo what the
API server sets: uid, resourceVersion, creationTimestamp, generation, managedFields, and the time stamped
on the conditions that changed).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from llmisvc_core import naming
from llmisvc_core.models.kube import (
    CONFIGMAP,
    CRD,
    DEPLOYMENT,
    GATEWAY,
    GATEWAYCLASS,
    HTTPROUTE,
    KNOWN_TYPES,
    LLMISVC,
    POOL_V1,
    POOL_V1_GROUP,
    POOL_V1ALPHA2,
    SERVICE,
    ResourceType,
    key_of,
)
from llmisvc_core.world.config import CONFIGMAP_NAME
from llmisvc_devstack.proxy import RequestRecord
from tests.integration.harness import (
    WORKER_AGENT,
    Handle,
    Stack,
    gateway_programmed,
    route_parent_conditions,
    running_gateway_controller,
    running_stack,
    until,
)

# A live pass and a `plan` process (allowed 60 s of its own) per case: up to 90 s on a loaded machine, too
# close to the suite's 120 s default (pyproject.toml).
pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(300)]

NAME = "opt"
PLAN_TIME = "2030-01-01T00:00:00Z"
#: What ``llmisvc_runtime.environment`` reads; the test's stack sets POD_NAMESPACE alone (``Cluster.env``).
ENVIRONMENT_VARIABLES = (
    "GATEWAY_API_WILDCARD_HOSTNAME",
    "CLUSTER_DOMAIN",
    "POD_NAMESPACE",
    "LLM_INFERENCE_SERVICE_CONFIG_PREFIX",
)
SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
Wire = dict[str, Any]


# --- the scenarios: each leaves a frozen world and returns the pass to run on it ----------------------


async def new_service(stack: Stack) -> Callable[[], Awaitable[Handle]]:
    """A service nobody has reconciled yet, on a programmed ingress Gateway: everything is created."""
    with running_gateway_controller(stack.cluster):
        await until(lambda: gateway_programmed(stack), "the ingress Gateway to be programmed")
    await stack.create_service(NAME)
    await stack.make_scheduler_ready(NAME)
    return lambda: _first_pass(stack)


async def migrating_route(stack: Stack) -> Callable[[], Awaitable[Handle]]:
    """The gateway refused the route's v1alpha2 pools: the route is updated to v1 with the lock."""
    await stack.create_service(NAME)
    with running_gateway_controller(stack.cluster, accepted_pool_groups=[POOL_V1_GROUP]):
        handle = await stack.start_workflow(NAME)
        await stack.passes(handle, 1)

        async def refused() -> bool:
            route = await stack.get(HTTPROUTE, naming.route_name(NAME)) or {}
            return route_parent_conditions(route).get("ResolvedRefs", {}).get("reason") == "InvalidKind"

        await until(refused, "the gateway to refuse the v1alpha2 pools")
    return lambda: _reconcile(stack, handle)


async def stopped_by_annotation(stack: Stack) -> Callable[[], Awaitable[Handle]]:
    """A user annotated a running service with serving.kserve.io/stop: its objects are deleted."""
    await stack.create_service(NAME)
    await stack.make_scheduler_ready(NAME)
    with running_gateway_controller(stack.cluster):
        handle = await stack.start_workflow(NAME)
        await stack.until_router_ready(NAME, drive=handle)
    await stack.patch(LLMISVC, NAME, {"metadata": {"annotations": {"serving.kserve.io/stop": "true"}}})
    return lambda: _reconcile(stack, handle)


async def settled(stack: Stack) -> Callable[[], Awaitable[Handle]]:
    """Nothing changed since the last pass: the plan is empty and the live pass writes nothing."""
    await stack.create_service(NAME)
    await stack.make_scheduler_ready(NAME)
    with running_gateway_controller(stack.cluster):
        handle = await stack.start_workflow(NAME)
        await stack.until_router_ready(NAME, drive=handle)
        await asyncio.sleep(0.3)
        await stack.reconcile_now(handle)  # with the controller's last status writes in
    return lambda: _reconcile(stack, handle)


async def _first_pass(stack: Stack) -> Handle:
    handle = await stack.start_workflow(NAME)
    await stack.passes(handle, 1)
    return handle


async def _reconcile(stack: Stack, handle: Handle) -> Handle:
    await stack.reconcile_now(handle, "equivalence check")
    return handle


Scenario = Callable[[Stack], Awaitable[Callable[[], Awaitable[Handle]]]]
#: scenario -> (what its pass must write: the plan's writes by verb, kind; whether the status changes),
#: so a comparison of two empty or wrong plans cannot pass unnoticed.
SCENARIOS: dict[str, tuple[Scenario, list[tuple[str, str]], bool]] = {
    "new-service": (
        new_service,
        [
            ("create", "HTTPRoute"),
            ("create", "InferencePool"),
            ("create", "InferencePool"),
            ("create", "Service"),
        ],
        True,
    ),
    "v1alpha2-to-v1-migration": (migrating_route, [("update", "HTTPRoute")], True),
    "stop-annotation": (
        stopped_by_annotation,
        [
            ("delete", "HTTPRoute"),
            ("delete", "InferencePool"),
            ("delete", "InferencePool"),
            ("delete", "Service"),
        ],
        True,
    ),
    "settled-world": (settled, [], False),
}


@pytest.mark.parametrize(("scenario", "writes", "status_changes"), SCENARIOS.values(), ids=SCENARIOS.keys())
async def test_live_pass_writes_exactly_what_plan_prints(
    temporal, cluster, tmp_path, scenario, writes, status_changes
):
    async with running_stack(temporal, cluster) as stack:
        run_pass = await scenario(stack)
        await asyncio.sleep(1.1)  # condition times have one-second resolution: make "changed" visible
        state = await asyncio.to_thread(dump_state, stack)
        state_file = tmp_path / "state.json"  # as kubectl get -o json writes it: the CRDs make megabytes
        state_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": state}))
        plan = await asyncio.to_thread(
            run_plan, state_file, f"{stack.namespace}/{NAME}", stack.kserve_namespace
        )
        stack.cluster.counter.reset()

        await run_pass()

        written = stack.worker_stored()  # what the API server took, as the proxy saw it sent
        # Every write counted was taken; the Events that tell about the writes are not writes of the plan.
        events = stack.cluster.counter.writes(
            resource="events", group="events.k8s.io", user_agent=WORKER_AGENT
        )
        assert stack.cluster.counter.writes(user_agent=WORKER_AGENT) - events == len(written)
        # The dry-run create of the merged spec (KServe #5918) stores nothing and is not counted: a first
        # pass makes it, beside the plan's writes.
        dry_runs = stack.cluster.counter.records(user_agent=WORKER_AGENT, dry_run=True)
        assert [(r.verb, r.resource) for r in dry_runs] == (
            [("create", LLMISVC.plural)] if scenario is new_service else []
        )
        stored_status = next(o for o in state if o["kind"] == "LLMInferenceService").get("status") or {}
        planned = [(verb, kind) for (_, kind, _, _), (verb, _) in objects_planned(plan).items()]
        planned += [("delete", d["kind"]) for d in plan["delete"]]
        assert sorted(planned) == sorted(writes), plan
        assert objects_written(written) == objects_planned(plan)
        assert deletions(written) == planned_deletions(plan)
        status_writes = [w for w in written if (w.verb, w.subresource) == ("update", "status")]
        assert all(type_written(w) == LLMISVC for w in status_writes)
        changes = without_times(plan["status"], stored_status) != without_times(stored_status, stored_status)
        assert changes == status_changes
        if not changes:
            assert status_writes == []  # the plan changes nothing in the status: no write
        else:
            assert len(status_writes) == 1
            live_status = status_writes[0].document()["status"]
            assert without_times(live_status, stored_status) == without_times(plan["status"], stored_status)


# --- the state file and the plan --------------------------------------------------------------------


def dump_state(stack: Stack) -> list[Wire]:
    """What the router may read about the service, as ``kubectl get -o json`` would show it."""
    ns, kube = stack.namespace, stack.kube
    service = kube.get(LLMISVC, ns, NAME)
    assert service is not None
    objects = [service]
    for type_, namespace in (
        (GATEWAYCLASS, ""),
        (GATEWAY, ""),
        (HTTPROUTE, ns),
        (POOL_V1, ns),
        (POOL_V1ALPHA2, ns),
        (SERVICE, ns),
        (DEPLOYMENT, ns),
        (CRD, ""),
    ):
        objects += kube.list_objects(type_, namespace, {})
    config = kube.get(CONFIGMAP, stack.kserve_namespace, CONFIGMAP_NAME)
    return objects + ([config] if config is not None else [])


def run_plan(state_file: Path, name: str, kserve_namespace: str) -> Wire:
    """``plan`` as the worker would run it: the same KServe namespace (``POD_NAMESPACE``), the settings'
    defaults otherwise."""
    command = [sys.executable, "-m", "llmisvc_router", "plan", "-f", str(state_file), "--name", name]
    env = {k: v for k, v in os.environ.items() if k not in ENVIRONMENT_VARIABLES}
    done = subprocess.run(
        [*command, "--now", PLAN_TIME],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**env, "POD_NAMESPACE": kserve_namespace},
    )
    assert done.returncode == 0, done.stderr
    plan: Wire = yaml.safe_load(done.stdout)
    return plan


# --- comparing, modulo what the server sets ---------------------------------------------------------


Key = tuple[str, str, str, str]  # apiVersion, kind, namespace, name: both InferencePools share a name


#: The type of a request's path: (group, version, plural).
TYPES_BY_PATH = {(t.group, t.version, t.plural): t for t in KNOWN_TYPES.values()}


def type_written(write: RequestRecord) -> ResourceType:
    return TYPES_BY_PATH[(write.group, write.version, write.resource)]


def objects_written(written: list[RequestRecord]) -> dict[Key, tuple[str, Wire]]:
    found = {}
    for w in written:
        if w.verb in ("create", "update") and not w.subresource:
            type_ = type_written(w)
            key = (type_.api_version, type_.kind, w.namespace, w.name)
            assert key not in found, f"{key} written twice in one pass"
            found[key] = (w.verb, without_server_fields(w.document()))
    return found


def objects_planned(plan: Wire) -> dict[Key, tuple[str, Wire]]:
    """Each manifest of ``apply``, as the write it stands for: an update when it carries the
    resourceVersion it was read at, else a create."""
    found = {}
    for manifest in plan["apply"]:
        key = key_of(manifest)
        assert key is not None, manifest
        verb = "update" if manifest["metadata"].get("resourceVersion") else "create"
        found[(manifest["apiVersion"], manifest["kind"], key.namespace, key.name)] = (
            verb,
            without_server_fields(manifest),
        )
    return found


def deletions(written: list[RequestRecord]) -> list[Key]:
    types = [(type_written(w), w) for w in written if w.verb == "delete"]
    return sorted((t.api_version, t.kind, w.namespace, w.name) for t, w in types)


def planned_deletions(plan: Wire) -> list[Key]:
    return sorted((d["apiVersion"], d["kind"], d.get("namespace", ""), d["name"]) for d in plan["delete"])


def without_server_fields(obj: Wire) -> Wire:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SERVER_SET}
    return {**obj, "metadata": meta}


def without_times(status: Wire, before: Wire) -> Wire:
    """The status with each condition's ``lastTransitionTime`` replaced by whether it changed from
    ``before`` (the pass's own clock differs between ``plan --now`` and the live pass)."""
    old = {c["type"]: c.get("lastTransitionTime") for c in before.get("conditions") or []}
    conditions = [
        {
            **{k: v for k, v in c.items() if k != "lastTransitionTime"},
            "stamped": "kept" if c.get("lastTransitionTime") == old.get(c["type"]) else "changed",
        }
        for c in status.get("conditions") or []
    ]
    return {**status, "conditions": conditions}
