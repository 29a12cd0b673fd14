"""The timeout chain, read from the objects the worker really uses (docs/operations.md, *Timeouts*): one
request fits inside an activity attempt, the client does not retry behind Temporal's back, heartbeats
come often enough for their timeout, and the local activities, which cannot heartbeat, are short; and
what an attempt does with them (activities.attempts), run in Temporal's ActivityEnvironment. The
heartbeats themselves are sent through a real worker: tests/integration/test_heartbeats.py."""

from __future__ import annotations

import dataclasses
import inspect
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import FixedSizeSlotSupplier
from urllib3.util import Retry

from activities import attempts, cancel_shield, heartbeats, router_activities
from activities.errors import ErrorType
from activities.router_activities import RouterActivities
from llmisvc_kube import api
from llmisvc_kube.client import load_api_client
from llmisvc_runtime.settings import WorkerSizing
from tests.builders.kube import UNREACHABLE_KUBECONFIG as KUBECONFIG
from tests.workflows import world
from tests.workflows.fake_cluster import FakeCluster
from worker import factory
from worker.slots import InProgressFirst
from workflows import activity_options as wf


def seconds(value: timedelta | None) -> float:
    assert value is not None
    return value.total_seconds()


def test_one_request_with_its_read_retries_fits_well_inside_an_activity_attempt() -> None:
    connect, read = api.REQUEST_TIMEOUT
    assert (connect, read) == (3.0, 10.0)
    worst_read = connect + read + api.REQUEST_RETRIES * (api.FAST_FAILURE + api.READ_PAUSE_CAP)
    assert api.REQUEST_BUDGET == worst_read == 17.0
    assert max(api.READ_BACKOFF) <= api.READ_PAUSE_CAP
    attempt = seconds(wf.ACTIVITY_OPTIONS.get("start_to_close_timeout"))
    assert attempt == 30.0
    assert attempt > api.REQUEST_BUDGET


def test_the_kubernetes_client_does_not_retry_requests_itself(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    api_client = load_api_client(str(kubeconfig))
    try:
        assert api_client.configuration.retries is False
        retries = Retry.from_int(api_client.rest_client.pool_manager.connection_pool_kw["retries"])
        assert retries.total is False  # no retry of any kind: the first error is raised
    finally:
        api_client.close()  # type: ignore[no-untyped-call]


def test_regular_activities_heartbeat_well_within_a_heartbeat_timeout_of_a_few_seconds() -> None:
    heartbeat = seconds(wf.ACTIVITY_OPTIONS.get("heartbeat_timeout"))
    assert heartbeat == 5.0
    assert heartbeat >= heartbeats.HEARTBEAT_INTERVAL * 3
    assert heartbeat < seconds(wf.ACTIVITY_OPTIONS.get("start_to_close_timeout"))


def test_local_activities_which_cannot_heartbeat_are_short() -> None:
    attempt = seconds(wf.LOCAL_OPTIONS.get("start_to_close_timeout"))
    total = seconds(wf.LOCAL_OPTIONS.get("schedule_to_close_timeout"))
    assert (attempt, total) == (30.0, 60.0)
    # fetch_gateways waits for a cold cache, or for a late watch and then reads live: either fits.
    assert attempt > router_activities.SYNC_TIMEOUT
    assert attempt > router_activities.FRESHNESS_TIMEOUT + api.REQUEST_BUDGET
    assert "heartbeat_timeout" not in wf.LOCAL_OPTIONS


def test_write_retries_stop_within_the_activity_deadline() -> None:
    policy = wf.ACTIVITY_OPTIONS.get("retry_policy")
    assert policy is not None and policy.maximum_interval is not None
    assert seconds(policy.maximum_interval) < seconds(wf.ACTIVITY_OPTIONS.get("schedule_to_close_timeout"))


def activity_env(attempt: int = 1, start_to_close: float = 30.0) -> ActivityEnvironment:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(
        env.info, attempt=attempt, start_to_close_timeout=timedelta(seconds=start_to_close)
    )
    return env


def test_an_attempt_starts_no_request_that_could_outlast_it() -> None:
    def next_request() -> None:
        attempts.Attempt(api.REQUEST_BUDGET).before_request()

    activity_env(start_to_close=30.0).run(next_request)  # 30 s left: room for one request
    with pytest.raises(ApplicationError) as ended:
        activity_env(start_to_close=api.REQUEST_BUDGET - 1).run(next_request)
    assert ended.value.type == ErrorType.OUT_OF_TIME and not ended.value.non_retryable


def test_a_cancelled_attempt_makes_no_further_request() -> None:
    env = activity_env()

    def cancelled_then_request() -> None:
        env.cancel()
        attempts.Attempt(api.REQUEST_BUDGET).before_request()

    with pytest.raises(CancelledError):
        env.run(cancelled_then_request)


def test_only_a_second_attempt_is_a_retry() -> None:
    def is_retry() -> bool:
        return attempts.Attempt(api.REQUEST_BUDGET).is_retry

    assert (activity_env(attempt=1).run(is_retry), activity_env(attempt=2).run(is_retry)) == (False, True)


def test_heartbeating_outside_a_worker_with_the_heartbeat_scheduler_says_how_to_build_one() -> None:
    """The ActivityEnvironment runs no interceptors, so no loop would send the heartbeats: a silent block
    would let the activity die of its heartbeat timeout later, with nothing pointing here."""
    beats: list[tuple[object, ...]] = []
    env = activity_env()
    env.on_heartbeat = lambda *details: beats.append(details)

    def heartbeating_request() -> None:
        with heartbeats.heartbeating():
            pass

    with pytest.raises(RuntimeError, match=r"HeartbeatScheduler.*worker\.factory\.build_worker"):
        env.run(heartbeating_request)
    assert beats == []


def test_the_production_worker_carries_the_cancel_shield_the_heartbeat_scheduler_and_its_slots(
    client: Client,
) -> None:
    cluster = FakeCluster()
    with ThreadPoolExecutor(max_workers=6) as executor:
        built = factory.build_worker(
            client,
            "heartbeat-scheduler",
            RouterActivities(cluster, cluster, world.ENV),
            executor,
            WorkerSizing(activity_threads=3),
        )
    config = built.config()
    assert [type(i) for i in config["interceptors"]] == [
        cancel_shield.ShieldCancellation,
        heartbeats.HeartbeatScheduler,
    ]
    tuner = config["tuner"]
    assert tuner is not None
    local = tuner._get_local_activity_task_slot_supplier()
    assert (tuner._get_activities_max(), local) == (3, FixedSizeSlotSupplier(3))
    assert isinstance(tuner._get_workflow_task_slot_supplier(), InProgressFirst)


def test_a_transient_failure_is_retried_within_a_fraction_of_a_second() -> None:
    """One injected 500 cost a full second at the old 1 s first interval (chaos api_faults_10)."""
    assert seconds(wf.ACTIVITY_RETRY.initial_interval) <= 0.2
    assert seconds(wf.ACTIVITY_RETRY.maximum_interval) == 60.0
    assert wf.ACTIVITY_RETRY.backoff_coefficient == 2.0


def test_a_killed_workers_sticky_tasks_reach_another_worker_within_a_few_seconds() -> None:
    """Temporal's default sticky schedule-to-start (10 s) made every cached workflow of a SIGKILLed worker
    wait that long; the worker sets a shorter one, well under the suite's 15 s recovery bound."""
    assert seconds(factory.STICKY_QUEUE_TIMEOUT) == 3.0
    assert "sticky_queue_schedule_to_start_timeout=STICKY_QUEUE_TIMEOUT" in inspect.getsource(
        factory.build_worker
    )
