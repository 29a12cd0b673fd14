"""Gateway API and the InferencePool CRDs are not installed: the service reports the unmet precondition and
the orchestrator (worker and watcher) waits without a hot loop; installing the CRDs brings it back.

CRDs are cluster-wide: the test runs on the session's private plane (``tests.private_plane``) with KServe's
CRDs alone (the shared planes have them all)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from temporalio.service import RPCError

from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE
from tests.cluster import Cluster
from tests.integration import world
from tests.integration.harness import PRODUCT_AGENT, WATCHER_AGENT, WORKER_AGENT, Stack, running_stack, until
from tests.private_plane import private_cluster
from workflows.models import WorkflowState

pytestmark = pytest.mark.asyncio(loop_scope="session")

NAME = "opt"
WINDOW = 30.0
#: In 30 s: two or three passes (the first, the one the status write itself triggers, the capped re-check
#: after 10 s and 20 s), each about a dozen requests, and the watcher polling the four kinds that are not
#: served with a backoff doubling from 0.5 s (about seven lists each). A hot loop makes thousands.
MAX_REQUESTS = 100
MAX_PASSES = 4


@pytest.fixture
def bare_cluster() -> Iterator[Cluster]:
    """KServe's CRDs alone: Gateway API and the InferencePools are not installed."""
    with private_cluster("llmisvc") as cluster:
        yield cluster


async def test_missing_crds_are_reported_without_a_hot_loop_and_installing_them_recovers(
    temporal, bare_cluster
):
    async with running_stack(temporal, bare_cluster, watcher=True) as stack:
        await stack.create_service(NAME)
        handle = stack.handle(NAME)

        async def first_pass() -> WorkflowState | None:
            try:
                state = await stack.state(handle)
            except RPCError:
                return None  # the watcher has not started the workflow yet
            return state if state.pass_count >= 1 else None

        await until(first_pass, "the watcher to start the workflow and its first pass")
        conditions = await stack.conditions(NAME)
        routes = conditions["HTTPRoutesReady"]
        assert (routes["status"], routes["reason"]) == ("False", "GatewayPreconditionNotMet")
        assert routes["message"] == (
            "required CRDs are not installed: httproutes.gateway.networking.k8s.io/v1, "
            "gateways.gateway.networking.k8s.io/v1, gatewayclasses.gateway.networking.k8s.io/v1, "
            "inferencepools.inference.networking.k8s.io/v1 or "
            "inferencepools.inference.networking.x-k8s.io/v1alpha2: precondition not met"
        )
        assert conditions["RouterReady"]["reason"] == "GatewayPreconditionNotMet"

        stack.cluster.counter.reset()
        passes_before = (await stack.state(handle)).pass_count
        started = time.monotonic()
        await asyncio.sleep(WINDOW)
        requests = stack.product_requests()
        passes = (await stack.state(handle)).pass_count - passes_before
        breakdown = stack.cluster.counter.snapshot()

        assert requests <= MAX_REQUESTS, breakdown
        assert passes <= MAX_PASSES, passes
        assert stack.cluster.counter.writes(user_agent=PRODUCT_AGENT) <= 1, breakdown  # status unchanged
        assert stack.cluster.counter.count(user_agent=WORKER_AGENT) > 0  # it did re-check
        assert stack.cluster.counter.count(user_agent=WATCHER_AGENT) > 0  # and did watch for the CRDs
        assert time.monotonic() - started >= WINDOW

        await asyncio.to_thread(stack.cluster.control.install_crds, "all")
        await asyncio.to_thread(seed_ingress, stack)

        async def recovered() -> WorkflowState | None:
            state = await stack.state(handle)
            reconciled = state.last is not None and state.last.outcome == "reconciled"
            return state if reconciled and not state.pending_reasons else None

        await until(recovered, "a pass that reconciles once the CRDs are installed", timeout=15)
        assert await stack.get(HTTPROUTE, naming.route_name(NAME)) is not None
        routes = (await stack.conditions(NAME))["HTTPRoutesReady"]
        assert routes["reason"] not in ("GatewayPreconditionNotMet", "RefsInvalid"), routes


def seed_ingress(stack: Stack) -> None:
    for type_, body in world.ingress(stack.kserve_namespace):
        stack.kube.create(type_, body)
