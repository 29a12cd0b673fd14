"""Workflow task slots (``worker.slots``): the worker polls the shared task queue (new workflows) only while
fewer than ``room`` slots are taken by sticky tasks and shared polls, and its sticky queue (the workflows it
is running) while any slot is free.

The SDK's slot suppliers are described in Temporal's worker performance guide (docs.temporal.io,
*Worker performance*, "Slot suppliers"); the sizes follow ``llmisvc_runtime.settings.WorkerSizing``.
``bench_scale --services 300`` put every workflow task timeout on the sticky queue's schedule-to-start
with the SDK's fixed 100 slots, and on the held tasks' start-to-close with 1,000."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

import pytest
from temporalio import activity, workflow
from temporalio.common import WorkerDeploymentVersion
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import (
    FixedSizeSlotSupplier,
    SlotPermit,
    SlotReleaseContext,
    UnsandboxedWorkflowRunner,
    Worker,
    WorkerTuner,
)

from llmisvc_runtime.settings import WorkerSizing
from worker import factory
from worker.slots import InProgressFirst


@dataclass
class Reserve:
    """What the SDK passes to ``reserve_slot`` (``temporalio.worker.SlotReserveContext``)."""

    is_sticky: bool
    slot_type: Literal["workflow", "activity", "local-activity"] = "workflow"
    task_queue: str = "q"
    worker_identity: str = "w"
    worker_build_id: str = ""
    worker_deployment_version: WorkerDeploymentVersion | None = None


@dataclass
class Used:
    """What the SDK passes to ``mark_slot_used`` (``temporalio.worker.SlotMarkUsedContext``)."""

    permit: SlotPermit
    slot_info: object = None


STICKY, SHARED = Reserve(is_sticky=True), Reserve(is_sticky=False)


def take(supplier: InProgressFirst, ctx: Reserve) -> SlotPermit:
    """A slot reserved and a task come for it."""
    permit = supplier.try_reserve_slot(ctx)
    assert permit is not None
    supplier.mark_slot_used(Used(permit))  # type: ignore[arg-type]
    return permit


def release(supplier: InProgressFirst, permit: SlotPermit) -> None:
    supplier.release_slot(SlotReleaseContext(slot_info=None, permit=permit))


def test_the_shared_queue_is_polled_only_while_fewer_than_room_slots_are_taken() -> None:
    supplier = InProgressFirst(total=4, room=2)
    first = take(supplier, SHARED)
    take(supplier, STICKY)
    assert supplier.try_reserve_slot(SHARED) is None  # two slots hold a task
    assert supplier.try_reserve_slot(STICKY) is not None  # the sticky queue is still polled
    release(supplier, first)
    assert supplier.held() == (2, 1)
    assert supplier.try_reserve_slot(SHARED) is not None


def test_a_sticky_poll_waiting_for_a_task_does_not_count_against_the_room() -> None:
    """The sticky pollers always wait with a slot reserved: counted, they would leave no room at all."""
    supplier = InProgressFirst(total=10, room=2)
    polls = [supplier.try_reserve_slot(STICKY) for _ in range(4)]
    assert all(p is not None for p in polls)
    assert supplier.try_reserve_slot(SHARED) is not None
    assert supplier.held() == (5, 1)


def test_a_shared_poll_counts_from_its_reservation_before_its_task_is_marked() -> None:
    """The SDK marks a slot used only once the task has begun: a full queue answers every poll at once, and
    counting only marked slots let hundreds of new workflows in at a thousand services."""
    supplier = InProgressFirst(total=10, room=2)
    assert supplier.try_reserve_slot(SHARED) is not None
    assert supplier.try_reserve_slot(SHARED) is not None
    assert supplier.try_reserve_slot(SHARED) is None
    assert supplier.held() == (2, 2)


def test_a_shared_poll_that_brings_no_task_gives_its_room_back() -> None:
    supplier = InProgressFirst(total=4, room=1)
    empty = supplier.try_reserve_slot(SHARED)
    assert empty is not None and supplier.try_reserve_slot(SHARED) is None
    release(supplier, empty)  # the long poll ended without a task
    assert supplier.held() == (0, 0)
    assert supplier.try_reserve_slot(SHARED) is not None


def test_no_poll_at_all_once_every_slot_is_reserved() -> None:
    supplier = InProgressFirst(total=2, room=2)
    take(supplier, STICKY)
    supplier.try_reserve_slot(STICKY)
    assert supplier.try_reserve_slot(STICKY) is None
    assert supplier.try_reserve_slot(SHARED) is None


def test_a_slot_given_back_without_a_task_frees_no_room() -> None:
    supplier = InProgressFirst(total=4, room=1)
    take(supplier, SHARED)
    idle = supplier.try_reserve_slot(STICKY)
    assert idle is not None
    release(supplier, idle)
    assert supplier.try_reserve_slot(SHARED) is None
    assert supplier.held() == (1, 1)


@pytest.mark.parametrize(("total", "room"), [(4, 0), (4, 5)])
def test_the_room_is_within_the_slots(total: int, room: int) -> None:
    with pytest.raises(ValueError, match=f"from 1 to the {total} slots, not {room}"):
        InProgressFirst(total=total, room=room)


async def test_a_waiting_reservation_is_woken_by_a_slot_given_back_from_another_thread() -> None:
    supplier = InProgressFirst(total=2, room=1)
    held = take(supplier, SHARED)
    waiting = asyncio.create_task(supplier.reserve_slot(SHARED))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    threading.Thread(target=release, args=(supplier, held)).start()
    await asyncio.wait_for(waiting, timeout=5)
    assert supplier.held() == (1, 1)


async def test_a_cancelled_reservation_holds_nothing() -> None:
    supplier = InProgressFirst(total=2, room=1)
    take(supplier, SHARED)
    waiting = asyncio.create_task(supplier.reserve_slot(SHARED))
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert supplier.held() == (1, 1)


def test_the_worker_sizes_its_slots_from_the_settings() -> None:
    sizing = WorkerSizing(activity_threads=12, max_cached_workflows=40)
    tuner = factory.tuner(sizing)
    supplier = tuner._get_workflow_task_slot_supplier()
    assert isinstance(supplier, InProgressFirst)
    assert (supplier.total, supplier.room) == (40, 24)
    assert tuner._get_activities_max() == 12


# --- through a real worker ------------------------------------------------------------------------------

GATE = threading.Event()
STARTED: list[str] = []


@activity.defn
def first_look(name: str) -> None:
    STARTED.append(name)
    GATE.wait(timeout=20)


@workflow.defn(sandboxed=False)
class Looks:
    def __init__(self) -> None:
        self.poked = False

    @workflow.run
    async def run(self, name: str) -> None:
        await workflow.execute_local_activity(first_look, name, start_to_close_timeout=timedelta(seconds=30))
        await workflow.wait_condition(lambda: self.poked)

    @workflow.signal
    def poke(self) -> None:
        self.poked = True


async def test_a_running_workflow_goes_on_while_new_ones_wait_for_room(env: WorkflowEnvironment) -> None:
    """Eight new workflows' first tasks wait at a gate in their local activities: only a few are taken (the
    room, and the polls of the shared queue already under way, each of which reserved its slot before it
    had a task); the rest wait on the task queue. A workflow the worker was already running still gets its
    signal and finishes on its sticky queue. With the SDK's fixed slots all eight are taken."""
    GATE.set()
    STARTED.clear()
    queue = f"slots-{uuid.uuid4()}"
    tuner = WorkerTuner.create_composite(
        workflow_supplier=InProgressFirst(total=20, room=2),
        activity_supplier=FixedSizeSlotSupplier(10),
        local_activity_supplier=FixedSizeSlotSupplier(10),
        nexus_supplier=FixedSizeSlotSupplier(1),
    )
    client = env.client
    new = [f"new-{i}" for i in range(8)]
    # Real time: skipped time would time out the local activities held at the gate.
    with env.auto_time_skipping_disabled(), ThreadPoolExecutor(12) as executor:
        async with Worker(
            client,
            task_queue=queue,
            workflows=[Looks],
            activities=[first_look],
            activity_executor=executor,
            tuner=tuner,
            workflow_runner=UnsandboxedWorkflowRunner(),
        ):
            running = await client.start_workflow(Looks.run, "running", id=f"{queue}-r", task_queue=queue)
            await _until(lambda: STARTED == ["running"], "the running workflow's first look")
            await asyncio.sleep(0.5)  # its first task completes; it waits for its signal
            GATE.clear()
            held = [
                await client.start_workflow(Looks.run, n, id=f"{queue}-{n}", task_queue=queue) for n in new
            ]
            await _until(lambda: len(STARTED) > 2, "more than two looks")
            await running.signal(Looks.poke)
            await asyncio.wait_for(running.result(), timeout=10)
            await asyncio.sleep(1.0)  # time for any more of them to be taken
            taken = len(STARTED) - 1
            assert 2 <= taken < len(new), STARTED
            GATE.set()
            await _until(lambda: len(STARTED) == 1 + len(new), "every new workflow's look")
            for handle in held:
                await handle.signal(Looks.poke)
                await asyncio.wait_for(handle.result(), timeout=10)


async def _until(check: Callable[[], bool], what: str, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}: {STARTED}"
        await asyncio.sleep(0.02)
