"""Passes that do not end reconciled, on the time-skipping test server: the world is not ready (missing
CRDs, invalid references, a bad config, a refused read), writes that lose races, transient API errors and
writes the API server refuses. None of them may fail the workflow or turn into a hot loop.
"""

from __future__ import annotations

import asyncio
import itertools
from datetime import timedelta

import pytest
from temporalio.client import WorkflowExecutionStatus as Status

from activities import errors
from activities.errors import ErrorType
from llmisvc_core.httproute.collisions import MODEL_NAME_COLLISION
from llmisvc_core.models.kube import GATEWAY, GATEWAYCLASS, HTTPROUTE, LLMISVC, POOL_V1, POOL_V1ALPHA2
from llmisvc_kube.api import ApiError
from tests import history
from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster
from workflows.service_workflow import RECHECK_CAP, RECHECK_FIRST

pytestmark = pytest.mark.asyncio(loop_scope="session")

RESYNC = timedelta(seconds=600)


FORBIDDEN = ApiError(403, "llminferenceservices is forbidden: User cannot get resource")


def _not_reconciling_worlds() -> list[object]:
    return [
        pytest.param(
            lambda: FakeCluster(world.minimal_world(), served=[LLMISVC]),
            "precondition-not-met",
            id="precondition-not-met",
        ),
        pytest.param(
            lambda: FakeCluster([world.missing_gateway_reference(), world.gateway_class()]),
            "invalid-references",
            id="invalid-references",
        ),
        pytest.param(
            lambda: FakeCluster([*world.minimal_world(), world.bad_ingress_config()]),
            "failed",
            id="failed-pass",
        ),
        pytest.param(lambda: _failing_forever(FORBIDDEN), "error", id="activity-error"),
    ]


def _failing_forever(error: ApiError) -> FakeCluster:
    cluster = FakeCluster(world.minimal_world())
    cluster.fail("get", error, times=1_000, kind="LLMInferenceService")
    return cluster


def recheck_schedule(within: timedelta) -> list[timedelta]:
    """The re-check delays the workflow should use within ``within``: 10 s, 20 s, … capped at 5 min."""
    delays, total, delay = [], timedelta(), RECHECK_FIRST
    while total + min(delay, RECHECK_CAP) <= within:
        delays.append(min(delay, RECHECK_CAP))
        total += delays[-1]
        delay *= 2
    return delays


@pytest.mark.parametrize(("make_cluster", "outcome"), _not_reconciling_worlds())
async def test_pass_that_does_not_reconcile_is_rechecked_with_a_capped_growing_backoff(
    env, client, make_cluster, outcome
):
    simulated = timedelta(minutes=30)
    cluster = make_cluster()
    async with harness.running_service(client, cluster, resync_seconds=3600) as svc:
        await svc.passes(1)
        await env.sleep(simulated)
        state = await svc.state()
        runs = await history.activity_runs(svc.handle)
        timers = await harness.timers(svc.handle)

    expected = recheck_schedule(simulated)
    assert expected[:7] == [timedelta(seconds=s) for s in (10, 20, 40, 80, 160, 300, 300)]
    starts = [r.scheduled for r in harness.pass_starts(runs)]
    gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
    # Not a hot loop: one pass on start, then one per re-check, each gap at least its back-off.
    assert state.pass_count == len(starts) == 1 + len(expected)
    assert timers[: len(expected)] == expected
    assert all(gap >= delay for gap, delay in zip(gaps, expected, strict=True))
    assert state.last is not None and state.last.outcome == outcome
    assert state.recheck_attempt == len(starts)
    if outcome == "error":
        assert state.last_error == f"{ErrorType.REJECTED}: HTTP 403: {FORBIDDEN.message}"
        assert all(r.attempt == 1 for r in runs), "a permanent error is not retried by Temporal"
    else:
        assert state.last_error is None
        assert cluster.read(LLMISVC, world.NAMESPACE, world.NAME)["status"]["conditions"]


async def test_recheck_returns_to_the_resync_period_once_a_pass_reconciles(env, client):
    cluster = FakeCluster(world.minimal_world(), served=[LLMISVC])
    async with harness.running_service(client, cluster, resync_seconds=int(RESYNC.total_seconds())) as svc:
        await svc.passes(1)
        await env.sleep(timedelta(seconds=31))  # re-checks after 10 s and 20 s
        cluster.served_types |= {HTTPROUTE, GATEWAY, GATEWAYCLASS, POOL_V1, POOL_V1ALPHA2}
        await env.sleep(timedelta(seconds=40))  # the re-check after 40 s finds the CRDs installed
        state = await svc.passes(4)
        await env.sleep(RESYNC - timedelta(seconds=5))
        settled = await svc.state()
        timers = await harness.timers(svc.handle)

    assert state.last is not None and state.last.outcome == "reconciled"
    assert settled.pass_count == 4 and settled.recheck_attempt == 0
    assert timers == [timedelta(seconds=10), timedelta(seconds=20), timedelta(seconds=40), RESYNC]


# -- activity failures --------------------------------------------------------------------------------


async def test_write_conflict_restarts_the_pass_from_fetch_gateways_and_converges(env, client):
    cluster = FakeCluster(world.minimal_world())
    cluster.fail("create", ApiError(409, "httproutes opt-kserve-route already exists"), kind="HTTPRoute")
    async with harness.running_service(client, cluster) as svc:
        await env.sleep(timedelta(seconds=3))  # the restart waits 1 s before reading again
        state = await svc.passes(1)
        runs = await history.activity_runs(svc.handle)

    assert cluster.failed == ["create HTTPRoute: 409"]
    assert harness.names(runs) == [
        "fetch_gateways",
        "reconcile_scheduler",
        "reconcile_routes",  # lost the race
        "fetch_gateways",  # re-read, re-planned
        "reconcile_routes",
        "evaluate_conditions",
    ]
    assert [r.attempt for r in runs] == [1] * len(runs), "a conflict is not retried with stale writes"
    assert state.pass_count == 1 and state.last is not None and state.last.outcome == "reconciled"
    assert any(k.startswith(f"HTTPRoute {world.NAMESPACE}/{world.ROUTE}") for k in cluster.kinds())


async def test_writes_that_keep_conflicting_end_the_pass_which_is_rechecked_later(env, client):
    cluster = FakeCluster(world.minimal_world())
    cluster.fail(
        "create", ApiError(409, "httproutes opt-kserve-route already exists"), kind="HTTPRoute", times=1_000
    )
    async with harness.running_service(client, cluster) as svc:
        await env.sleep(timedelta(minutes=3))  # 1 + 2 + … + 60 s of restarts, then the 10 s re-check
        state = await svc.until(lambda s: s.pass_count >= 1, "the pass to give up")
        description = await svc.handle.describe()
        timers = await harness.timers(svc.handle)

    assert description.status == Status.RUNNING, "giving up on a pass does not fail the workflow"
    restarts = [timedelta(seconds=s) for s in (1, 2, 4, 8, 16, 32, 60)]
    assert timers[: len(restarts) + 1] == [*restarts, RECHECK_FIRST]
    assert state.last is not None and state.last.outcome == "error"
    assert state.last_error == "Conflicts: the writes of llm/opt kept conflicting with other writers"
    assert state.recheck_attempt == 1


@pytest.mark.parametrize(
    ("error", "failure_type", "skip"),
    [
        pytest.param(
            ApiError(503, "etcdserver: leader changed"),
            ErrorType.TRANSIENT,
            timedelta(seconds=5),
            id="unavailable",
        ),
        pytest.param(
            ApiError(0, "connection refused"),
            ErrorType.TRANSIENT,
            timedelta(seconds=5),
            id="connection-error",
        ),
        pytest.param(
            ApiError(429, "too many requests", retry_after=30),
            ErrorType.TOO_MANY_REQUESTS,
            timedelta(seconds=65),
            id="too-many-requests",
        ),
    ],
)
async def test_transient_api_error_is_retried_by_temporal_and_the_retries_are_visible(
    env, client, error, failure_type, skip
):
    cluster = FakeCluster(world.minimal_world())
    cluster.fail("get", error, kind="Gateway", times=2)  # read by fetch_gateways
    async with harness.running_service(client, cluster) as svc:
        await env.sleep(skip)
        state = await svc.passes(1)
        runs = await history.activity_runs(svc.handle)

    # fetch_gateways is a local activity: a retry after a long back-off is recorded as one more marker.
    fetches = [r for r in runs if r.name == "fetch_gateways"]
    fetch = max(fetches, key=lambda r: r.attempt)
    assert fetch.attempt == 3
    assert cluster.failed == [f"get Gateway: {error.status}"] * 2
    assert errors.as_activity_error(error).type == failure_type
    assert state.last is not None and state.last.outcome == "reconciled"
    if error.retry_after:
        # Temporal waited Retry-After before each attempt instead of its own 1 s, 2 s back-off.
        assert fetch.started - fetches[0].scheduled >= timedelta(seconds=2 * error.retry_after)


async def test_write_refused_with_a_4xx_is_replanned_with_rejected_and_the_status_written(client):
    cluster = FakeCluster(world.minimal_world())
    refusal = 'HTTPRoute.gateway.networking.k8s.io "opt-kserve-route" is invalid: spec.rules: Too many'
    cluster.fail("create", ApiError(422, refusal), kind="HTTPRoute")
    async with harness.running_service(client, cluster) as svc:
        state = await svc.passes(1)
        runs = await history.activity_runs(svc.handle)

    assert harness.names(runs) == [
        "fetch_gateways",
        "reconcile_scheduler",
        "reconcile_routes",
        "evaluate_conditions",  # re-planned with the refusal
    ]
    assert all(r.attempt == 1 for r in runs), "a refused write is not retried"
    stored = cluster.read(LLMISVC, world.NAMESPACE, world.NAME)
    assert stored is not None
    messages = " ".join(c.get("message", "") for c in stored["status"]["conditions"])
    assert "Too many" in messages
    assert state.last is not None and state.last.status_written
    assert not any(k.startswith("HTTPRoute") for k in cluster.kinds())


async def test_a_status_planned_before_the_spec_changed_is_planned_again_before_it_is_written(client):
    """``evaluate_conditions`` carries the generation its status was planned from: an attempt that runs
    after the spec changed (a retry after a workflow task timeout runs with its pass's old input) plans
    the status again from the live spec instead of writing the old spec's. Here the spec moves to a
    Gateway that does not exist while the pass's route write waits."""
    cluster = FakeCluster(world.minimal_world())
    held = cluster.hold("create", kind="HTTPRoute")
    async with harness.running_service(client, cluster) as svc:
        assert await asyncio.to_thread(held.reached.wait, harness.WAIT)
        renamed = world.missing_gateway_reference()
        stored = cluster.read(LLMISVC, world.NAMESPACE, world.NAME)
        assert stored is not None
        renamed["metadata"] = {**stored["metadata"], "generation": 2}
        cluster.put(renamed)
        cluster.release(held)
        state = await svc.passes(1)

    stored = cluster.read(LLMISVC, world.NAMESPACE, world.NAME)
    assert stored is not None
    conditions = {c["type"]: c for c in stored["status"]["conditions"]}
    assert "no-such-gateway" in conditions["GatewaysReady"].get("message", ""), conditions["GatewaysReady"]
    assert conditions["RouterReady"]["status"] == "False"
    assert state.last is not None and state.last.status_written


async def test_a_status_overtaken_by_a_newer_passes_status_is_planned_again_not_written_over_it(client):
    """``evaluate_conditions`` carries the router's part of the stored status its status was planned from
    (``status_merge.router_basis``): an attempt that finds another there (a newer pass wrote it while this
    one, retried after a workflow task timeout, waited) plans again from the world as it is instead of
    writing its older word, nor records its older Events. Seen at 1,004 services (docs/performance.md):
    a first pass's late attempt wrote ``HTTPRoutesNotReady`` over a Ready status. Here the Gateway and
    the service that shared the model name go, and a newer word is written, while the pass's route write
    waits; the spec (its generation) does not change."""
    cluster = FakeCluster([*world.minimal_world(), world.service("twin")])  # same model name
    held = cluster.hold("create", kind="HTTPRoute")
    async with harness.running_service(client, cluster) as svc:
        assert await asyncio.to_thread(held.reached.wait, harness.WAIT)
        cluster.remove(GATEWAY, "kserve", "kserve-ingress-gateway")
        cluster.remove(LLMISVC, world.NAMESPACE, "twin")
        stored = cluster.read(LLMISVC, world.NAMESPACE, world.NAME)
        assert stored is not None
        newer = {"type": "GatewaysReady", "status": "False", "reason": "NewerPass"}
        cluster.put({**stored, "status": {"conditions": [newer]}})
        cluster.release(held)
        state = await svc.passes(1)

    stored = cluster.read(LLMISVC, world.NAMESPACE, world.NAME)
    assert stored is not None
    conditions = {c["type"]: c for c in stored["status"]["conditions"]}
    assert conditions["RouterReady"]["reason"] == "RefsInvalid", conditions["RouterReady"]
    assert "kserve/kserve-ingress-gateway" in conditions["RouterReady"]["message"]
    assert state.last is not None and state.last.status_written
    assert state.last.outcome == "invalid-references"
    reasons = [e["reason"] for e in cluster.events_about(world.NAMESPACE, world.NAME)]
    assert MODEL_NAME_COLLISION not in reasons, reasons  # the overtaken plan's Warning
