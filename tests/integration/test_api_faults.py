"""API failures injected by the proxy in front of kube-apiserver: transient ones (503, 429 with Retry-After,
a 409 lost race) are retried by Temporal and the pass converges, and the retries show in the history; a
422 on the HTTPRoute write is permanent: reported in the status, never retried in a loop."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, POOL_V1, POOL_V1ALPHA2, SERVICE
from tests.history import ActivityRun, activity_runs
from tests.integration.harness import WORKER_AGENT, running_stack

pytestmark = pytest.mark.asyncio(loop_scope="session")

NAME = "opt"


@dataclass(frozen=True)
class Fault:
    rule: dict[str, Any]
    activity: str  # the activity that must have retried
    min_delay: float = 0.0  # seconds between scheduling it and its last attempt starting


TRANSIENT = {
    # The router's own Service is not made yet, so no watch covers it: fetch_gateways reads it live. A
    # request is tried 3 times inside an attempt (llmisvc_kube.client), so 3 failures make Temporal retry.
    "503-reading-outside-the-cache": Fault(
        {"verb": "get", "resource": "services", "status": 503, "times": 3}, "fetch_gateways"
    ),
    "503-creating-the-route": Fault(
        {"verb": "create", "resource": "httproutes", "status": 503, "times": 3}, "reconcile_routes"
    ),
    "503-creating-a-pool": Fault(
        {
            "verb": "create",
            "resource": "inferencepools",
            "group": "inference.networking.k8s.io",
            "status": 503,
            "times": 3,
        },
        "reconcile_scheduler",
    ),
    "503-writing-the-status": Fault(
        {
            "verb": "update",
            "resource": "llminferenceservices",
            "subresource": "status",
            "status": 503,
            "times": 3,
        },
        "evaluate_conditions",
    ),
    # Retry-After (3 s) wins over the retry policy's first interval (1 s).
    "429-with-retry-after": Fault(
        {"verb": "create", "resource": "httproutes", "status": 429, "retry_after": 3},
        "reconcile_routes",
        min_delay=2.9,
    ),
}


def retried(runs: list[ActivityRun], name: str) -> ActivityRun:
    matching = [r for r in runs if r.name == name]
    assert matching, f"{name} never ran"
    return max(matching, key=lambda r: r.attempt)


@pytest.mark.parametrize("fault", TRANSIENT.values(), ids=TRANSIENT.keys())
async def test_transient_api_error_is_retried_and_the_pass_converges(temporal, cluster, fault):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        rule = stack.cluster.faults.inject(**{"times": 1, **fault.rule})
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)
        stack.cluster.faults.clear()

        assert rule.fired == rule.times
        assert state.last is not None and state.last.outcome == "reconciled", state.last
        for type_, name in (
            (HTTPROUTE, naming.route_name(NAME)),
            (POOL_V1, naming.pool_name(NAME)),
            (POOL_V1ALPHA2, naming.pool_name(NAME)),
            (SERVICE, naming.epp_service_name(NAME)),
        ):
            assert await stack.get(type_, name) is not None, f"{type_.kind} {name} missing"
        assert "RouterReady" in await stack.conditions(NAME)
        run = retried(await activity_runs(handle), fault.activity)
        assert run.attempt == 2, run
        assert (run.started - run.scheduled).total_seconds() >= fault.min_delay, run


async def test_status_conflict_is_retried_in_the_activity_on_the_latest_object(temporal, cluster):
    """Another writer updated the service between the read and the status write: read it again, merge
    again, write again (client-go's RetryOnConflict), without failing the activity attempt."""
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        status = {"verb": "update", "resource": "llminferenceservices", "subresource": "status"}
        rule = stack.cluster.faults.inject(**status, status=409, times=1)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert rule.fired == 1
        assert state.last is not None and state.last.status_written
        assert "RouterReady" in await stack.conditions(NAME)
        run = retried(await activity_runs(handle), "evaluate_conditions")
        assert run.attempt == 1
        puts = stack.cluster.counter.count(
            verb="update", resource="llminferenceservices", subresource="status", user_agent=WORKER_AGENT
        )
        assert puts == 2


async def test_conflicting_write_restarts_the_pass_from_fresh_reads(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        rule = stack.cluster.faults.inject(verb="create", resource="httproutes", status=409, times=1)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert rule.fired == 1
        assert state.last is not None and state.last.outcome == "reconciled"
        assert await stack.get(HTTPROUTE, naming.route_name(NAME)) is not None
        names = [r.name for r in await activity_runs(handle)]
        # One pass: read and plan, write, lose the race on the route; read and plan again, write the rest.
        assert names.count("fetch_gateways") == 2
        assert names.count("reconcile_routes") == 2
        assert stack.cluster.counter.count(verb="create", resource="httproutes", user_agent=WORKER_AGENT) == 2


async def test_one_failed_read_is_tried_again_inside_the_attempt(temporal, cluster):
    """A GET that fails fast is tried again at once (llmisvc_kube.api.REQUEST_RETRIES): the other reads
    of the attempt are kept and Temporal does not retry the activity."""
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        rule = stack.cluster.faults.inject(verb="get", resource="services", status=503, times=1)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert rule.fired == 1
        assert state.last is not None and state.last.outcome == "reconciled", state.last
        assert retried(await activity_runs(handle), "fetch_gateways").attempt == 1
        gets = stack.cluster.counter.records(verb="get", resource="services", user_agent=WORKER_AGENT)
        assert [r.code for r in gets][:2] == [503, 404]


async def test_write_stored_before_its_response_was_lost_is_not_made_twice(temporal, cluster):
    """The server stores the route, then answers 503: the create's second try inside the attempt is
    refused with 409 (the route exists), a lost race like any other: the live route is put in the cache
    and the pass plans again after the first restart pause (1 s), from reads that see the route as it
    should be, and writes nothing more."""
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        rule = stack.cluster.faults.inject(
            verb="create", resource="httproutes", status=503, commit=True, times=1
        )
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert rule.fired == 1
        assert state.last is not None and state.last.outcome == "reconciled", state.last
        names = [r.name for r in await activity_runs(handle)]
        assert names.count("fetch_gateways") == 2
        timers = [
            e for e in (await handle.fetch_history()).events if e.HasField("timer_started_event_attributes")
        ]
        summaries = [t.user_metadata.summary.data.decode() for t in timers]
        assert len(timers) == 2 and "resync" in summaries[-1], summaries
        route_writes = stack.cluster.counter.records(resource="httproutes", user_agent=WORKER_AGENT)
        assert [(r.verb, r.code) for r in route_writes if r.verb not in ("get", "list", "watch")] == [
            ("create", 503),
            ("create", 409),
        ]
        summary = await stack.reconcile_now(handle)
        assert summary.writes == 0  # the stored route is the one the pass wanted


async def test_rejected_route_write_is_reported_in_the_status_and_not_retried(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        refusal = 'HTTPRoute.gateway.networking.k8s.io "opt-kserve-route" is invalid: spec.rules[0]: Too many'
        stack.cluster.faults.inject(verb="create", resource="httproutes", status=422, message=refusal)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)
        await asyncio.sleep(3)  # long enough for a retry loop to show; the re-check comes after 10 s

        assert state.last is not None and state.last.outcome == "failed"
        routes = (await stack.conditions(NAME))["HTTPRoutesReady"]
        assert (routes["status"], routes["reason"]) == ("False", "HTTPRouteReconcileError")
        route = f"{stack.namespace}/{naming.route_name(NAME)}"
        assert routes["message"] == (
            f"Failed to reconcile HTTPRoute: failed to reconcile HTTPRoute {route}: "
            f"failed to create v1.HTTPRoute {route}: {refusal}"
        )
        assert (await stack.conditions(NAME))["RouterReady"]["reason"] == "HTTPRouteReconcileError"
        assert stack.cluster.counter.count(verb="create", resource="httproutes", user_agent=WORKER_AGENT) == 1
        runs = await activity_runs(handle)
        assert [r.attempt for r in runs if r.name == "reconcile_routes"] == [1]
        assert (await stack.state(handle)).pass_count == 1
        assert (
            await stack.get(POOL_V1, naming.pool_name(NAME)) is not None
        )  # the scheduler phase went through


async def test_a_write_slower_than_the_heartbeat_timeout_is_kept_alive_by_heartbeats(temporal, cluster):
    """The route's create takes 7 s, longer than the 5 s heartbeat timeout but within the 10 s read
    timeout: the attempt heartbeats meanwhile, so Temporal neither times it out nor runs a second one."""
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        rule = stack.cluster.faults.inject(verb="create", resource="httproutes", delay=7.0, times=1)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert rule.fired == 1
        assert state.last is not None and state.last.outcome == "reconciled", state.last
        assert [r.attempt for r in await activity_runs(handle) if r.name == "reconcile_routes"] == [1]
        assert stack.cluster.counter.count(verb="create", resource="httproutes", user_agent=WORKER_AGENT) == 1


async def test_one_failed_write_is_tried_again_inside_the_attempt(temporal, cluster):
    """A write that fails fast is tried again at once, as a read is: the create carries nothing a second
    try could harm (a route that landed is refused with 409), so Temporal does not retry the activity and
    the pass pays no retry backoff."""
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        rule = stack.cluster.faults.inject(verb="create", resource="httproutes", status=503, times=1)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert rule.fired == 1
        assert state.last is not None and state.last.outcome == "reconciled", state.last
        assert retried(await activity_runs(handle), "reconcile_routes").attempt == 1
        creates = stack.cluster.counter.records(verb="create", resource="httproutes", user_agent=WORKER_AGENT)
        assert [r.code for r in creates] == [503, 201]


async def test_a_cache_list_answered_429_with_retry_after_is_listed_again_after_that_pause_not_a_backoff(
    temporal, cluster
):
    """kube-apiserver answers a list ``429 storage is (re)initializing`` with ``Retry-After: 1`` while a
    kind's watch cache fills (a CRD just installed, an apiserver restarted): the cache lists again after
    the second the server asked for, each time, instead of a backoff doubling from 0.5 s (which made five
    such answers cost 15 s before the sixth list)."""
    rule = cluster.faults.inject(
        verb="list", resource="httproutes", user_agent=WORKER_AGENT, status=429, retry_after=1, times=5
    )
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert rule.fired == 5
        assert state.last is not None and state.last.outcome == "reconciled", state.last
        lists = stack.cluster.counter.records(verb="list", resource="httproutes", user_agent=WORKER_AGENT)
        assert [r.code for r in lists][:6] == [429] * 5 + [200]
        pauses = [later.time - earlier.time for earlier, later in itertools.pairwise(lists[:6])]
        assert all(0.9 <= pause <= 2.5 for pause in pauses), pauses
