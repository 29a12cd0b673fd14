"""One reading of a failed Kubernetes API call (``llmisvc_kube.api.Failure``), which the activities and
the cluster cache's loops both act on."""

from __future__ import annotations

import pytest

from llmisvc_kube.api import ApiError, Failure


@pytest.mark.parametrize(
    ("status", "failure"),
    [
        pytest.param(404, Failure.ABSENT, id="404-absent-or-not-served"),
        pytest.param(409, Failure.CONFLICT, id="409-conflict"),
        pytest.param(0, Failure.TRANSIENT, id="no-answer"),
        pytest.param(429, Failure.TRANSIENT, id="429-too-many-requests"),
        pytest.param(500, Failure.TRANSIENT, id="500"),
        pytest.param(503, Failure.TRANSIENT, id="503"),
        pytest.param(400, Failure.REJECTED, id="400"),
        pytest.param(403, Failure.REJECTED, id="403-forbidden"),
        pytest.param(410, Failure.REJECTED, id="410-gone"),
        pytest.param(422, Failure.REJECTED, id="422-invalid"),
    ],
)
def test_every_answer_reads_as_exactly_one_failure(status: int, failure: Failure) -> None:
    assert ApiError(status, "message").failure is failure


def test_only_410_says_a_watch_expired() -> None:
    assert [s for s in (0, 404, 409, 410, 429, 500) if ApiError(s, "m").expired] == [410]
