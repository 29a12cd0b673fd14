"""The history helpers of tests/history.py that the budget tests lean on: what they leave out, and
that they leave out nothing else."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType as E
from temporalio.api.history.v1 import HistoryEvent

from tests.history import without_task_heartbeats


def _events(*steps: tuple[float, int]) -> list[HistoryEvent]:
    events = []
    for at, kind in steps:
        event = HistoryEvent(event_type=kind)  # type: ignore[arg-type]
        event.event_time.FromNanoseconds(round((1_000_000 + at) * 1e9))
        if kind == E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            event.workflow_task_scheduled_event_attributes.start_to_close_timeout.FromSeconds(10)
        events.append(event)
    return events


SIGNAL, SCHED, START, DONE = (
    E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
    E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    E.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
)
CANCEL, MARKER, TIMER = E.EVENT_TYPE_TIMER_CANCELED, E.EVENT_TYPE_MARKER_RECORDED, E.EVENT_TYPE_TIMER_STARTED


def test_the_task_the_sdk_opens_after_a_local_activity_outlived_80_percent_of_its_timeout_is_not_counted():
    slow = _events(
        (0, SIGNAL), (0, SCHED), (0, START), (8.1, DONE), (8.1, CANCEL), (8.1, SCHED), (8.1, START)
    )
    slow += _events((9, DONE), (9, MARKER), (9, TIMER))
    assert [e.event_type for e in without_task_heartbeats(slow)] == [
        SIGNAL, SCHED, START, DONE, CANCEL, MARKER, TIMER
    ]  # fmt: skip


def test_a_second_task_after_a_quick_one_is_counted():
    quick = _events(
        (0, SIGNAL), (0, SCHED), (0, START), (0.2, DONE), (0.2, CANCEL), (0.2, SCHED), (0.2, START)
    )
    quick += _events((0.3, DONE), (0.3, MARKER), (0.3, TIMER))
    assert len(without_task_heartbeats(quick)) == len(quick)
