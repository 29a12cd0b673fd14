"""The writing half of a pass of ``LLMInferenceServiceWorkflow``: the writes of a planned pass, phase by
phase, then the status and the Events through the one status writer (``evaluate_conditions``); and the
status of a spec the router cannot read, through the same writer. Workflow code."""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from activities import errors
from activities.errors import ErrorType
from activities.models import ApplyInput, EvaluateInput, InvalidSpec, Planned, RejectedWrite, ServiceKey
from llmisvc_core.planner.plan import Outcome
from workflows import drift_report, summaries
from workflows.activity_options import EVALUATE_CONDITIONS, PHASE_WRITES
from workflows.models import PassSummary, WorkflowState


class PassRestartError(Exception):
    """A write lost a race with another writer, or found its plan stale: read the world again and plan
    anew (``at_once``: a stale plan needs no back-off, nobody is racing it)."""

    def __init__(self, at_once: bool = False) -> None:
        super().__init__()
        self.at_once = at_once


async def apply(key: ServiceKey, state: WorkflowState, planned: Planned, now: str) -> PassSummary:
    """The writes, then the status and the Events the pass before did not plan (an unchanged warning
    is told once)."""
    if planned.verdict is not None and planned.verdict.final:  # KServe #5918: asked once per spec
        state.rendered = planned.verdict
    if state.drift is not None and state.drift.mode == "shadow":
        state.drift = drift_report.write_pass(key, workflow.now())
    written, rejected = await _write_phases(key, planned)
    events = [e for e in planned.events if e not in state.announced]
    if rejected is None and planned.status is None and not events:
        state.announced = planned.events
        return summaries.pass_summary(planned, written, False, workflow.now())
    evaluated = await EVALUATE_CONDITIONS(
        EvaluateInput(
            key=key,
            uid=planned.uid,
            now=now,
            status=planned.status if rejected is None else None,
            rejected=rejected,
            verdict=state.rendered,
            events=events,
            generation=planned.generation,
            status_basis=planned.status_basis,
        ),
        f"evaluate the conditions of {key}"
        + (f" after the API refused to write {rejected.ref.kind}" if rejected else ""),
    )
    state.announced = planned.events
    if evaluated.outcome is None:  # written as planned
        return summaries.pass_summary(planned, written, evaluated.written, workflow.now())
    return summaries.pass_summary(
        planned,
        written,
        evaluated.written,
        workflow.now(),
        outcome=evaluated.outcome,
        message=evaluated.message,
        conditions=evaluated.conditions,
        url=evaluated.url,
    )


async def report_invalid(key: ServiceKey, invalid: InvalidSpec, now: str) -> PassSummary:
    """A spec the router cannot read: its status says why (through the status writer), and the pass
    ends as one that could not complete, re-checked with the capped backoff."""
    written = False
    if invalid.status is not None:
        evaluated = await EVALUATE_CONDITIONS(
            EvaluateInput(key=key, uid=invalid.uid, now=now, status=invalid.status),
            f"write the status of {key}: its spec cannot be read",
        )
        written = evaluated.written
    return PassSummary(
        outcome=Outcome.ERROR, message=invalid.message, status_written=written, finished_at=workflow.now()
    )


async def _write_phases(key: ServiceKey, planned: Planned) -> tuple[int, RejectedWrite | None]:
    """The writes, phase by phase in KServe's order; a refused write ends them. A write that lost a
    race, or found its plan stale, restarts the pass."""
    written = 0
    for phase in planned.phases:
        request = ApplyInput(key=key, uid=planned.uid, writes=phase.writes, targets=phase.targets)
        try:
            result = await PHASE_WRITES[phase.phase](request, summaries.describe_writes(phase.writes))
        except ActivityError as err:
            if isinstance(err.cause, ApplicationError) and err.cause.type in errors.RESTART_PASS:
                raise PassRestartError(at_once=err.cause.type == ErrorType.STALE_PLAN) from err
            raise
        written += result.written
        if result.rejected is not None:
            return written, result.rejected
    return written, None
