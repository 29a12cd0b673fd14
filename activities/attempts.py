"""One attempt of a regular activity: no request it cannot finish in time (its heartbeats:
``activities.heartbeats``).

Sync activities cannot be interrupted, so an attempt that outlived its start-to-close timeout would go
on writing while Temporal runs the next attempt. :meth:`Attempt.before_request` prevents that overlap:
it ends the attempt (retryably) when the timeout is near enough that one more request might outlast it,
or when Temporal has cancelled the attempt (a heartbeat told it so).
"""

from __future__ import annotations

import time

from temporalio import activity
from temporalio.exceptions import CancelledError

from activities import errors
from activities.errors import ErrorType


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
            raise errors.transient(
                ErrorType.OUT_OF_TIME,
                f"{left:.1f}s left of the attempt, less than one request may take "
                f"({self.request_budget:.0f}s): ending it so the next attempt does not overlap it",
            )
