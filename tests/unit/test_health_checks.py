"""What /healthz and /readyz answer, from plain state (``llmisvc_runtime.health``): a loop that has not
listed is not ready at once, a loop or a connection that fails is not ready only after the grace, a kind that
is not served is fine, liveness ignores dependencies, and the bodies read like kube-apiserver's."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from llmisvc_cache.model import LoopHealth
from llmisvc_runtime import health
from llmisvc_runtime.health import CheckResult, ConnectionHealth
from llmisvc_runtime.probes import Probes

ROUTES = "httproutes.gateway.networking.k8s.io/v1 in llm"
GRACE = 30.0


@pytest.mark.parametrize(
    ("loop", "now", "problem"),
    [
        pytest.param(LoopHealth(ROUTES, 0.0, listed=False), 42.0, "not listed for 42s", id="not-listed-yet"),
        pytest.param(
            LoopHealth(ROUTES, 0.0, listed=False, failing_since=1.0, last_error="HTTP 403: forbidden"),
            5.0,
            "not listed for 5s: HTTP 403: forbidden",
            id="not-listed-refused-within-the-grace-too",
        ),
        pytest.param(LoopHealth(ROUTES, 0.0, listed=True), 500.0, None, id="listed-and-answered"),
        pytest.param(
            LoopHealth(ROUTES, 0.0, listed=True, failing_since=100.0, last_error="refused"),
            100.0 + GRACE,
            None,
            id="failing-within-the-grace",
        ),
        pytest.param(
            LoopHealth(ROUTES, 0.0, listed=True, failing_since=100.0, last_error="HTTP 500: boom"),
            100.0 + GRACE + 1,
            "failing for 31s: HTTP 500: boom",
            id="failing-past-the-grace",
        ),
    ],
)
def test_a_watch_is_ready_once_listed_and_unless_it_has_failed_past_the_grace(
    loop: LoopHealth, now: float, problem: str | None
) -> None:
    assert health.watches([loop], now, GRACE) == [CheckResult(f"watch {ROUTES}", problem)]


def test_a_cache_with_no_watch_started_is_not_ready() -> None:
    assert health.watches([], 1.0, GRACE) == [CheckResult("watches", "no watch started yet")]


@pytest.mark.parametrize(
    ("state", "now", "ok"),
    [
        pytest.param(ConnectionHealth(), 1000.0, True, id="passed-last-time"),
        pytest.param(ConnectionHealth(10.0, "deadline exceeded"), 10.0 + GRACE, True, id="within-the-grace"),
        pytest.param(ConnectionHealth(10.0, "deadline exceeded"), 11.0 + GRACE, False, id="past-the-grace"),
    ],
)
def test_temporal_is_unready_once_unreachable_for_longer_than_the_grace(
    state: ConnectionHealth, now: float, ok: bool
) -> None:
    result = health.connection("temporal", "Temporal at t:7233", state, now, GRACE)
    assert result.ok is ok
    if not ok:
        assert result.problem == "Temporal at t:7233 unreachable for 31s: deadline exceeded"


def test_a_run_of_failures_keeps_its_start_and_a_success_ends_it() -> None:
    state = ConnectionHealth().failed(5.0, "a").failed(9.0, "b")
    assert state == ConnectionHealth(5.0, "b")
    assert state.passed() == ConnectionHealth()


def test_the_event_loop_is_live_until_its_heartbeat_is_older_than_the_stall() -> None:
    assert health.event_loop(100.0, 130.0, 30.0).ok
    assert health.event_loop(100.0, 131.0, 30.0).problem == "no heartbeat for 31s (the event loop is blocked)"


def test_passing_checks_answer_ok_and_failing_ones_503_naming_each_failure() -> None:
    passing = [CheckResult("ping"), CheckResult("temporal")]
    assert health.answer("readyz", passing, verbose=False) == (200, "ok\n")
    failing = [*passing, CheckResult(f"watch {ROUTES}", "not listed for 42s")]
    assert health.answer("readyz", failing, verbose=False) == (503, f"watch {ROUTES}: not listed for 42s\n")


def test_verbose_lists_every_check_as_kube_apiserver_does() -> None:
    results = [CheckResult("ping"), CheckResult("temporal", "Temporal at t unreachable for 9s: x")]
    status, body = health.answer("readyz", results, verbose=True)
    assert status == 503
    assert body.splitlines() == [
        "[+]ping ok",
        "[-]temporal failed: Temporal at t unreachable for 9s: x",
        "readyz check failed",
    ]
    assert health.answer("healthz", [CheckResult("ping")], verbose=True) == (
        200,
        "[+]ping ok\nhealthz check passed\n",
    )


def test_a_process_is_not_ready_until_each_of_its_parts_has_started() -> None:
    probes = Probes(GRACE, expected=("temporal", "watches", "worker"))
    assert [r for r in probes.readiness(0.0) if not r.ok] == [
        CheckResult("temporal", "not started yet"),
        CheckResult("watches", "not started yet"),
        CheckResult("worker", "not started yet"),
    ]
    probes.watch_worker(SimpleNamespace(is_running=True))
    assert "worker" not in {r.name for r in probes.readiness(0.0) if not r.ok}
    assert all(r.ok for r in probes.liveness(0.0))  # liveness never waits for the parts
