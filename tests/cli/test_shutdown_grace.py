"""The worker's shutdown grace: how long running activities may finish after SIGTERM. A variable and a
flag, a default that covers an activity attempt, a one-line error for a value that cannot be used, and the
number reaching the worker the factory builds."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from unittest import mock

import pytest

from llmisvc_router import options
from llmisvc_router.cli import build_parser
from llmisvc_runtime.settings import OrchestratorSettings, SettingsError, WorkerSizing
from worker.factory import build_worker
from workflows.activity_options import ATTEMPT_TIMEOUT


def test_the_default_grace_lets_a_whole_activity_attempt_finish() -> None:
    grace = OrchestratorSettings.from_env({}).shutdown_grace_seconds
    assert timedelta(seconds=grace) >= ATTEMPT_TIMEOUT


def test_the_variable_sets_the_grace_and_the_flag_overrides_it() -> None:
    settings = OrchestratorSettings.from_env({"LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS": "45"})
    assert settings.shutdown_grace_seconds == 45
    assert settings.with_flags(shutdown_grace_seconds=10).shutdown_grace_seconds == 10


@pytest.mark.parametrize("command", ["worker", "run"])
def test_the_flag_is_on_the_commands_that_run_a_worker(command: str) -> None:
    args = build_parser().parse_args([command, "--shutdown-grace-seconds", "12"])
    assert options.settings(args).shutdown_grace_seconds == 12


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            lambda: OrchestratorSettings.from_env({"LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS": "soon"}),
            "LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS: Input should be a valid integer",
            id="variable-not-a-number",
        ),
        pytest.param(
            lambda: OrchestratorSettings.from_env({}).with_flags(shutdown_grace_seconds=0),
            "--shutdown-grace-seconds: Input should be greater than or equal to 1",
            id="flag-zero",
        ),
    ],
)
def test_a_grace_that_cannot_be_used_is_one_line_naming_its_setting(make, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SettingsError) as raised:
        make()
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_the_grace_reaches_the_temporal_worker() -> None:
    with (
        mock.patch("worker.factory.Worker") as worker,
        ThreadPoolExecutor(1) as executor,
    ):
        activities = mock.Mock()
        activities.all.return_value = []  # the activity callables: none needed to build the worker
        build_worker(
            mock.Mock(), "q", activities, executor, WorkerSizing(), shutdown_grace=timedelta(seconds=7)
        )
    assert worker.call_args.kwargs["graceful_shutdown_timeout"] == timedelta(seconds=7)
