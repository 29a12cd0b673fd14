"""Reading what a sender put in a signal or update, so that no payload can wedge the workflow.

How the Python SDK treats a handler's payloads (temporalio 1.35, ``_workflow_instance.py``): it converts
them to the handler's annotated parameter types *before* the handler runs. A payload it cannot convert
drops the signal (logged by the SDK) or rejects the update; so far so good. But when the number of
payloads differs from the number of parameters (an argument sent to ``stop``, two sent to
``reconcile``), it converts them without types and calls the handler with them anyway: the
``TypeError`` of that call fails the workflow task, and since the signal stays in the history, every
retry of the task fails the same way: the workflow is wedged until ``temporal workflow reset``.

So each handler declares ``*extra`` after its one optional parameter. A handler with a var-positional
parameter has no argument types for the SDK: every payload arrives as plain JSON values (dicts, lists,
strings, numbers, None), any number of them fits the signature, and this module validates them with
pydantic. A payload that is not JSON, or JSON nested deeper than the converter's own recursion limit,
still fails the SDK's conversion: a signal is dropped with the SDK's log line, an update is rejected.

The rules: a missing payload, ``null`` or ``{}`` means the defaults; unknown fields are ignored (older
and newer senders keep working); a payload of the wrong shape drops a ``reconcile`` signal with one
warning and rejects a ``reconcile_now`` update in its validator with the same message. ``stop``,
``resume`` and the ``state`` query take nothing and ignore whatever is sent.
"""

from __future__ import annotations

from pydantic import ValidationError

from workflows.models import ReconcileSignal

#: How much of a rejected payload's description a log line or a rejection message carries.
MESSAGE_LIMIT = 300


class BadPayloadError(ValueError):
    """A payload of the wrong shape; the message names the field and what is wrong, on one line."""


def reconcile_signal(handler: str, value: object, extra: tuple[object, ...]) -> ReconcileSignal:
    """The ``reconcile`` signal (or ``reconcile_now`` update) argument, or :class:`BadPayloadError`."""
    if extra:
        raise BadPayloadError(f"{handler} takes one argument, got {1 + len(extra)}")
    if isinstance(value, ReconcileSignal):
        return value
    if value is None:
        return ReconcileSignal()
    if not isinstance(value, dict):
        raise BadPayloadError(
            f'{handler} takes an object such as {{"reason": "why"}}, got {type(value).__name__}'
        )
    try:
        return ReconcileSignal.model_validate(value)
    except (ValidationError, RecursionError, ValueError) as err:
        raise BadPayloadError(f"{handler}: {_first_problem(err)}") from None


def ignored(extra: tuple[object, ...]) -> bool:
    """Whether a handler that takes nothing was sent something more than ``null`` or ``{}``."""
    return any(item not in (None, {}) for item in extra)


def _first_problem(err: Exception) -> str:
    if isinstance(err, ValidationError):
        problem = err.errors(include_url=False, include_input=False)[0]
        field = ".".join(str(p) for p in problem["loc"]) or "the argument"
        text = f"field {field}: {problem['msg']}"
    else:
        text = f"unreadable argument ({type(err).__name__})"
    return " ".join(text.split())[:MESSAGE_LIMIT]
