"""A workflow whose tasks keep failing is findable: the Temporal server (1.28 and later, with the dynamic
config docs/operations.md names) flags it with the ``TemporalReportedProblems`` search attribute, which the
Temporal UI and ``temporal workflow list`` can filter on."""

from __future__ import annotations

from temporalio.client import Client

from tests.observability.failing_task import failing_workflow_task
from tests.observability.harness import until
from worker.factory import DATA_CONVERTER

PROBLEMS_QUERY = "TemporalReportedProblems IN ('category=WorkflowTaskFailed')"


async def test_a_workflow_whose_tasks_keep_failing_is_listed_by_temporal_reported_problems(
    temporal_address: str,
) -> None:
    client = await Client.connect(temporal_address, data_converter=DATA_CONVERTER)
    async with failing_workflow_task(client) as handle:

        async def flagged() -> list[str] | None:
            found = [w.id async for w in client.list_workflows(PROBLEMS_QUERY)]
            return found if handle.id in found else None

        assert await until(flagged, "the failing workflow under TemporalReportedProblems", timeout=60)
