"""How API failures become Temporal errors: transient ones are retried by the activity retry policy,
permanent ones fail the activity for good with a ``type`` the workflow can act on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities.payload_guard import clip
from llmisvc_kube.api import ApiError, Failure

TRANSIENT = "KubernetesUnavailable"
TOO_MANY_REQUESTS = "KubernetesTooManyRequests"
CONFLICT = "KubernetesConflict"
REJECTED = "KubernetesRejected"
#: The plan no longer fits the world (``activities.write_guard``): plan again at once, no back-off.
STALE_PLAN = "StalePlan"
#: Failure types the workflow answers by starting the pass again from fresh reads.
RESTART_PASS = frozenset({CONFLICT, STALE_PLAN})
NON_RETRYABLE = [REJECTED, CONFLICT, STALE_PLAN]


def as_activity_error(err: ApiError) -> ApplicationError:
    """Transient -> retryable (429 honours Retry-After); anything else -> non-retryable ``REJECTED``.

    The API server's message is clipped: a failure is kept in the history too (encrypted in a payload
    when the codec is on), and a 422 may quote every value it refused."""
    message = clip(err.message)
    if err.status == 429:
        delay = timedelta(seconds=err.retry_after) if err.retry_after else None
        return ApplicationError(message, type=TOO_MANY_REQUESTS, next_retry_delay=delay)
    if err.failure in (Failure.TRANSIENT, Failure.CONFLICT):
        # A conflict outside the phase writes (a status write that kept conflicting after its own
        # re-reads, a rollout's patch) is retried by Temporal: the new attempt reads again.
        return ApplicationError(message, type=TRANSIENT)
    return ApplicationError(f"HTTP {err.status}: {message}", type=REJECTED, non_retryable=True)


@contextmanager
def translated() -> Iterator[None]:
    """Inside an activity: an :class:`ApiError` raised in the block leaves it as Temporal's error, by
    :func:`as_activity_error` (transient ones retried, the rest final)."""
    try:
        yield
    except ApiError as err:
        raise as_activity_error(err) from err


def stale_write(err: ApiError) -> ApplicationError:
    """A write lost a race (409): the plan was made from an old read, so the whole pass starts again."""
    return ApplicationError(clip(err.message), type=CONFLICT, non_retryable=True)


def stale_plan(message: str) -> ApplicationError:
    """The service was replaced, or a target is not the object the plan saw: plan again from fresh
    reads, without carrying out any more of this plan's writes."""
    return ApplicationError(
        f"stale plan: {message}",
        type=STALE_PLAN,
        non_retryable=True,
        category=ApplicationErrorCategory.BENIGN,  # expected, and answered at once: no traceback in the log
    )
