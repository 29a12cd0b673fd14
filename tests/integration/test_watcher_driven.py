"""The whole orchestrator as deployed: the watcher starts and signals the workflows, the worker runs the
passes; the test only changes the cluster (as ``kubectl`` and the gateway controller would) and never
signals a workflow itself."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import WorkflowExecutionStatus

from llmisvc_core import naming
from llmisvc_core.models.kube import (
    CONFIGMAP,
    DEPLOYMENT,
    GATEWAY,
    HTTPROUTE,
    LLMISVC,
    POOL_V1_GROUP,
    ResourceType,
)
from tests.history import activity_names
from tests.integration import world
from tests.integration.harness import (
    BOTH_RBAC_SHAPES,
    Stack,
    annotations_of,
    backend_groups,
    conditions_of,
    is_true,
    running_gateway_controller,
    running_stack,
    until,
)
from tests.integration.world import Wire
from workflows.models import WorkflowState


async def _gone(stack: Stack, type_: ResourceType, name: str) -> bool:
    return await stack.get(type_, name) is None


pytestmark = pytest.mark.asyncio(loop_scope="session")

NAME = "opt"
MANAGED = world.managed_objects(NAME)


@BOTH_RBAC_SHAPES
async def test_created_service_becomes_ready_when_its_gateway_is_programmed_and_its_workflow_ends_on_delete(
    temporal,
    cluster,
):
    async with running_stack(temporal, cluster, watcher=True) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        handle = stack.handle(NAME)

        async def routed() -> Wire | None:
            return await stack.get(HTTPROUTE, naming.route_name(NAME))

        await until(routed, "the watcher-started workflow to create the managed route")
        assert not is_true(await stack.conditions(NAME), "RouterReady")  # the Gateway is not programmed

        with running_gateway_controller(stack.cluster):
            await stack.until_router_ready(NAME)

            # RouterReady does not wait for the Gateway's addresses (no gateway.refs: GatewaysReady is
            # unset), and the cache may see the accepted pool before the Gateway's status: the URL comes
            # with the pass that the Gateway's change signals.
            async def addressed() -> Wire | None:
                svc = await stack.service(NAME)
                return svc if (svc.get("status") or {}).get("url") else None

            svc = await until(addressed, "status.url from the Gateway's address")

        assert svc["status"]["url"] == f"http://{world.GATEWAY_ADDRESS}/{stack.namespace}/{NAME}"
        state: WorkflowState = await stack.state(handle)
        assert state.last is not None and state.last.outcome == "reconciled"
        assert state.pass_count <= 8, state  # a pass per burst of changes, not a loop

        await stack.delete(LLMISVC, NAME)
        result = await asyncio.wait_for(handle.result(), 20)
        assert result.reason == "the LLMInferenceService is gone"
        assert (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED


async def test_gateway_refusing_v1alpha2_pools_leads_to_the_migration_without_a_manual_trigger(
    temporal, cluster
):
    async with running_stack(
        temporal, cluster, watcher=True, controller={"accepted_pool_groups": [POOL_V1_GROUP]}
    ) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)

        svc = await stack.until_router_ready(NAME)

        route = await stack.get(HTTPROUTE, naming.route_name(NAME))
        assert route is not None
        assert backend_groups(route) == {POOL_V1_GROUP}
        assert annotations_of(route)["serving.kserve.io/inference-pool-migrated"] == "v1"
        assert (await activity_names(stack.handle(NAME))).count("attempt_v1_migration") == 1
        assert is_true(conditions_of(svc), "InferencePoolReady")


async def test_stop_annotation_set_by_a_user_removes_the_routing_and_removing_it_restores_it(
    temporal, cluster
):
    async with running_stack(temporal, cluster, watcher=True, controller={}) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        await stack.until_router_ready(NAME)

        await stack.patch(LLMISVC, NAME, {"metadata": {"annotations": {"serving.kserve.io/stop": "true"}}})

        async def cleaned_up() -> bool:
            return all([await stack.get(type_, name) is None for type_, name in MANAGED])

        await until(cleaned_up, "the stopped service's route, pools and EPP Service to be deleted")
        stopped = await until(
            lambda: _reason(stack, "HTTPRoutesReady", "Stopped"), "the Stopped conditions to be written"
        )
        assert conditions_of(stopped)["InferencePoolReady"]["reason"] == "Stopped"

        await stack.patch(LLMISVC, NAME, {"metadata": {"annotations": {"serving.kserve.io/stop": None}}})

        svc = await stack.until_router_ready(NAME)
        for type_, name in MANAGED:
            assert await stack.get(type_, name) is not None, f"{type_.kind} {name} was not recreated"
        assert svc["status"]["url"].endswith(f"/{stack.namespace}/{NAME}")


async def _reason(stack: Stack, type_: str, reason: str) -> Wire | None:
    svc = await stack.service(NAME)
    return svc if conditions_of(svc).get(type_, {}).get("reason") == reason else None


async def test_service_deleted_and_created_again_is_reconciled_by_a_new_workflow_run(temporal, cluster):
    async with running_stack(temporal, cluster, watcher=True, controller={}) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        await stack.until_router_ready(NAME)
        handle = stack.handle(NAME)
        first_run = (await handle.describe()).run_id

        await stack.delete(LLMISVC, NAME)
        await asyncio.wait_for(handle.result(), 20)
        # The garbage collector removes the old service's objects in the background: wait for it, as
        # one would on a real cluster, before creating the same names again.
        await until(
            lambda: _gone(stack, DEPLOYMENT, naming.scheduler_name(NAME)), "the old Deployment collected"
        )
        await until(lambda: _gone(stack, HTTPROUTE, naming.route_name(NAME)), "the old HTTPRoute collected")
        recreated = await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)

        await stack.until_router_ready(NAME)
        described = await stack.handle(NAME).describe()
        assert described.run_id != first_run
        assert described.status == WorkflowExecutionStatus.RUNNING
        route = await stack.get(HTTPROUTE, naming.route_name(NAME))
        assert route is not None
        assert route["metadata"]["ownerReferences"][0]["uid"] == recreated["metadata"]["uid"]


@BOTH_RBAC_SHAPES
async def test_changing_the_ingress_gateway_in_the_kserve_config_moves_the_managed_route(temporal, cluster):
    async with running_stack(temporal, cluster, watcher=True, controller={}) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        await stack.until_router_ready(NAME)
        await stack.create(GATEWAY, world.gateway("edge", stack.namespace))

        await stack.create(CONFIGMAP, world.ingress_config(stack.kserve_namespace, f"{stack.namespace}/edge"))

        async def moved() -> Wire | None:
            route = await stack.get(HTTPROUTE, naming.route_name(NAME)) or {"spec": {}}
            parents = [(p.get("namespace"), p["name"]) for p in route["spec"].get("parentRefs") or []]
            return route if parents == [(stack.namespace, "edge")] else None

        await until(moved, "the managed route to move to the new ingress Gateway")

        async def ready_on_edge() -> Wire | None:
            svc = await stack.service(NAME)
            gateways = [(g["namespace"], g["name"]) for g in svc["status"]["router"]["gateways"]]
            ready = is_true(conditions_of(svc), "RouterReady")
            return svc if ready and gateways == [(stack.namespace, "edge")] else None

        await until(ready_on_edge, "the status to show the service ready behind the new Gateway")
