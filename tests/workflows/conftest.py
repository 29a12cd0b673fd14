"""Fixtures of the workflow tests: one time-skipping test server for the session (the binary from the venv,
nothing downloaded), and unfinished-handler warnings turned into test failures."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Generator

import pytest
import pytest_asyncio
from temporalio import workflow
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tests.workflows import harness

UNFINISHED_HANDLER_WARNINGS = (
    workflow.UnfinishedUpdateHandlersWarning,
    workflow.UnfinishedSignalHandlersWarning,
)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def env() -> AsyncIterator[WorkflowEnvironment]:
    env = await harness.start_time_skipping()
    yield env
    await env.shutdown()


@pytest.fixture
def client(env: WorkflowEnvironment) -> Client:
    return env.client


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """A workflow that finishes or continues as new with a handler still running fails its test.

    The SDK only warns (from the worker's thread, when the run completes). Raising from inside the
    activation would just fail the workflow task and retry it, so the warnings are recorded here and the
    test fails after the fact; every other warning is passed on unchanged.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UNFINISHED_HANDLER_WARNINGS[0])
        warnings.simplefilter("always", UNFINISHED_HANDLER_WARNINGS[1])
        result = yield
    unfinished = [w for w in caught if issubclass(w.category, UNFINISHED_HANDLER_WARNINGS)]
    for other in caught:
        if other not in unfinished:
            warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
    if unfinished:
        pytest.fail("; ".join(str(w.message) for w in unfinished), pytrace=False)
    return result
