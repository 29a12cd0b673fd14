"""Fixtures of the observability tests: one Temporal dev server for the module's tests (the ``temporal``
binary from the venv, nothing downloaded), with the workflows' search attributes registered."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from tests.tools import TEMPORAL
from worker.factory import DATA_CONVERTER
from workflows import search_attributes

REPORT_PROBLEMS_AFTER = "system.numConsecutiveWorkflowTaskProblemsToTriggerSearchAttribute"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_address() -> AsyncIterator[str]:
    """``host:port`` of the dev server; each test connects its own client as the processes do."""
    env = await WorkflowEnvironment.start_local(
        data_converter=DATA_CONVERTER,
        dev_server_existing_path=TEMPORAL,
        search_attributes=search_attributes.ALL,
        dev_server_log_level="error",
        # As docs/operations.md advises: flag a workflow whose tasks keep failing (TemporalReportedProblems).
        dev_server_extra_args=["--dynamic-config-value", f"{REPORT_PROBLEMS_AFTER}=2"],
    )
    try:
        yield env.client.service_client.config.target_host
    finally:
        await env.shutdown()
