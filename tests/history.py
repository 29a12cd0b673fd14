"""What Temporal recorded of a service's workflow: its activities, in order, with the attempt that ended
each one (retries show as ``attempt > 1`` in ``ActivityTaskStarted``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle

Handle = WorkflowHandle[Any, Any]


@dataclass(frozen=True)
class ActivityRun:
    name: str
    scheduled: datetime
    started: datetime  # of the attempt that ended the activity
    attempt: int  # of that attempt: 1 when it never had to retry


async def activity_runs(handle: Handle) -> list[ActivityRun]:
    """Every activity of the run, in order, with the attempt that ended it (``ActivityTaskStarted``)."""
    history = await handle.fetch_history()
    scheduled: dict[int, tuple[str, datetime]] = {}
    runs: list[ActivityRun] = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            scheduled[event.event_id] = (attrs.activity_type.name, event.event_time.ToDatetime())
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            name, when = scheduled[started.scheduled_event_id]
            runs.append(ActivityRun(name, when, event.event_time.ToDatetime(), started.attempt))
    return runs


async def activity_names(handle: Handle) -> list[str]:
    return [run.name for run in await activity_runs(handle)]
