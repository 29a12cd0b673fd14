"""What a pass tells the terminal: one line per pass that did something, one when a service becomes or
stops being Ready (its ``RouterReady``, the readiness this router decides). Workflow code: the SDK's
``workflow.logger`` logs nothing while replaying.

A pass that changed nothing (no write, no status change, the same outcome and conditions) logs at debug
only, so a settled stack is quiet. The triggers of a pass are shown as what they are (``after: …``),
never as if the pass had done them. A failed pass is one line with its reason; tracebacks are the
logging set-up's business (``llmisvc_router.logs``: only at debug level).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from temporalio import workflow

from activities.models import ServiceKey
from workflows.models import PassSummary

#: At most this many distinct triggers are named on a line; the rest are counted.
SHOWN_TRIGGERS = 3
ROUTER_READY = "RouterReady"


def readiness(summary: PassSummary | None) -> str | None:
    """``True``/``False``/``Unknown`` of ``RouterReady``: the readiness this router decides (``Ready`` also
    waits for the workloads, which another controller reports)."""
    if summary is None:
        return None
    value = summary.conditions.get(ROUTER_READY)
    return value.split("(")[0] if value else None


def changed_conditions(before: PassSummary | None, after: PassSummary) -> list[str]:
    """``Type: old -> new`` for each condition whose status or reason changed in this pass."""
    old = before.conditions if before is not None else {}
    return [
        f"{name} {old[name]} -> {value}" if name in old else f"{name}={value}"
        for name, value in sorted(after.conditions.items())
        if old.get(name) != value
    ]


def describe_triggers(reasons: list[str]) -> str:
    unique = list(dict.fromkeys(reasons))
    shown = "; ".join(unique[:SHOWN_TRIGGERS])
    more = len(unique) - SHOWN_TRIGGERS
    return f"{shown} (+{more} more)" if more > 0 else shown


def pass_line(
    key: ServiceKey, reasons: list[str], before: PassSummary | None, after: PassSummary, took: timedelta
) -> str | None:
    """The line for a pass, or None when it changed nothing worth a line."""
    changes = changed_conditions(before, after)
    same_outcome = before is not None and before.outcome == after.outcome and before.message == after.message
    same_drift = (before.drift if before is not None else None) == after.drift
    if not after.writes and not after.status_written and not changes and same_outcome and same_drift:
        return None
    parts = [f"{key}: {after.outcome} in {took.total_seconds():.1f}s"]
    if after.outcome in ("error", "handed-off") and after.message:
        parts.append(after.message)
    wrote = [f"{after.writes} object{'s' if after.writes != 1 else ''}"] if after.writes else []
    wrote += ["status"] if after.status_written else []
    parts.append(f"wrote {', '.join(wrote)}" if wrote else "wrote nothing")
    if after.drift is not None:
        parts.append(f"shadow mode: drift {after.drift}")
    if changes:
        parts.append("conditions: " + ", ".join(changes))
    parts.append(f"after: {describe_triggers(reasons)}")
    return "; ".join(parts)


def readiness_line(key: ServiceKey, before: PassSummary | None, after: PassSummary) -> str | None:
    """``NS/NAME is Ready`` or ``NS/NAME is not Ready (...)`` when readiness changed, else None."""
    was, now = readiness(before), readiness(after)
    if now is None or now == was or (was is None and now != "True"):
        return None
    if now == "True":
        return f"{key} is Ready (RouterReady True)" + (f" at {after.url}" if after.url else "")
    cause = after.conditions.get(ROUTER_READY, now)
    return f"{key} is no longer Ready: RouterReady {cause}" if was == "True" else None


def log_pass(
    key: ServiceKey, reasons: list[str], before: PassSummary | None, after: PassSummary, took: timedelta
) -> None:
    line = pass_line(key, reasons, before, after, took)
    if line is None:
        workflow.logger.debug("%s: nothing changed (after: %s)", key, describe_triggers(reasons))
    else:
        workflow.logger.log(logging.WARNING if after.outcome == "error" else logging.INFO, line)
    ready = readiness_line(key, before, after)
    if ready is not None:
        workflow.logger.info(ready)
