"""A cancelled sync activity's body runs to its end before the cancellation is raised
(``activities.cancel_shield``), through a real worker on the test server.

The SDK raises a cancellation asynchronously inside the activity's thread; landing inside a lock's
``__enter__`` it leaves the lock held for good (urllib3's connection pool, shared by every activity thread:
the whole worker then waits). With :class:`~activities.cancel_shield.ShieldCancellation` the body is
never interrupted and the attempt still ends cancelled; without it (the control) the same body is cut
short, which is what makes the first test able to fail."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, CancelledError
from temporalio.worker import Interceptor, UnsandboxedWorkflowRunner, Worker

from activities import heartbeats
from activities.cancel_shield import ShieldCancellation

STEPS = 40
STEP = 0.1  # seconds: the body takes 4 s; the workflow cancels it after 0.5 s, the next heartbeat tells it
HEARTBEAT_TIMEOUT = timedelta(seconds=1)  # Temporal passes on one heartbeat per 0.8 s


class Progress:
    def __init__(self) -> None:
        self.steps = 0
        self.started = threading.Event()

    def reset(self) -> None:
        self.steps = 0
        self.started.clear()


progress = Progress()


@activity.defn
def slow_steps() -> int:
    """Steps a lock-guarded counter, heartbeating (so that the cancellation reaches the worker)."""
    lock = threading.Lock()
    with heartbeats.heartbeating():
        progress.started.set()
        for _ in range(STEPS):
            with lock:
                progress.steps += 1
            time.sleep(STEP)
    return progress.steps


@workflow.defn
class CancelMidway:
    @workflow.run
    async def run(self) -> None:
        handle = workflow.start_activity(
            slow_steps,
            start_to_close_timeout=timedelta(seconds=30),
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=RetryPolicy(maximum_attempts=1),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        await workflow.sleep(0.5)
        handle.cancel()
        await handle


async def run_cancelled(client: Client, interceptors: list[Interceptor]) -> WorkflowFailureError:
    progress.reset()
    task_queue = f"cancel-shield-{uuid.uuid4().hex[:8]}"
    with ThreadPoolExecutor(max_workers=4) as executor:
        async with Worker(
            client,
            task_queue=task_queue,
            workflows=[CancelMidway],
            activities=[slow_steps],
            activity_executor=executor,
            interceptors=[*interceptors, heartbeats.HeartbeatScheduler(0.1)],
            workflow_runner=UnsandboxedWorkflowRunner(),
        ):
            with pytest.raises(WorkflowFailureError) as failure:
                await client.execute_workflow(
                    CancelMidway.run, id=f"cancel-{uuid.uuid4().hex[:8]}", task_queue=task_queue
                )
    return failure.value


async def test_a_cancelled_attempt_runs_its_body_to_the_end_then_ends_cancelled(client: Client) -> None:
    failure = await run_cancelled(client, [ShieldCancellation()])
    assert progress.steps == STEPS, f"the body was interrupted after {progress.steps} of {STEPS} steps"
    assert isinstance(failure.cause, ActivityError)
    assert isinstance(failure.cause.cause, CancelledError), failure.cause.cause


async def test_control_without_the_shield_the_cancellation_cuts_the_body_short(client: Client) -> None:
    failure = await run_cancelled(client, [])
    assert progress.steps < STEPS, "the SDK no longer raises the cancellation inside the thread"
    assert isinstance(failure.cause, ActivityError)
