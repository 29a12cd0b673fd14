"""The Temporal signaller against a real Temporal dev server (no worker: the histories tell what arrived)."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from llmisvc_watcher.model import ServiceSignal
from llmisvc_watcher.signaller import TemporalSignaller
from worker.factory import DATA_CONVERTER
from workflows.models import ReconcileSignal, ServiceWorkflowInput, workflow_id
from workflows.starting import WorkflowStarter

TEMPORAL = Path(sys.executable).parent / "temporal"

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(not TEMPORAL.exists(), reason="the temporal dev server binary is not installed"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client() -> AsyncIterator[Client]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL),
        data_converter=DATA_CONVERTER,
        ui=False,
        dev_server_log_level="error",
    )
    try:
        yield env.client
    finally:
        await env.shutdown()


def signaller_for(client: Client) -> TemporalSignaller:
    return TemporalSignaller(WorkflowStarter(client, "watcher-tests", 42, with_search_attributes=False))


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def signals_of(client: Client, namespace: str, name: str, run_id: str | None = None) -> list[str]:
    history = await client.get_workflow_handle(workflow_id(namespace, name), run_id=run_id).fetch_history()
    reasons = []
    for event in history.events:
        if event.HasField("workflow_execution_signaled_event_attributes"):
            attrs = event.workflow_execution_signaled_event_attributes
            assert attrs.signal_name == "reconcile"
            (signal,) = await client.data_converter.decode(attrs.input.payloads, [ReconcileSignal])
            reasons.append(signal.reason)
    return reasons


async def test_signal_with_start_starts_one_workflow_and_signals_it_each_time(client):
    name = unique("svc")
    signaller = signaller_for(client)
    await signaller.send(ServiceSignal("ns", name, "LLMInferenceService ns/x found", start=True))
    await signaller.send(ServiceSignal("ns", name, "LLMInferenceService ns/x modified", start=True))
    handle = client.get_workflow_handle(workflow_id("ns", name))
    described = await handle.describe()
    assert described.status == WorkflowExecutionStatus.RUNNING
    assert described.task_queue == "watcher-tests"
    history = await handle.fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    (request,) = await client.data_converter.decode(started.input.payloads, [ServiceWorkflowInput])
    assert (request.namespace, request.name, request.resync_seconds) == ("ns", name, 42)
    assert await signals_of(client, "ns", name) == [
        "LLMInferenceService ns/x found",
        "LLMInferenceService ns/x modified",
    ]


async def test_a_plain_signal_reaches_the_running_workflow(client):
    name = unique("svc")
    signaller = signaller_for(client)
    await signaller.send(ServiceSignal("ns", name, "found", start=True))
    await signaller.send(ServiceSignal("ns", name, "Gateway kserve/gw modified"))
    assert await signals_of(client, "ns", name) == ["found", "Gateway kserve/gw modified"]


async def test_a_plain_signal_to_a_workflow_that_does_not_exist_is_no_error(client):
    await signaller_for(client).send(ServiceSignal("ns", unique("never-started"), "deleted"))


async def test_a_plain_signal_to_a_finished_workflow_is_no_error_and_starts_nothing(client):
    name = unique("svc")
    signaller = signaller_for(client)
    await signaller.send(ServiceSignal("ns", name, "found", start=True))
    handle = client.get_workflow_handle(workflow_id("ns", name))
    await handle.terminate("test")
    await signaller.send(ServiceSignal("ns", name, "LLMInferenceService ns/x deleted"))
    assert (await handle.describe()).status == WorkflowExecutionStatus.TERMINATED


async def test_signal_with_start_after_the_workflow_ended_starts_a_new_run(client):
    name = unique("svc")
    signaller = signaller_for(client)
    await signaller.send(ServiceSignal("ns", name, "created", start=True))
    handle = client.get_workflow_handle(workflow_id("ns", name))
    first_run = (await handle.describe()).run_id
    await handle.terminate("test")
    await signaller.send(ServiceSignal("ns", name, "created again", start=True))
    described = await client.get_workflow_handle(workflow_id("ns", name)).describe()
    assert described.run_id != first_run
    assert described.status == WorkflowExecutionStatus.RUNNING
    assert await signals_of(client, "ns", name, described.run_id) == ["created again"]
