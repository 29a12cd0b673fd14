"""A service's life on a real Temporal dev server, the real control plane and the official client: the first
pass, readiness once the gateway is programmed, stop and resume, deletion. Passes are driven through the
workflow's ``reconcile`` signal and ``reconcile_now`` update (no watcher here)."""

from __future__ import annotations

import asyncio

import pytest

from llmisvc_cache.model import SeenVersion
from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC
from tests.integration import world
from tests.integration.harness import (
    BOTH_RBAC_SHAPES,
    WORKER_AGENT,
    annotations_of,
    conditions_of,
    gateway_programmed,
    is_true,
    running_gateway_controller,
    running_stack,
    until,
)
from tests.integration.world import Wire
from workflows.models import ReconcileSignal
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

NAME = "opt"
WRITES = ("create", "update", "patch", "delete")
MANAGED = world.managed_objects(NAME)


@BOTH_RBAC_SHAPES
async def test_first_pass_creates_the_managed_route_pools_epp_service_and_status(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert state.last is not None and state.last.outcome == "reconciled"
        for type_, name in MANAGED:
            found = await stack.get(type_, name)
            assert found is not None, f"{type_.kind} {name} was not created"
            owner = found["metadata"]["ownerReferences"][0]
            assert (owner["kind"], owner["name"], owner["controller"]) == ("LLMInferenceService", NAME, True)
        route = await stack.get(HTTPROUTE, naming.route_name(NAME))
        assert route is not None
        parents = route["spec"]["parentRefs"]
        assert [(p["namespace"], p["name"]) for p in parents] == [
            (stack.kserve_namespace, world.INGRESS_GATEWAY)
        ]

        conditions = await stack.conditions(NAME)
        # Nobody has programmed the ingress Gateway or accepted the route yet.
        assert conditions["RouterReady"]["status"] == "False"
        assert conditions["HTTPRoutesReady"]["reason"] == "HTTPRoutesNotReady"
        assert conditions["SchedulerWorkloadReady"]["reason"] == "Progressing"
        assert stack.worker_writes("httproutes") == 1
        # KServe #5918: the merged spec's dry-run create (nothing stored), then the status.
        service_writes = stack.cluster.counter.records(
            user_agent=WORKER_AGENT, resource="llminferenceservices"
        )
        assert [(r.verb, r.subresource, r.code) for r in service_writes if r.verb in WRITES] == [
            ("create", "", 201),
            ("update", "status", 200),
        ]


async def test_service_becomes_router_ready_once_the_gateway_is_programmed(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        handle = await stack.start_workflow(NAME)
        await stack.passes(handle, 1)
        assert not is_true(await stack.conditions(NAME), "RouterReady")

        # The gateway controller starts only now: until then nobody programmed the Gateway.
        with running_gateway_controller(stack.cluster):
            await until(lambda: gateway_programmed(stack), "the ingress Gateway to be programmed")
            svc = await stack.until_router_ready(NAME, drive=handle)

        conditions = conditions_of(svc)
        for type_ in ("HTTPRoutesReady", "InferencePoolReady", "SchedulerWorkloadReady", "RouterReady"):
            assert conditions[type_]["status"] == "True", (type_, conditions[type_])
        assert svc["status"]["url"] == f"http://{world.GATEWAY_ADDRESS}/{stack.namespace}/{NAME}"


async def test_a_pass_over_a_settled_world_writes_nothing(temporal, cluster):
    async with running_stack(temporal, cluster, controller={}) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        handle = await stack.start_workflow(NAME)
        await stack.until_router_ready(NAME, drive=handle)
        await asyncio.sleep(0.5)  # let the controller finish reacting to the last status write
        stack.cluster.counter.reset()

        summary = await stack.reconcile_now(handle, "resync")

        assert (summary.outcome, summary.writes, summary.status_written) == ("reconciled", 0, False)
        assert stack.cluster.counter.writes(user_agent="llmisvc-router/") == 0
        # It read the world from the worker's cache: not one request besides the cache's open watches.
        requests = stack.cluster.counter.records(user_agent="llmisvc-router/")
        assert [(r.verb, r.resource) for r in requests if r.verb != "watch"] == []


@BOTH_RBAC_SHAPES
async def test_stop_deletes_the_routing_objects_and_resume_recreates_them(temporal, cluster):
    async with running_stack(temporal, cluster, controller={}) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        handle = await stack.start_workflow(NAME)
        await stack.until_router_ready(NAME, drive=handle)
        passes = (await stack.state(handle)).pass_count

        await handle.signal(LLMInferenceServiceWorkflow.stop)
        await stack.passes(handle, passes + 1)

        svc = await stack.service(NAME)
        assert annotations_of(svc).get("serving.kserve.io/stop") == "true"
        for type_, name in MANAGED:
            assert await stack.get(type_, name) is None, f"{type_.kind} {name} survived the stop"
        conditions = conditions_of(svc)
        for kind in ("HTTPRoutesReady", "InferencePoolReady", "SchedulerWorkloadReady"):
            assert (conditions[kind]["status"], conditions[kind]["reason"]) == ("False", "Stopped"), kind
        assert conditions["RouterReady"]["status"] == "False"
        assert "url" not in svc["status"]

        await handle.signal(LLMInferenceServiceWorkflow.resume)
        await stack.passes(handle, passes + 2)

        svc = await stack.service(NAME)
        assert "serving.kserve.io/stop" not in annotations_of(svc)
        for type_, name in MANAGED:
            assert await stack.get(type_, name) is not None, f"{type_.kind} {name} was not recreated"
        svc = await stack.until_router_ready(NAME, drive=handle)
        assert all(c.get("reason") != "Stopped" for c in conditions_of(svc).values())


async def test_workflow_completes_when_the_service_is_deleted(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        handle = await stack.start_workflow(NAME)
        await stack.passes(handle, 1)

        version = (await stack.service(NAME))["metadata"]["resourceVersion"]
        await stack.delete(LLMISVC, NAME)
        # What the watcher sends: the deletion it saw, which the worker's cache catches up with first.
        seen = SeenVersion(
            resource=str(LLMISVC),
            namespace=stack.namespace,
            name=NAME,
            resource_version=version,
            deleted=True,
        )
        signal = ReconcileSignal(reason="LLMInferenceService deleted", seen=[seen])
        await handle.signal(LLMInferenceServiceWorkflow.reconcile, signal)
        result = await asyncio.wait_for(handle.result(), 20)

        assert result.reason == "the LLMInferenceService is gone"
        assert result.passes == 2


async def test_stop_is_carried_out_even_when_the_gateway_reference_is_broken(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        router = {
            "route": {},
            "gateway": {"refs": [{"name": "no-such-gateway", "namespace": stack.namespace}]},
            "scheduler": {},
        }
        await stack.create_service(NAME, router=router)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)
        assert state.last is not None and state.last.outcome == "invalid-references"

        await handle.signal(LLMInferenceServiceWorkflow.stop)
        state = await stack.passes(handle, 2)

        assert state.last is not None and state.last.outcome == "reconciled", state.last
        svc = await stack.service(NAME)
        assert annotations_of(svc).get("serving.kserve.io/stop") == "true"
        conditions = conditions_of(svc)
        assert conditions["HTTPRoutesReady"]["reason"] == "Stopped", conditions
        assert "GatewaysReady" not in conditions or conditions["GatewaysReady"]["reason"] != "RefsInvalid"


async def test_route_rejected_by_the_gateway_keeps_the_service_not_ready(temporal, cluster):
    async with running_stack(temporal, cluster, controller={"reject_routes": True}) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        handle = await stack.start_workflow(NAME)
        await stack.passes(handle, 1)

        async def rejected() -> Wire | None:
            await stack.reconcile_now(handle, "the route's status changed")
            routes = (await stack.conditions(NAME))["HTTPRoutesReady"]
            return routes if "NotAccepted" in routes.get("message", "") else None

        routes = await until(rejected, "the gateway's rejection to reach the status")
        route = f"{stack.namespace}/{naming.route_name(NAME)}"
        assert (routes["status"], routes["reason"]) == ("False", "HTTPRoutesNotReady")
        assert routes["message"] == (
            f'The following HTTPRoutes are not ready: [{route}: "False" '
            '(reason "NotAccepted", message "Route rejected by the simulated controller")]'
        )
        ready = (await stack.conditions(NAME))["RouterReady"]
        assert (ready["status"], ready["reason"]) == ("False", "HTTPRoutesNotReady")
