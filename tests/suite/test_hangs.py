"""The suite's own safety net (``[tool.pytest.ini_options]`` in pyproject.toml): a test that hangs ends
the run within its timeout with every thread's stack, even when the hung code keeps the process from
exiting or holds the GIL so that no Python thread can run.

Each case runs an inner pytest in a subprocess (the timeout ends the process it fires in) with this
project's pytest settings, and shorter timeouts so that the hang is quick to see."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
#: Far more than an inner run takes; pytester kills it after this.
INNER_RUN_LIMIT = 60

HUNG_ON_A_THREAD = """
import threading
from concurrent.futures import ThreadPoolExecutor


def wait_for_a_heartbeat_that_never_comes(never):
    never.wait()


def test_hangs_waiting_for_a_thread():
    never = threading.Event()
    # An activity's thread, stuck: the executor joins its threads at exit, so it alone would keep the
    # process from ending if the timeout only failed the test.
    executor = ThreadPoolExecutor(1, thread_name_prefix="activity")
    executor.submit(wait_for_a_heartbeat_that_never_comes, never).result()


def test_never_reached():
    pass
"""

HOLDING_THE_GIL = """
import ctypes


def test_holds_the_gil():
    ctypes.PyDLL(None).sleep(30)  # a C call made without releasing the GIL: no Python thread runs
"""


def project_pytest_settings() -> str:
    """The ``[tool.pytest.ini_options]`` table of this project's pyproject.toml, verbatim."""
    text = (ROOT / "pyproject.toml").read_text()
    start = text.index("[tool.pytest.ini_options]")
    end = text.find("\n[", start + 1)
    return text[start:end]


def run_inner(pytester: pytest.Pytester, source: str, *overrides: str) -> tuple[pytest.RunResult, float]:
    pytester.makepyprojecttoml(project_pytest_settings())
    path = pytester.makepyfile(test_inner=source)
    began = time.monotonic()
    result = pytester.runpytest_subprocess(
        str(path), "-p", "no:cacheprovider", *overrides, timeout=INNER_RUN_LIMIT
    )
    return result, time.monotonic() - began


def test_a_test_hung_on_a_thread_ends_the_run_at_its_timeout_with_the_hung_frames_in_the_stacks(
    pytester: pytest.Pytester,
) -> None:
    result, took = run_inner(pytester, HUNG_ON_A_THREAD, "-o", "timeout=2")
    out = result.stdout.str()
    assert result.ret == 1
    assert "Timeout" in out
    assert "Stack of activity_0" in out and "in wait_for_a_heartbeat_that_never_comes" in out
    assert "in test_hangs_waiting_for_a_thread" in out  # the main thread's stack too
    # The process ended right there (the stuck thread did not hold it), so no later test and no summary.
    assert "test_never_reached" not in out and "passed" not in out
    assert took < INNER_RUN_LIMIT / 2


def test_a_test_holding_the_gil_is_ended_with_the_stacks_by_the_faulthandler_backstop(
    pytester: pytest.Pytester,
) -> None:
    result, took = run_inner(pytester, HOLDING_THE_GIL, "-o", "timeout=1", "-o", "faulthandler_timeout=3")
    err = result.stderr.str()
    assert result.ret == 1
    assert "Timeout (0:00:03)!" in err and "in test_holds_the_gil" in err
    assert took < 30 - 5  # well before the C call would have returned by itself


def test_the_faulthandler_backstop_comes_after_every_tests_own_timeout(
    request: pytest.FixtureRequest,
) -> None:
    config = request.config
    default = float(config.getini("timeout"))
    marked = [float(m.args[0]) for item in request.session.items for m in item.iter_markers("timeout")]
    assert float(config.getini("faulthandler_timeout")) > max([default, *marked])
