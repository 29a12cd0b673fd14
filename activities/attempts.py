"""One attempt of a regular activity: heartbeats while it runs, and no request it cannot finish in time.

A worker that dies mid-activity is noticed by the heartbeat timeout (a few seconds) instead of the
attempt's start-to-close timeout. The heartbeats come from a thread beside the activity's own, so a
request that waits on a slow API server does not stop them; they stop when the worker process does,
which is what they are there to tell. Temporal throttles them to one per 80 % of the heartbeat timeout.

Sync activities cannot be interrupted, so an attempt that outlived its start-to-close timeout would go
on writing while Temporal runs the next attempt. :meth:`Attempt.before_request` prevents that overlap:
it ends the attempt (retryably) when the timeout is near enough that one more request might outlast it,
or when Temporal has cancelled the attempt (a heartbeat told it so).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from temporalio import activity
from temporalio.exceptions import ApplicationError, CancelledError

#: Seconds between heartbeats. Far below the heartbeat timeout (workflows.service_workflow).
HEARTBEAT_INTERVAL = 1.0
OUT_OF_TIME = "AttemptOutOfTime"


class Attempt:
    """The running attempt's clock: started now, bounded by its start-to-close timeout."""

    def __init__(self, request_budget: float) -> None:
        self.started = time.monotonic()
        self.limit: float | None = None
        self.number = 1
        self.request_budget = request_budget  # the longest one request can take (connect + read)
        if activity.in_activity():  # called as a plain function (benchmarks, the RBAC test): no limits
            info = activity.info()
            timeout = info.start_to_close_timeout or info.schedule_to_close_timeout
            self.limit = timeout.total_seconds() if timeout is not None else None
            self.number = info.attempt

    @property
    def is_retry(self) -> bool:
        return self.number > 1

    def before_request(self) -> None:
        """Stop here if the attempt was cancelled, or if a request started now could outlast it."""
        if activity.in_activity() and activity.is_cancelled():
            raise CancelledError("the attempt was cancelled (timed out, or its worker lost it)")
        if self.limit is None:
            return
        left = self.limit - (time.monotonic() - self.started)
        if left < self.request_budget:
            raise ApplicationError(
                f"{left:.1f}s left of the attempt, less than one request may take "
                f"({self.request_budget:.0f}s): ending it so the next attempt does not overlap it",
                type=OUT_OF_TIME,
            )


@contextmanager
def heartbeating(interval: float = HEARTBEAT_INTERVAL) -> Iterator[None]:
    """Heartbeat every ``interval`` seconds from a thread of its own until the block ends (outside an
    activity, as when a benchmark calls the activity's method directly: nothing)."""
    if not activity.in_activity():
        yield
        return
    done = threading.Event()
    context = contextvars.copy_context()  # the activity's context: activity.heartbeat() needs it

    def beat() -> None:
        while not done.wait(interval):
            try:
                context.run(activity.heartbeat)
            except Exception:  # the activity finishing meanwhile is not this thread's concern
                return

    activity.heartbeat()  # at once: a heartbeat timeout counts from the attempt's start
    thread = threading.Thread(target=beat, name=f"heartbeat-{activity.info().activity_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()  # the thread ends at its next wake-up; not waited for, the result need not wait
