"""Heartbeats of regular activity attempts, sent from the worker's event loop so that no activity thread
ever waits for them.

A worker that dies mid-activity is noticed by the heartbeat timeout (a few seconds) instead of the
attempt's start-to-close timeout. The heartbeats must go on while the activity's thread waits on a slow
API server, so that thread cannot send them. A thread per attempt used to: starting one makes the
starting thread wait until the new thread runs (``Thread.start``), and a suite was seen hanging there.

Now each worker carries a :class:`HeartbeatScheduler` among its interceptors (``worker.factory``). It
registers every attempt of the worker, keyed by its task token, with the heartbeat function the SDK gave
that attempt; inside a :func:`heartbeating` block the worker's event loop calls it at once and then every
``interval`` on a timer of the attempt's own. Entering and leaving the block are a dict look-up and a
counter under a lock and a ``call_soon_threadsafe``: nothing there waits for another thread. The
heartbeats stop when the worker's loop does, which is what they are there to tell. Temporal throttles
them to one per 80 % of the heartbeat timeout.

Why not ``activity.heartbeat()`` on the loop: for a sync activity the SDK wraps it to block its caller
until the worker's loop has taken the heartbeat, which on the loop itself would wait for itself. The
heartbeat of the attempt's outbound interceptor is what that wrapper ends in: a call made on the loop
that only schedules the sending.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ActivityOutboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

#: Seconds between heartbeats. Far below the heartbeat timeout (workflows.service_workflow).
HEARTBEAT_INTERVAL = 1.0


@dataclass
class _Attempt:
    """One running attempt, as its worker's loop heartbeats it."""

    loop: asyncio.AbstractEventLoop
    heartbeat: Callable[[], None]  # the SDK's, for this attempt: to be called on ``loop`` only
    context: contextvars.Context  # the attempt's, on the loop: the SDK logs the sending with its details
    interval: float
    blocks: int = 0  # heartbeating() blocks entered and not yet left; under _lock (activity threads)
    # Touched on ``loop`` only:
    timer: asyncio.TimerHandle | None = None  # the next heartbeat
    ended: bool = False

    def start(self) -> None:
        """On entry to a block: a heartbeat at once (sent even if the block is already over: it was
        entered), and the timer for the next ones unless it already runs."""
        if self.ended:
            return
        if self.timer is None:
            self.timer = self.loop.call_later(self.interval, self._tick)
        self._send()

    def end(self) -> None:
        """When the attempt's ``execute_activity`` returns."""
        self.ended = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _tick(self) -> None:
        with _lock:
            beating = self.blocks > 0
        self.timer = self.loop.call_later(self.interval, self._tick) if beating else None
        if beating:
            self._send()

    def _send(self) -> None:
        # The timer is set first: should a heartbeat raise, the loop logs it and the next one still comes.
        self.context.run(self.heartbeat)


#: The running attempts of every worker of the process, by task token. The loops add and remove them; the
#: activity threads only count the blocks they are in.
_attempts: dict[bytes, _Attempt] = {}
_lock = threading.Lock()


class HeartbeatScheduler(Interceptor):
    """The worker interceptor that lets the worker's activities use :func:`heartbeating`: it registers
    each attempt while it runs."""

    def __init__(self, interval: float = HEARTBEAT_INTERVAL) -> None:
        self.interval = interval

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Registered(next, self.interval)


class _Registered(ActivityInboundInterceptor):
    """One attempt, in ``_attempts`` while it runs."""

    def __init__(self, next: ActivityInboundInterceptor, interval: float) -> None:
        super().__init__(next)
        self._interval = interval
        self._heartbeat: Callable[[], None] | None = None

    def init(self, outbound: ActivityOutboundInterceptor) -> None:
        self._heartbeat = outbound.heartbeat
        super().init(outbound)

    async def execute_activity(self, input: ExecuteActivityInput) -> object:
        assert self._heartbeat is not None, "the SDK calls init before execute_activity"
        token = activity.info().task_token
        attempt = _Attempt(
            asyncio.get_running_loop(), self._heartbeat, contextvars.copy_context(), self._interval
        )
        with _lock:
            _attempts[token] = attempt
        try:
            return await super().execute_activity(input)
        finally:
            with _lock:
                _attempts.pop(token, None)  # None: a second scheduler in the same worker took it out
            attempt.end()


@contextmanager
def heartbeating() -> Iterator[None]:
    """Heartbeat at once and then every interval until the block ends (outside an activity, as when a
    benchmark calls the activity's method directly: nothing)."""
    if not activity.in_activity():
        yield
        return
    with _lock:
        attempt = _attempts.get(activity.info().task_token)
        if attempt is not None:
            attempt.blocks += 1
    if attempt is None:
        raise RuntimeError(
            "heartbeating() needs the worker to carry activities.heartbeats.HeartbeatScheduler among its "
            "interceptors; build the worker with worker.factory.build_worker"
        )
    attempt.loop.call_soon_threadsafe(attempt.start)  # a heartbeat timeout counts from the attempt's start
    try:
        yield
    finally:
        with _lock:
            attempt.blocks -= 1
