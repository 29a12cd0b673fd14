"""Workflow task slots that let a worker finish the passes it has begun before it takes on new workflows.

A worker polls two queues for workflow tasks: its own *sticky* queue, where the next task of each workflow
it has cached waits (an activity finished, a signal came), and the shared task queue, where a new
workflow's first task waits (and the task of one no worker has cached). A task that waits on the sticky
queue times out after ``worker.factory.STICKY_QUEUE_TIMEOUT``; one that waits on the shared queue does
not; one that a worker holds times out after the workflow task timeout (10 s) unless it is answered.

With the SDK's fixed slots, a thousand services created at once filled the worker with first tasks, each
waiting for a local activity slot (``fetch_gateways``): sticky tasks waited on the server until they timed
out, and with more slots the held tasks waited in the worker until they did (``bench_scale --services
300`` read the worker's ``temporal_worker_task_slots_used`` at every slot). :class:`InProgressFirst`
polls the shared queue only while fewer than ``room`` slots are taken by sticky tasks and shared polls,
and the sticky queue while any of ``total`` is free: new workflows wait on the shared queue, where waiting
is free, until the workflows in progress have moved on. A controller-runtime workqueue does the same with
its fixed number of workers, each running a reconcile to its end.

The SDK calls ``reserve_slot`` on the worker's event loop and the other methods from its own threads, so
the count is kept under a lock and the event loop is woken from whichever thread gives a slot back.
"""

from __future__ import annotations

import asyncio
import threading

from temporalio.worker import (
    CustomSlotSupplier,
    SlotMarkUsedContext,
    SlotPermit,
    SlotReleaseContext,
    SlotReserveContext,
)


class _Permit(SlotPermit):
    """A slot this supplier handed out, for a poll of the sticky queue or of the shared one; ``used`` once
    a task came for it."""

    def __init__(self, sticky: bool) -> None:
        self.sticky = sticky
        self.used = False


class InProgressFirst(CustomSlotSupplier):
    """``total`` workflow task slots; a poll of the shared task queue only while fewer than ``room`` slots
    are taken by sticky tasks and shared polls.

    A shared poll counts from its reservation: the SDK marks a slot used only once the worker has begun the
    task, and a poller that only counted tasks begun took hundreds of new workflows in a few seconds at a
    thousand services, every poll of a full queue answering at once. A sticky poll counts once it brings a
    task: the sticky pollers always wait with a slot each, and counting them could leave no room at all."""

    def __init__(self, total: int, room: int) -> None:
        if not 1 <= room <= total:
            raise ValueError(f"room for new workflows must be from 1 to the {total} slots, not {room}")
        self.total, self.room = total, room
        self._lock = threading.Lock()
        self._held = 0  # every slot reserved
        self._taken = 0  # those that count against the room
        self._loop: asyncio.AbstractEventLoop | None = None
        self._freed: asyncio.Event | None = None

    async def reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit:
        freed = self._event()
        while True:
            freed.clear()  # before trying: a slot given back after a failed try sets it again
            permit = self.try_reserve_slot(ctx)
            if permit is not None:
                return permit
            await freed.wait()

    def try_reserve_slot(self, ctx: SlotReserveContext) -> SlotPermit | None:
        with self._lock:
            if self._held >= self.total or (not ctx.is_sticky and self._taken >= self.room):
                return None
            self._held += 1
            if not ctx.is_sticky:
                self._taken += 1
        return _Permit(ctx.is_sticky)

    def mark_slot_used(self, ctx: SlotMarkUsedContext) -> None:
        permit = ctx.permit
        if isinstance(permit, _Permit) and not permit.used:
            with self._lock:
                permit.used = True
                if permit.sticky:
                    self._taken += 1

    def release_slot(self, ctx: SlotReleaseContext) -> None:
        permit = ctx.permit
        if not isinstance(permit, _Permit):
            return
        with self._lock:
            self._held -= 1
            if not permit.sticky or permit.used:
                self._taken -= 1
        if self._loop is not None and self._freed is not None:
            self._loop.call_soon_threadsafe(self._freed.set)

    def held(self) -> tuple[int, int]:
        """The slots reserved now, and those of them that count against the room."""
        with self._lock:
            return self._held, self._taken

    def _event(self) -> asyncio.Event:
        if self._freed is None:
            self._loop, self._freed = asyncio.get_running_loop(), asyncio.Event()
        return self._freed
