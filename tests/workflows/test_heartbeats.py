"""Heartbeats (``activities.heartbeats``) through a real worker on the test server: thousands of attempts
enter and leave ``heartbeating()`` at once and none gets stuck, each block is heartbeated, an attempt that
waits inside one past its heartbeat timeout lives on, and a block starts no thread.

The worker is a plain one with the production :class:`~activities.heartbeats.HeartbeatScheduler` and the
test's own activities and workflows; outside it sits an interceptor that counts the heartbeats the
scheduler sends, per attempt."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, TimeoutError, TimeoutType
from temporalio.worker import (
    ActivityInboundInterceptor,
    ActivityOutboundInterceptor,
    Interceptor,
    UnsandboxedWorkflowRunner,
    Worker,
)

from activities import heartbeats

INTERVAL = 0.2
#: The long waits' heartbeat timeout, the production one: Temporal sends a heartbeat every 80 % of it,
#: which leaves 1 s for a loaded machine to deliver it.
HEARTBEAT_TIMEOUT = 5.0
#: Well past the heartbeat timeout: the heartbeat at once alone would not keep such an attempt alive.
LONG_WAIT = 8.0
#: The short attempts' heartbeat timeout: they need only finish. On a busy machine thousands of them
#: take seconds to get through, and the timeout counts from each one's start.
SHORT_HEARTBEAT_TIMEOUT = 30.0
WORKFLOWS = 10
PER_WORKFLOW = 200  # 2000 attempts; fewer per workflow keeps each history update small
THREADS = 32

#: Heartbeats sent by the scheduler, by (workflow id, activity id); written on the worker's loop only.
sent: Counter[tuple[str, str]] = Counter()


class CountHeartbeats(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Counting(next)


class _Counting(ActivityInboundInterceptor):
    def init(self, outbound: ActivityOutboundInterceptor) -> None:
        super().init(_CountingOutbound(outbound))  # the scheduler, further in, gets this outbound


class _CountingOutbound(ActivityOutboundInterceptor):
    def heartbeat(self, *details: Any) -> None:
        info = self.info()
        sent[(info.workflow_id or "", info.activity_id)] += 1
        super().heartbeat(*details)


@activity.defn
def enter_and_leave(number: float) -> float:
    with heartbeats.heartbeating():
        return number


@activity.defn
def wait_heartbeating(seconds: float) -> float:
    with heartbeats.heartbeating():
        time.sleep(seconds)  # a request waiting on the API server: this thread sends nothing
    return seconds


@activity.defn
def wait_silently(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


class Gate:
    """Holds activities until released, and tells the test how many are waiting."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self._lock = threading.Lock()
        self.waiting = 0

    def wait(self) -> None:
        with self._lock:
            self.waiting += 1
        assert self.open.wait(30), "the test never opened the gate"


gate = Gate()


@activity.defn
def wait_at_gate_heartbeating(_: float) -> None:
    with heartbeats.heartbeating():
        gate.wait()


@activity.defn
def wait_at_gate(_: float) -> None:
    gate.wait()


@dataclass(frozen=True)
class FanOutInput:
    activity: str  # a key of ACTIVITIES: a workflow's input carries data, not functions
    count: int
    argument: float = 0
    heartbeat_timeout: float = SHORT_HEARTBEAT_TIMEOUT


ACTIVITIES: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (enter_and_leave, wait_heartbeating, wait_silently, wait_at_gate, wait_at_gate_heartbeating)
}


@workflow.defn
class FanOut:
    """``count`` attempts of one activity at once, none retried: a missed heartbeat fails the workflow."""

    @workflow.run
    async def run(self, input: FanOutInput) -> int:
        fn = ACTIVITIES[input.activity]
        started = [
            workflow.execute_activity(
                fn,
                input.argument,
                start_to_close_timeout=timedelta(seconds=60),
                heartbeat_timeout=timedelta(seconds=input.heartbeat_timeout),
                retry_policy=RetryPolicy(maximum_attempts=1),
            )
            for _ in range(input.count)
        ]
        await asyncio.gather(*started)
        return len(started)


@asynccontextmanager
async def running_worker(client: Client) -> AsyncIterator[str]:
    task_queue = f"heartbeats-{uuid.uuid4().hex[:8]}"
    with ThreadPoolExecutor(max_workers=THREADS) as executor:
        async with Worker(
            client,
            task_queue=task_queue,
            workflows=[FanOut],
            activities=list(ACTIVITIES.values()),
            activity_executor=executor,
            max_concurrent_activities=THREADS,
            interceptors=[CountHeartbeats(), heartbeats.HeartbeatScheduler(INTERVAL)],
            workflow_runner=UnsandboxedWorkflowRunner(),
        ):
            yield task_queue


async def fan_out(client: Client, task_queue: str, input: FanOutInput) -> str:
    workflow_id = f"fan-out-{input.activity}-{uuid.uuid4().hex[:8]}"
    await client.execute_workflow(FanOut.run, input, id=workflow_id, task_queue=task_queue)
    return workflow_id


def causes(error: BaseException) -> str:
    """The chain of a workflow's failure: its activity's error, then the timeout or exception within."""
    chain: list[str] = []
    cause: BaseException | None = error
    while cause is not None:
        chain.append(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__ or getattr(cause, "cause", None)
    return " <- ".join(chain)


def heartbeats_of(workflow_id: str) -> list[int]:
    return [count for (wf_id, _), count in sent.items() if wf_id == workflow_id]


async def test_thousands_of_heartbeating_attempts_all_finish_and_each_block_is_heartbeated(
    client: Client,
) -> None:
    async with running_worker(client) as task_queue:
        began = time.monotonic()
        quick = [
            fan_out(client, task_queue, FanOutInput("enter_and_leave", PER_WORKFLOW))
            for _ in range(WORKFLOWS)
        ]
        slow = fan_out(client, task_queue, FanOutInput("wait_heartbeating", 8, LONG_WAIT, HEARTBEAT_TIMEOUT))
        try:
            *quick_ids, slow_id = await asyncio.wait_for(asyncio.gather(*quick, slow), timeout=60)
        except WorkflowFailureError as failed:
            pytest.fail(causes(failed))
        took = time.monotonic() - began
    per_block = [heartbeats_of(workflow_id) for workflow_id in quick_ids]
    assert [len(counts) for counts in per_block] == [PER_WORKFLOW] * WORKFLOWS
    assert min(min(counts) for counts in per_block) >= 1  # the one at once, though the block was short
    # Every INTERVAL while it waited; the loop is busy with the 2000 others, so allow half.
    assert min(heartbeats_of(slow_id)) >= LONG_WAIT / INTERVAL / 2
    print(f"{WORKFLOWS * PER_WORKFLOW} short heartbeating attempts and 8 long ones in {took:.1f}s")


async def test_an_attempt_waiting_past_its_heartbeat_timeout_outside_the_block_times_out(
    client: Client,
) -> None:
    """What the test above relies on: the test server does enforce the heartbeat timeout."""
    async with running_worker(client) as task_queue:
        with pytest.raises(WorkflowFailureError) as failed:
            wait = FanOutInput("wait_silently", 1, HEARTBEAT_TIMEOUT + 1, HEARTBEAT_TIMEOUT)
            await fan_out(client, task_queue, wait)
    assert isinstance(failed.value.cause, ActivityError)
    timeout = failed.value.cause.cause
    assert isinstance(timeout, TimeoutError) and timeout.type == TimeoutType.HEARTBEAT


async def threads_while_waiting(client: Client, task_queue: str, activity_name: str, count: int) -> int:
    """How many threads the process has while ``count`` attempts of ``activity_name`` wait at the gate."""
    gate.open.clear()
    gate.waiting = 0
    run = asyncio.ensure_future(fan_out(client, task_queue, FanOutInput(activity_name, count)))
    try:
        deadline = time.monotonic() + 30
        while gate.waiting < count:
            assert time.monotonic() < deadline, f"{gate.waiting} of {count} attempts reached the gate"
            await asyncio.sleep(0.02)
        await asyncio.sleep(3 * INTERVAL)  # the blocks' heartbeats have begun
        return threading.active_count()
    finally:
        gate.open.set()
        await run


async def test_attempts_inside_the_block_run_no_thread_beside_their_own(client: Client) -> None:
    count = 32
    async with running_worker(client) as task_queue:
        # First without the block: the executor then has its threads, which the second run reuses.
        without = await threads_while_waiting(client, task_queue, "wait_at_gate", count)
        sent.clear()
        inside = await threads_while_waiting(client, task_queue, "wait_at_gate_heartbeating", count)
    assert len(sent) == count  # the blocks were heartbeated meanwhile
    assert inside == without
