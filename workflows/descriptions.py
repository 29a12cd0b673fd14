"""What the Temporal UI shows next to the workflow's handlers and timers, so that its forms and timeline
explain themselves to a person who has not read the code."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, ParamSpec, TypeVar, cast

from temporalio import workflow
from temporalio.workflow import UpdateMethodMultiParam

P = ParamSpec("P")
R = TypeVar("R")

RECONCILE = (
    "Run a pass soon: something that may change this LLMInferenceService's routing happened. "
    'Argument: {"reason": "why"} (the watcher sends one per change; several are coalesced into one pass). '
    "No argument runs a pass too; an argument of another shape is dropped (logged)."
)
STOP = (
    "Stop the service: the next pass sets the serving.kserve.io/stop annotation and removes its routes "
    "and pools, as `kubectl annotate` would. No argument (one sent is ignored)."
)
RESUME = (
    "Resume a stopped service: the next pass removes serving.kserve.io/stop. "
    "No argument (one sent is ignored)."
)
STATE = (
    "The workflow's view of the service: passes run, the last pass's outcome, conditions and URL, "
    "the last error and the triggers waiting for the next pass."
)
DRIFT = (
    "Shadow mode's report: the objects whose live state differs from what the last pass would have "
    "written, each with the fields that differ, and the status conditions that would change."
)
RECONCILE_NOW = (
    'Run a pass now and return its summary (outcome, conditions, URL, writes). Argument: {"reason": "why"}. '
    "Refused once the service is gone, or with an argument of another shape (the message says why)."
)


def update(
    description: str,
) -> Callable[[Callable[P, Awaitable[R]]], UpdateMethodMultiParam[P, R]]:
    """``workflow.update(description=...)`` typed as the bare decorator is: the SDK's overload for the
    keyword form types an async handler's result as a coroutine, which callers would then see."""
    decorator: Callable[[Callable[P, Awaitable[R]]], UpdateMethodMultiParam[P, R]]
    decorator = cast(Any, workflow.update(description=description))
    return decorator


def duration(value: timedelta) -> str:
    """``10m``, ``40s``, ``1h30m``: how the Temporal UI's own timeline writes durations."""
    seconds = int(value.total_seconds())
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (seconds, "s")) if n)
    return text or "0s"


def wait_summary(timeout: timedelta, recheck_attempt: int) -> str:
    """The summary of the timer of the wait between passes."""
    if recheck_attempt == 0:
        return f"resync in {duration(timeout)}"
    return f"re-check in {duration(timeout)} (attempt {recheck_attempt})"


def restart_summary(delay: timedelta) -> str:
    return f"re-read after a write conflict in {duration(delay)}"


def static_details(namespace: str, name: str) -> str:
    """The workflow's fixed Markdown details: what it is and how to drive it."""
    key = f"{namespace}/{name}"
    return "\n".join(
        [
            f"Reconciles the router of the LLMInferenceService `{key}`: its HTTPRoute, InferencePool and "
            "scheduler, and the `RouterReady` status conditions.",
            "",
            f"- `kubectl describe llminferenceservice -n {namespace} {name}`: its status and Events",
            f"- `llmisvc-router status {key}`: this workflow's view",
            f"- `llmisvc-router reconcile {key}`: a pass now",
            f"- `llmisvc-router drift {key}`: in shadow mode, what differs from what it would write",
            "- Signals: `reconcile`, `stop`, `resume`; queries: `state`, `drift`; update: `reconcile_now`.",
        ]
    )
