"""A pass that cannot complete is findable, and a fault of the workflow's own code does not wedge it: the
pass ends with outcome ``error`` (``InternalError: …`` in ``last_error``), ``LlmisvcPassFailing`` turns
true, no workflow task fails, and the next pass that completes turns it false again."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from tests.cluster import Cluster
from tests.integration.harness import running_stack, until
from workflows import search_attributes, summaries
from workflows.models import ServiceWorkflowInput, WorkflowState, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")
NAME = "opt"


async def test_a_fault_of_the_workflows_own_code_ends_the_pass_marked_pass_failing_and_the_next_clears_it(
    temporal: Client, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = summaries.pass_summary
    faults = [RuntimeError("a bug in the pass summary")]

    def buggy_once(*args: Any, **kwargs: Any) -> Any:
        if faults:
            raise faults.pop()
        return real(*args, **kwargs)

    monkeypatch.setattr(summaries, "pass_summary", buggy_once)
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        handle = await temporal.start_workflow(
            LLMInferenceServiceWorkflow.run,
            ServiceWorkflowInput(
                namespace=stack.namespace, name=NAME, search_attributes=True, drift_attribute=True
            ),
            id=workflow_id(stack.namespace, NAME),
            task_queue=stack.task_queue,
        )
        state: WorkflowState = await stack.passes(handle, 1)
        assert state.last is not None and state.last.outcome == "error"
        assert state.last_error == "InternalError: RuntimeError: a bug in the pass summary"
        attributes = (await handle.describe()).typed_search_attributes
        assert attributes.get(search_attributes.PASS_FAILING) is True

        summary = await stack.reconcile_now(handle)
        assert summary.outcome == "reconciled"

        async def cleared() -> bool | None:
            found = (await handle.describe()).typed_search_attributes.get(search_attributes.PASS_FAILING)
            return True if found is False else None

        await until(cleared, "LlmisvcPassFailing false after a pass that completed")
        history = await handle.fetch_history()
        assert not [e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED]
