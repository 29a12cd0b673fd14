"""Two words for every failure: the activities' ``ApplicationError`` types are one enum, raised as
permanent or transient, and the core's exceptions have two roots (bad input, a step that failed)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from datetime import timedelta

import pytest
from temporalio.exceptions import ApplicationErrorCategory

import llmisvc_core
from activities import errors
from activities.errors import PERMANENT, ErrorType
from llmisvc_core.errors import InvalidInputError, StepFailedError
from workflows import activity_options


def test_the_type_strings_stay_those_of_the_recorded_histories_and_the_docs() -> None:
    assert sorted(t.value for t in ErrorType) == [
        "AttemptOutOfTime",
        "ClusterCacheNotSynced",
        "Conflicts",
        "InvalidLLMInferenceService",
        "KubernetesConflict",
        "KubernetesRejected",
        "KubernetesTooManyRequests",
        "KubernetesUnavailable",
        "ObjectNestedTooDeep",
        "ShadowMode",
        "StalePlan",
    ]


def test_the_activity_retry_policy_retries_no_permanent_type() -> None:
    policy = activity_options.ACTIVITY_RETRY.non_retryable_error_types
    assert set(policy or []) == {t.value for t in PERMANENT}


@pytest.mark.parametrize("type_", sorted(PERMANENT))
def test_a_permanent_error_is_not_retried(type_: ErrorType) -> None:
    error = errors.permanent(type_, "message", benign=True)
    assert (error.type, error.non_retryable, error.category) == (
        type_.value,
        True,
        ApplicationErrorCategory.BENIGN,
    )


@pytest.mark.parametrize("type_", sorted(set(ErrorType) - PERMANENT))
def test_a_transient_error_is_retried_after_its_delay(type_: ErrorType) -> None:
    error = errors.transient(type_, "message", delay=timedelta(seconds=3))
    assert (error.type, error.non_retryable, error.next_retry_delay) == (
        type_.value,
        False,
        timedelta(seconds=3),
    )


def test_a_type_raised_with_the_other_word_is_refused() -> None:
    with pytest.raises(ValueError, match="transient"):
        errors.permanent(ErrorType.TRANSIENT, "message")
    with pytest.raises(ValueError, match="permanent"):
        errors.transient(ErrorType.REJECTED, "message")


def _core_exceptions() -> list[type[Exception]]:
    found: dict[str, type[Exception]] = {}
    for info in pkgutil.walk_packages(llmisvc_core.__path__, "llmisvc_core."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, Exception)
                and value.__module__ == info.name
                and not name.startswith("_")  # a pass's own control flow, caught where it is raised
            ):
                found[f"{info.name}.{name}"] = value
    return [found[name] for name in sorted(found)]


@pytest.mark.parametrize("exception", _core_exceptions(), ids=lambda e: e.__name__)
def test_every_core_exception_is_bad_input_or_a_failed_step(exception: type[Exception]) -> None:
    assert issubclass(exception, (InvalidInputError, StepFailedError))
