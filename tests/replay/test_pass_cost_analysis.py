"""The scale benchmark's history analysis (``benchmarks/scale_analysis.py``) on recorded histories, so the
code that reports a pass's cost cannot drift from the histories the workflow writes."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.api.history.v1 import HistoryEvent, WorkflowTaskTimedOutEventAttributes
from temporalio.client import WorkflowHistory

from benchmarks import scale_curve
from benchmarks.scale_analysis import (
    KEYS,
    PassCost,
    convergence,
    pass_cost,
    percentile,
    split_passes,
    table,
    workflow_task_timeouts_by_kind,
)

HISTORIES = Path(__file__).parent / "histories"
COMPLETED = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED


def _events(name: str) -> list[HistoryEvent]:
    history = WorkflowHistory.from_json(name, json.loads((HISTORIES / f"{name}.json").read_text()))
    return list(history.events)


def test_a_noop_resync_pass_is_cut_at_its_timer_and_counted() -> None:
    events = _events("noop_resync")
    first, resync = split_passes(events)
    assert first[0].event_id == 1 and resync[0].event_id == first[-1].event_id + 1
    cost = pass_cost(resync)
    # A pass with nothing to do: the timer fires, one workflow task runs fetch_gateways as a local
    # activity (a marker) and starts the next resync timer.
    assert (cost.history_events, cost.workflow_tasks, cost.activities) == (6, 1, 1)
    assert cost.history_bytes == sum(e.ByteSize() for e in resync) > 0
    assert sum(workflow_task_timeouts_by_kind(events).values()) == 0
    # Temporal Cloud Actions: the next resync timer, and the one workflow task's local activity.
    assert (cost.actions, cost.signals) == (2, 0)


def test_timed_out_workflow_tasks_are_told_apart_by_kind() -> None:
    """A task left on the sticky queue (schedule-to-start) and one a worker did not answer in time
    (start-to-close) have different causes, so the benchmark counts them apart."""

    def timed_out(kind: TimeoutType.ValueType) -> HistoryEvent:
        return HistoryEvent(
            event_type=EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
            workflow_task_timed_out_event_attributes=WorkflowTaskTimedOutEventAttributes(timeout_type=kind),
        )

    events = [
        *_events("noop_resync"),
        timed_out(TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START),
        timed_out(TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE),
        timed_out(TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE),
    ]
    assert sum(workflow_task_timeouts_by_kind(events).values()) == 3
    assert workflow_task_timeouts_by_kind(events) == {"schedule_to_start": 1, "start_to_close": 2}
    none = {"schedule_to_start": 0, "start_to_close": 0}
    assert workflow_task_timeouts_by_kind(_events("noop_resync")) == none


def test_actions_count_a_start_each_timer_and_signal_each_activity_attempt_and_local_groups() -> None:
    """docs.temporal.io/cloud/actions: a workflow start, a timer started, a signal and an activity attempt
    are one Action each; all the local activities of one workflow task are one."""
    events = _events("first_pass")
    by_type = Counter(e.event_type for e in events)
    regular = sum(
        e.activity_task_started_event_attributes.attempt
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    )
    tasks_with_locals = {
        max(c.event_id for c in events if c.event_id < e.event_id and c.event_type == COMPLETED)
        for e in events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    }
    expected = (
        by_type[EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED]
        + by_type[EventType.EVENT_TYPE_TIMER_STARTED]
        + by_type[EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]
        + by_type[EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES]
        + regular
        + len(tasks_with_locals)
    )
    assert regular >= 1 and tasks_with_locals
    assert pass_cost(events).actions == expected


def test_every_event_belongs_to_exactly_one_pass() -> None:
    for name in ("first_pass", "stop_resume", "recheck_then_reconcile"):
        events = _events(name)
        pieces = split_passes(events)
        assert [e.event_id for piece in pieces for e in piece] == [e.event_id for e in events]
        assert all(pass_cost(p).activities > 0 for p in pieces)


def test_an_empty_stretch_costs_nothing() -> None:
    assert pass_cost([]) == PassCost(0, 0, 0, 0, 0, 0)


def test_convergence_reads_first_half_and_last_and_infinity_for_stragglers() -> None:
    assert convergence([3.0, 1.0, 2.0, 4.0], 4) == convergence([1.0, 2.0, 3.0, 4.0], 4)
    assert (convergence([1.0, 2.0, 3.0, 4.0], 4).half, convergence([1.0, 2.0, 3.0, 4.0], 4).all) == (2.0, 4.0)
    assert convergence([1.0], 3).all == math.inf


def test_percentiles_are_nearest_rank() -> None:
    samples = [float(i) for i in range(1, 31)]
    assert (percentile(samples, 0.5), percentile(samples, 0.99)) == (15.0, 30.0)


def test_the_table_has_a_row_per_key_in_order() -> None:
    lines = table({"ratio": 2.5, "latency_ms.p50": 120.0}, 100).splitlines()
    assert [line.split("`")[1] for line in lines[2:]] == list(KEYS)
    assert "| `ratio` | 2.50 |" in lines and "| `latency_ms.p50` | 120 |" in lines


def test_the_curve_puts_runs_side_by_side_in_order_of_n_and_refuses_a_run_without_n(tmp_path: Path) -> None:
    big, small, bare = tmp_path / "big.json", tmp_path / "small.json", tmp_path / "bare.json"
    big.write_text(json.dumps({"services": 1000, "ratio": 1.25, "latency_ms.p50": None}))
    small.write_text(json.dumps({"services": 100, "ratio": 1.5}))
    bare.write_text(json.dumps({"ratio": 1.0}))
    lines = scale_curve.table(scale_curve.load([big, small])).splitlines()
    assert lines[0] == "| figure | N=100 | N=1000 |"
    assert "| `ratio` | 1.50 | 1.25 |" in lines
    assert "| `latency_ms.p50` | nan | nan |" in lines
    with pytest.raises(SystemExit, match=r"bare\.json: no 'services' count"):
        scale_curve.load([bare])
