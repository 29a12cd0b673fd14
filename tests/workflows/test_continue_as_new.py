"""Continue-as-new of ``LLMInferenceServiceWorkflow`` on a local dev server (the time-skipping server never
suggests it), with ``limit.historyCount.suggestContinueAsNew`` lowered so one pass is enough."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowUpdateStage
from temporalio.testing import WorkflowEnvironment

from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster
from worker.factory import DATA_CONVERTER
from workflows.models import ReconcileSignal, ServiceWorkflowInput
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

#: A first pass that creates the route and pools takes about 40 history events.
SUGGEST_CONTINUE_AS_NEW_AFTER = 15


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def dev_client() -> AsyncIterator[Client]:
    env: WorkflowEnvironment = await harness.start_dev_server(SUGGEST_CONTINUE_AS_NEW_AFTER)
    yield env.client
    await env.shutdown()


async def continued_as_new_with(client: Client, workflow_id: str, run_id: str) -> ServiceWorkflowInput:
    """The input the run ``run_id`` handed to its successor."""
    history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
    last = history.events[-1]
    assert last.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, last
    payloads = last.workflow_execution_continued_as_new_event_attributes.input.payloads
    [request] = await DATA_CONVERTER.decode(payloads, [ServiceWorkflowInput])
    assert isinstance(request, ServiceWorkflowInput)
    return request


async def test_continue_as_new_when_suggested_drains_handlers_and_carries_the_state(dev_client):
    cluster = FakeCluster(world.minimal_world())
    first_pass = cluster.hold("sync")
    async with harness.running_service(dev_client, cluster) as svc:
        first_run = svc.handle.result_run_id
        assert first_run is not None
        assert await asyncio.to_thread(first_pass.reached.wait, harness.WAIT)
        # An update that must wait for the lock while the first pass runs…
        update = await svc.handle.start_update(
            LLMInferenceServiceWorkflow.reconcile_now,
            ReconcileSignal(reason="user asked"),
            wait_for_stage=WorkflowUpdateStage.ACCEPTED,
        )
        update_pass = cluster.hold("sync")
        cluster.release(first_pass)
        # …is still running its own pass when the first pass ends and continue-as-new is suggested.
        assert await asyncio.to_thread(update_pass.reached.wait, harness.WAIT)
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="Gateway changed")
        )
        before = await svc.state()
        cluster.release(update_pass)
        summary = await asyncio.wait_for(update.result(), harness.WAIT)
        handed_over = await continued_as_new_with(dev_client, svc.handle.id, first_run)

        # The handle follows the chain: the latest run picks the carried trigger up at once.
        state = await svc.passes(3)
        description = await svc.handle.describe()

    assert before.pass_count == 1 and before.pending_reasons == ["Gateway changed"]
    assert summary.outcome == "reconciled", "the update finished before the run continued as new"
    carried = handed_over.state
    assert carried is not None
    assert carried.pass_count == 2
    assert carried.pending_reasons == ["Gateway changed"]
    assert carried.uid == state.uid and carried.last == summary
    assert (handed_over.namespace, handed_over.name) == (world.NAMESPACE, world.NAME)
    assert state.pass_count == 3 and state.pending_reasons == []
    assert description.run_id != first_run
