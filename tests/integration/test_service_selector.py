"""The managed-services selector on the stack (worker, watcher, control plane): services move in and out of
``router=llmisvc`` while it runs. One outside gets no workflow and no request names its objects; one
that enters gets a workflow; one that leaves is handed off: its workflow ends, its objects stay as they
are, and nothing the router does touches them afterwards."""

from __future__ import annotations

import asyncio
import time

import pytest
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from activities.management import Management
from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC
from tests.integration import world
from tests.integration.harness import PRODUCT_AGENT, Stack, running_stack, until
from workflows.models import workflow_id

pytestmark = pytest.mark.asyncio(loop_scope="session")

SELECTED = Management.of("write", "router=llmisvc")
LABEL = {"router": "llmisvc"}


async def create(stack: Stack, name: str, labels: dict[str, str]) -> None:
    stack.workflow_ids.add(workflow_id(stack.namespace, name))
    body = world.service(name, stack.namespace)
    body["metadata"]["labels"] = labels
    await stack.create(LLMISVC, body)


def requests_naming(stack: Stack, name: str, since: float = 0.0) -> list[str]:
    """The router's requests (worker and watcher) that name ``name`` or one of its objects."""
    names = {name, *(obj for _, obj in world.managed_objects(name))}
    return [
        f"{r.verb} {r.resource}/{r.name}"
        for r in stack.cluster.counter.records(user_agent=PRODUCT_AGENT)
        if r.name in names and r.time >= since
    ]


async def workflow_status(stack: Stack, name: str) -> WorkflowExecutionStatus | None:
    try:
        return (
            await stack.temporal.get_workflow_handle(workflow_id(stack.namespace, name)).describe()
        ).status
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return None
        raise


async def route_of(stack: Stack, name: str) -> dict[str, object] | None:
    return await stack.get(HTTPROUTE, naming.route_name(name))


async def test_services_moving_in_and_out_of_the_selection_start_and_hand_off_their_workflows(
    temporal, cluster
):
    async with running_stack(temporal, cluster, watcher=True, management=SELECTED) as stack:
        await create(stack, "inside", LABEL)
        await create(stack, "outside", {"router": "kserve"})
        await until(lambda: route_of(stack, "inside"), "the selected service's route")
        await asyncio.sleep(1.0)  # time the watcher would have needed to start the other one
        assert await workflow_status(stack, "outside") is None
        assert await route_of(stack, "outside") is None
        assert requests_naming(stack, "outside") == []

        # Enters the selection: its workflow starts and routes it.
        await stack.patch(LLMISVC, "outside", {"metadata": {"labels": LABEL}})
        await until(lambda: route_of(stack, "outside"), "the route of the service that entered")
        assert await workflow_status(stack, "outside") == WorkflowExecutionStatus.RUNNING

        # Leaves the selection: handed off, its objects left exactly as they are.
        route = await route_of(stack, "inside")
        assert route is not None
        left_at = time.time()
        await stack.patch(LLMISVC, "inside", {"metadata": {"labels": {"router": None}}})

        async def completed() -> bool:
            return await workflow_status(stack, "inside") == WorkflowExecutionStatus.COMPLETED

        await until(completed, "the hand-off of the service that left")
        handle = stack.handle("inside")
        result = await handle.result()
        assert (
            result.reason
            == f"{stack.namespace}/inside no longer matches the service selector 'router=llmisvc'"
        )
        metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
        assert "**Handed off:**" in metadata.current_details
        state = await stack.state(handle)
        assert state.last is not None and state.last.outcome == "handed-off"

        # Someone else's now: a change that the router would repair stays as it is.
        await stack.delete(HTTPROUTE, naming.route_name("inside"))
        await stack.patch(LLMISVC, "inside", {"spec": {"model": {"name": "changed"}}})
        await asyncio.sleep(1.5)
        assert await route_of(stack, "inside") is None
        # The hand-off pass read the service once to see it had left; nothing else named it since.
        assert set(requests_naming(stack, "inside", since=left_at)) <= {"get llminferenceservices/inside"}
