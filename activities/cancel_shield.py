"""Cancellation of a sync activity reaches its thread only when the attempt's body has returned.

The Python SDK cancels a running sync activity (its workflow cancelled it, its heartbeat or start-to-close
timeout passed, the worker is shutting down) by raising ``CancelledError`` asynchronously in the
activity's thread (``PyThreadState_SetAsyncExc``). Such an exception lands between any two bytecodes,
including inside ``threading.Condition.__enter__`` after the lock was taken and before the ``with`` block
that would release it. urllib3's connection pool is a ``queue.Queue`` guarded by one such lock, shared by
every activity thread: one cancelled attempt caught there leaves the lock held, and every later request
of the worker waits on it forever (measured in ``bench_scale --services 300``: the 16 activity threads
all parked in ``Condition.__enter__`` of the pool's queue, every attempt then timing out, the machine
idle).

:class:`ShieldCancellation` runs every sync attempt inside ``activity.shield_thread_cancel_exception()``:
a cancellation waits until the body returns and is raised then, so no lock is ever left held. An attempt
is short (each request within ``llmisvc_kube.api.REQUEST_BUDGET``, the attempt within its start-to-close
timeout), so holding the cancellation that long loses nothing: Temporal has already given up on the
attempt and ignores its result.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor


class ShieldCancellation(Interceptor):
    """The worker interceptor that shields every sync activity's body from asynchronous cancellation."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Shielded(next)


class _Shielded(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        if not inspect.iscoroutinefunction(input.fn):
            input = dataclasses.replace(input, fn=_shielded(input.fn))
        return await super().execute_activity(input)


def _shielded(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any) -> Any:
        with activity.shield_thread_cancel_exception():
            return fn(*args)

    return run
