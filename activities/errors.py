"""The two words every failure of an activity or a pass is told in, and how API failures become them.

:class:`ErrorType` names every ``ApplicationError`` type the product raises. :func:`transient` builds
one that the activity retry policy retries (with the server's delay, when it gave one); :func:`permanent`
one that fails the activity for good, with a type the workflow acts on; the retry policy's
non-retryable list is :data:`NON_RETRYABLE`, the permanent types.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities.payload_guard import clip
from llmisvc_kube.api import ApiError, Failure


class ErrorType(enum.StrEnum):
    """Every ``ApplicationError`` type the product raises. The strings are in recorded histories, pass
    summaries and the docs: they do not change."""

    #: No answer, 5xx, a conflict outside the phase writes, a merged spec that kept changing while the
    #: API server checked it: Temporal retries the activity.
    TRANSIENT = "KubernetesUnavailable"
    #: 429: retried after the server's ``Retry-After``.
    TOO_MANY_REQUESTS = "KubernetesTooManyRequests"
    #: A phase write lost a race (409): the workflow plans the pass again after a short back-off.
    CONFLICT = "KubernetesConflict"
    #: The API server refused the request (another 4xx): retrying it as it is cannot help.
    REJECTED = "KubernetesRejected"
    #: The plan no longer fits the world (``activities.write_guard``): plan again at once, no back-off.
    STALE_PLAN = "StalePlan"
    #: The service itself cannot be read (a field of the wrong shape, nested too deep): the user's to fix.
    INVALID_OBJECT = "InvalidLLMInferenceService"
    #: The cluster cache has not listed everything yet: retried.
    CACHE_NOT_SYNCED = "ClusterCacheNotSynced"
    #: An object the pass reads is nested past ``llmisvc_core.limits.MAX_DEPTH``: it must change first,
    #: and its change signals the services that read it.
    TOO_DEEP = "ObjectNestedTooDeep"
    #: The attempt is too near its timeout for one more request (``activities.attempts``): retried.
    OUT_OF_TIME = "AttemptOutOfTime"
    #: A write refused in shadow mode (``activities.rollout_activities``).
    SHADOW_MODE = "ShadowMode"
    #: The workflow's own: a pass whose writes kept losing races ends, to be re-checked later.
    KEPT_CONFLICTING = "Conflicts"


#: The types :func:`permanent` raises.
PERMANENT = frozenset(
    {
        ErrorType.CONFLICT,
        ErrorType.REJECTED,
        ErrorType.STALE_PLAN,
        ErrorType.INVALID_OBJECT,
        ErrorType.TOO_DEEP,
        ErrorType.SHADOW_MODE,
    }
)
#: The activity retry policy's ``non_retryable_error_types``.
NON_RETRYABLE = sorted(t.value for t in PERMANENT)
#: Failure types the workflow answers by starting the pass again from fresh reads.
RESTART_PASS = frozenset({ErrorType.CONFLICT, ErrorType.STALE_PLAN})


def permanent(type_: ErrorType, message: str, *, benign: bool = False) -> ApplicationError:
    """An error that fails the activity for good. ``benign``: expected and answered (the user's to fix,
    or a plan to make again), so the worker logs it without a traceback."""
    if type_ not in PERMANENT:
        raise ValueError(f"{type_} is retried: raise it with transient()")
    category = ApplicationErrorCategory.BENIGN if benign else ApplicationErrorCategory.UNSPECIFIED
    return ApplicationError(message, type=type_.value, non_retryable=True, category=category)


def transient(type_: ErrorType, message: str, *, delay: timedelta | None = None) -> ApplicationError:
    """An error the retry policy retries, after ``delay`` when given (instead of its back-off)."""
    if type_ in PERMANENT:
        raise ValueError(f"{type_} is not retried: raise it with permanent()")
    return ApplicationError(message, type=type_.value, next_retry_delay=delay)


def as_activity_error(err: ApiError) -> ApplicationError:
    """Transient (and a conflict, see :attr:`ErrorType.TRANSIENT`) -> retried, a 429 after its
    ``Retry-After``; anything else -> a permanent ``REJECTED``.

    The API server's message is clipped: a failure is kept in the history too (encrypted in a payload
    when the codec is on), and a 422 may quote every value it refused."""
    message = clip(err.message)
    if err.status == 429:
        delay = timedelta(seconds=err.retry_after) if err.retry_after else None
        return transient(ErrorType.TOO_MANY_REQUESTS, message, delay=delay)
    if err.failure in (Failure.TRANSIENT, Failure.CONFLICT):
        # A conflict outside the phase writes (a status write that kept conflicting after its own
        # re-reads, a rollout's patch) is retried by Temporal: the new attempt reads again.
        return transient(ErrorType.TRANSIENT, message)
    return permanent(ErrorType.REJECTED, f"HTTP {err.status}: {message}")


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
    return permanent(ErrorType.CONFLICT, clip(err.message))


def stale_plan(message: str) -> ApplicationError:
    """The service was replaced, or a target is not the object the plan saw: plan again from fresh
    reads, without carrying out any more of this plan's writes (expected, and answered at once)."""
    return permanent(ErrorType.STALE_PLAN, f"stale plan: {message}", benign=True)
