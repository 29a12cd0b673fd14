"""Fixtures of the integration tests: one Temporal dev server for the session (the ``temporal`` binary from
the venv, nothing downloaded); each test builds its own stack on it (``harness.running_stack``): the
test's namespaces on the session's control plane (``cluster``, ``tests/cluster.py``) and a worker on a
task queue of its own."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tests.cluster import Cluster, Plane, shared_plane, test_cluster
from worker.factory import DATA_CONVERTER
from workflows import search_attributes

TEMPORAL = Path(sys.executable).parent / "temporal"


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL),
        data_converter=DATA_CONVERTER,
        ui=False,
        search_attributes=search_attributes.ALL,  # as `llmisvc-router register-search-attributes` adds
        dev_server_log_level="error",
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest_asyncio.fixture(loop_scope="session")
async def temporal(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """The test's namespaces on the session's plane; a test parametrized over ``cluster`` (``indirect``,
    :data:`tests.integration.harness.BOTH_RBAC_SHAPES`) names the plane's variant: ``default`` (the
    cluster-wide RBAC of ``deploy/``) or ``namespaced-rbac`` (``deploy/overlays/namespaced``). Each is
    started on first use; the session's end (or ``atexit``) stops them."""
    variant = getattr(request, "param", "default")
    plane: Plane = request.getfixturevalue("plane") if variant == "default" else shared_plane(variant)
    with test_cluster(plane) as one:
        yield one
