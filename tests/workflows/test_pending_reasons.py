"""The triggers waiting for the next pass are bounded: a flood of signals between two passes (or one
signal with a huge reason) cannot grow the workflow's state, which travels in query answers and in the
continue-as-new input, past the size of a history payload."""

from __future__ import annotations

from workflows.models import MAX_PENDING_REASONS, MAX_REASON_CHARS, WorkflowState


def test_pending_reasons_beyond_the_bound_are_counted_not_kept():
    state = WorkflowState()
    for i in range(MAX_PENDING_REASONS + 2000):
        state.add_reason(f"event {i}")

    assert len(state.pending_reasons) == MAX_PENDING_REASONS
    assert state.pending_reasons[0] == "event 0"
    assert state.pending_dropped == 2000
    assert len(state.model_dump_json()) < 4096


def test_taking_the_reasons_reports_the_dropped_ones_as_a_count_and_leaves_none_pending():
    state = WorkflowState()
    for i in range(MAX_PENDING_REASONS + 3):
        state.add_reason(f"event {i}")

    reasons = state.take_reasons()

    assert reasons[-1] == "… and 3 more"
    assert len(reasons) == MAX_PENDING_REASONS + 1
    assert state.pending_reasons == [] and state.pending_dropped == 0
    assert state.take_reasons() == []


def test_a_reason_longer_than_the_bound_is_clipped():
    state = WorkflowState()
    state.add_reason("x" * 100_000)

    [reason] = state.pending_reasons
    assert len(reason) == MAX_REASON_CHARS + 1 and reason.endswith("…")
