"""What Temporal recorded of a service's workflow: its activities, in order, with the attempt that ended
each one (retries show as ``attempt > 1`` in ``ActivityTaskStarted``). Local activities
(``fetch_gateways``, ``evaluate_conditions``) are recorded as markers, which say the same."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
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
        elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            local = local_activity(event.marker_recorded_event_attributes)
            if local is not None:
                when = event.event_time.ToDatetime()  # the server's clock, which time skipping moves
                runs.append(ActivityRun(local[0], when, when, local[1]))
    return runs


def local_activity(marker: Any) -> tuple[str, int] | None:
    """(activity type, attempt) of a ``core_local_activity`` marker; None for other markers."""
    if marker.marker_name != "core_local_activity":
        return None
    data = json.loads(marker.details["data"].payloads[0].data)
    return str(data["activity_type"]), int(data["attempt"])


async def activity_names(handle: Handle) -> list[str]:
    return [run.name for run in await activity_runs(handle)]


@dataclass(frozen=True)
class RecordedPayload:
    event_id: int
    event_type: str
    path: str  # where in the event, e.g. ``marker_recorded_event_attributes.details[data].payloads[0]``
    payload: Payload


def payloads_of(message: Message, path: str = "") -> Iterator[tuple[str, Payload]]:
    """Every ``Payload`` inside a protobuf message, whatever field holds it (inputs, results, marker
    details of local activities, headers, memos, failure details, user metadata)."""
    if isinstance(message, Payload):
        yield path, message
        return
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            for key, item in value.items():
                if isinstance(item, Message):
                    yield from payloads_of(item, f"{path}.{field.name}[{key}]")
        elif field.is_repeated:
            for i, item in enumerate(value):
                yield from payloads_of(item, f"{path}.{field.name}[{i}]")
        else:
            yield from payloads_of(value, f"{path}.{field.name}")


async def recorded_payloads(handle: Handle) -> list[RecordedPayload]:
    """Every payload of the run's history, with the event that holds it."""
    history = await handle.fetch_history()
    return [
        RecordedPayload(event.event_id, EventType.Name(event.event_type), path.lstrip("."), payload)
        for event in history.events
        for path, payload in payloads_of(event)
    ]


def timeline(events: Sequence[HistoryEvent]) -> str:
    """The events as ``+seconds TYPE``, from the first: what a failed shape check prints."""
    start = events[0].event_time.ToDatetime()
    steps = [(e.event_time.ToDatetime() - start, EventType.Name(e.event_type)[11:]) for e in events]
    return "; ".join(f"+{at.total_seconds():.3f}s {kind}" for at, kind in steps)


#: The share of the workflow task timeout after which the SDK completes a task whose local activity is
#: still running and asks for a new one (the "WFT heartbeat" of Temporal's local-activity spec).
HEARTBEAT_SHARE = 0.8


def without_task_heartbeats(events: Sequence[HistoryEvent]) -> list[HistoryEvent]:
    """The events less the workflow tasks that only a slow machine adds.

    When a local activity runs for longer than 80% of the workflow task timeout, the SDK completes the
    task it holds and opens another (three events) while the activity goes on. That is wall-clock
    behaviour, not a cost of the pass: a task that completed after less than that share is kept, so a
    second task the pass itself asked for still fails the shape check.
    """
    kept: list[HistoryEvent] = []
    timeout = started = None
    dropping = heartbeat = False
    for event in events:
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            timeout = event.workflow_task_scheduled_event_attributes.start_to_close_timeout.ToTimedelta()
            dropping, heartbeat = heartbeat, False
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            started = event.event_time.ToDatetime()
        elif (
            kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
            and started is not None
            and timeout is not None
        ):
            heartbeat = event.event_time.ToDatetime() - started >= HEARTBEAT_SHARE * timeout
        in_task = kind in (
            EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
            EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
            EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
        )
        if not (dropping and in_task):
            kept.append(event)
        if kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            dropping = False
    return kept
