"""What the workflow shows people: pass summaries, activity summaries and the Markdown details that the
Temporal UI displays for each service's workflow."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from temporalio.exceptions import ActivityError, ApplicationError, FailureError

from activities.models import ConditionState, PassReport, ServiceKey
from activities.payload_guard import clip
from llmisvc_core.planner.plan import Outcome, WriteOp
from workflows import drift_report
from workflows.models import PassSummary, WorkflowState


def pass_summary(
    report: PassReport, written: int, status_written: bool, now: datetime, **replanned: Any
) -> PassSummary:
    """The summary of a planned pass; ``replanned`` overrides (outcome, message, conditions, url) after a
    write the API server refused."""
    conditions: dict[str, ConditionState] = replanned.pop("conditions", None) or report.conditions
    ready = conditions.get("RouterReady")
    summary = PassSummary(
        outcome=report.outcome,
        message=report.message,
        router_ready=ready.status if ready is not None else "Unknown",
        conditions={name: str(state) for name, state in conditions.items()},
        url=report.url,
        writes=written,
        status_written=status_written,
        finished_at=now,
    )
    return summary.model_copy(update={k: v for k, v in replanned.items() if v is not None})


def failed_pass(err: ActivityError | ApplicationError, now: datetime) -> PassSummary:
    """A pass stopped by an activity failure that retries did not clear (or that is permanent), or by
    the workflow giving up (an ``ApplicationError`` of its own, e.g. writes that kept conflicting)."""
    cause = err.cause if isinstance(err, ActivityError) else err
    kind = cause.type if isinstance(cause, ApplicationError) and cause.type else "error"
    # str() of a FailureError already starts with its type: take the bare message to say it once.
    message = cause.message if isinstance(cause, FailureError) else err.message
    # Clipped: the summary is carried in the workflow's state (queries, continue-as-new input).
    return PassSummary(outcome=Outcome.ERROR, message=clip(f"{kind}: {message}"), finished_at=now)


def internal_error(err: Exception, now: datetime) -> PassSummary:
    """A pass stopped by an exception of the workflow's own code (a bug): said in one line."""
    text = " ".join(str(err).split())[:300]
    return PassSummary(
        outcome=Outcome.ERROR, message=f"InternalError: {type(err).__name__}: {text}", finished_at=now
    )


def describe_writes(ops: list[WriteOp]) -> str:
    return "; ".join(op.describe() for op in ops)


def details_markdown(key: ServiceKey, state: WorkflowState) -> str:
    """Current details for the Temporal UI: outcome, URL, conditions table, last error."""
    last = state.last
    lines = [f"### LLMInferenceService `{key}`", ""]
    if last is None:
        return "\n".join([*lines, "No pass has run yet."])
    when = f" at {last.finished_at:%Y-%m-%d %H:%M:%S} UTC" if last.finished_at else ""
    lines += [
        f"**Last pass:** {last.outcome.value}{when} (pass {state.pass_count})",
        f"**URL:** {last.url or '—'}",
        "",
        "| condition | status |",
        "|---|---|",
        *[f"| {name} | {value} |" for name, value in sorted(last.conditions.items())],
    ]
    if (state.last_error or last.message) and state.handed_off is None:
        lines += ["", f"**Last error:** {state.last_error or last.message}"]
    lines += drift_report.markdown(state.drift, state.handed_off)
    return "\n".join(lines)
