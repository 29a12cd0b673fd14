"""The pure parts of ``bench_scale.py``: what a pass costs in Temporal history, how fast a fleet
converged, and the report. No I/O, no clock: the benchmark feeds it what it measured, and the test suite
runs it on a recorded history (``tests/replay/histories/``).

A *pass* in a workflow history begins at a trigger (the workflow's start, a ``reconcile`` signal, a fired
timer, an accepted update) and runs to the next trigger; a trigger arriving before the current piece
scheduled any activity (a signal while the workflow is starting) joins that piece. The history does not
say which timer was the resync and which the back-off of a pass restarted after a write conflict, so a
restarted pass counts as two.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.api.history.v1 import HistoryEvent

TRIGGERS = frozenset(
    {
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
        EventType.EVENT_TYPE_TIMER_FIRED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
    }
)


@dataclass(frozen=True)
class PassCost:
    """What one pass added to the history."""

    history_events: int
    history_bytes: int  # the events' protobuf encoding, as Temporal stores them
    workflow_tasks: int  # workflow tasks scheduled (each one a round trip to a worker)
    activities: int  # activities scheduled
    actions: int  # Temporal Cloud Actions the history shows (:func:`actions`)
    signals: int  # signals received (one Action each; a resync pass has its timer instead)


LOCAL_ACTIVITY_MARKER = "core_local_activity"


def pass_cost(events: Sequence[HistoryEvent]) -> PassCost:
    return PassCost(
        history_events=len(events),
        history_bytes=sum(event.ByteSize() for event in events),
        workflow_tasks=_count(events, EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED),
        activities=_count(events, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) + _local_activities(events),
        actions=actions(events),
        signals=_count(events, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
    )


#: Events that are one Temporal Cloud Action each (docs.temporal.io/cloud/actions): a workflow started
#: (or continued as new), a timer started, a search-attribute upsert, a signal, an accepted update.
ONE_ACTION = frozenset(
    {
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
        EventType.EVENT_TYPE_TIMER_STARTED,
        EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
    }
)


def actions(events: Sequence[HistoryEvent]) -> int:
    """The Temporal Cloud Actions a history shows: :data:`ONE_ACTION` events, each activity attempt (its
    started event's ``attempt``), and one for all the local activities of one workflow task. Heartbeats
    and queries are Actions too but leave no event (a no-op pass has neither)."""
    count, locals_pending = 0, False
    for event in events:
        if event.event_type in ONE_ACTION:
            count += 1
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            count += max(1, event.activity_task_started_event_attributes.attempt)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            count += locals_pending
            locals_pending = False
        elif _is_local_activity(event):
            locals_pending = True  # the markers follow the completion of the task that ran them
    return count + locals_pending


def split_passes(events: Sequence[HistoryEvent]) -> list[list[HistoryEvent]]:
    """The history cut at its triggers, each piece one pass (see the module's docstring)."""
    passes: list[list[HistoryEvent]] = []
    for event in events:
        if event.event_type in TRIGGERS and (not passes or _schedules_activity(passes[-1])):
            passes.append([])
        if not passes:
            passes.append([])
        passes[-1].append(event)
    return passes


TIMEOUT_KINDS = ("schedule_to_start", "start_to_close")


def workflow_task_timeouts_by_kind(events: Sequence[HistoryEvent]) -> dict[str, int]:
    """The timed-out workflow tasks by kind: ``schedule_to_start``, a task left waiting on the worker's
    sticky queue (the server then hands it to the task queue, with its whole history), and
    ``start_to_close``, a task a worker took and did not answer in time."""
    kinds = dict.fromkeys(TIMEOUT_KINDS, 0)
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
            kind = event.workflow_task_timed_out_event_attributes.timeout_type
            sticky = kind == TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START
            kinds["schedule_to_start" if sticky else "start_to_close"] += 1
    return kinds


def _schedules_activity(events: Sequence[HistoryEvent]) -> bool:
    return _count(events, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) + _local_activities(events) > 0


def _local_activities(events: Sequence[HistoryEvent]) -> int:
    """Local activities (``fetch_gateways``, ``evaluate_conditions``) are recorded as markers."""
    return sum(1 for e in events if _is_local_activity(e))


def _is_local_activity(event: HistoryEvent) -> bool:
    return (
        event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and event.marker_recorded_event_attributes.marker_name == LOCAL_ACTIVITY_MARKER
    )


def _count(events: Sequence[HistoryEvent], type_: EventType.ValueType) -> int:
    return sum(1 for event in events if event.event_type == type_)


# --- convergence and latency -------------------------------------------------------------------------


@dataclass(frozen=True)
class Convergence:
    """Seconds from the creation of the fleet until its first, half and last service were RouterReady."""

    first: float
    half: float
    all: float


def convergence(ready_after: Sequence[float], count: int) -> Convergence:
    """``ready_after``: seconds after creation at which each service was first seen Ready; a fleet that
    did not converge has ``inf`` for what it did not reach."""
    times = sorted(ready_after)

    def nth(n: int) -> float:
        return times[n - 1] if 0 < n <= len(times) else math.inf

    return Convergence(first=nth(1), half=nth(math.ceil(count / 2)), all=nth(count))


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (``fraction`` 0.5 for p50, 0.99 for p99)."""
    ordered = sorted(samples)
    if not ordered:
        return math.nan
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


# --- the report --------------------------------------------------------------------------------------

KEYS = (
    "temporal.seconds_all_ready",
    "direct.seconds_all_ready",
    "ratio",
    "temporal.seconds_50",
    "temporal.seconds_first_ready",
    "workflow_task_timeouts",
    "workflow_task_timeouts.schedule_to_start",
    "workflow_task_timeouts.start_to_close",
    "worker_peak_rss_mib",
    "passes_per_service",
    "api_requests_per_service",
    "noop_pass.history_events",
    "noop_pass.history_bytes",
    "noop_pass.workflow_tasks",
    "noop_pass.activities",
    "noop_pass.api_requests",
    "noop_pass.api_writes",
    "noop_pass.actions",
    "noop_pass.cpu_ms.worker",
    "noop_pass.cpu_ms.watcher",
    "noop_pass.cpu_ms.temporal",
    "idle.actions_per_service_per_day",
    "idle.history_kib_per_service_per_day",
    "latency_ms.p50",
    "latency_ms.p99",
)


def table(figures: dict[str, float], services: int) -> str:
    """The figures as a Markdown table, one row per key, in the order of :data:`KEYS`."""
    return side_by_side([(services, figures)])


def side_by_side(runs: Sequence[tuple[int, Mapping[str, float | None]]]) -> str:
    """Several runs' figures as one Markdown table, a column per run (its N) in the order given; a figure
    a run lacks, or has as null, is ``nan``."""
    rows = ["| figure | " + " | ".join(f"N={services}" for services, _ in runs) + " |"]
    rows.append("|---|" + "---|" * len(runs))
    for key in KEYS:
        cells = [
            shown(math.nan if (value := figures.get(key)) is None else float(value)) for _, figures in runs
        ]
        rows.append(f"| `{key}` | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def shown(value: float) -> str:
    """A whole number as one (counts), anything else with two decimals."""
    if not math.isfinite(value):
        return str(value)
    return str(int(value)) if value == int(value) else f"{value:.2f}"
