"""The probe port and the readiness grace: on by default at 8081 (controller-runtime's), a variable and a
``--probe-port`` flag on every long-running command, 0 turning the probes off, and a one-line error naming
the setting for a value that cannot be used."""

from __future__ import annotations

import pytest

from llmisvc_router import options
from llmisvc_router.cli import build_parser
from llmisvc_runtime.settings import OrchestratorSettings, SettingsError


def test_the_probes_are_on_by_default_at_8081_with_a_30s_grace() -> None:
    settings = OrchestratorSettings.from_env({})
    assert (settings.probe_port, settings.readiness_grace_seconds) == (8081, 30.0)


def test_the_variables_set_the_port_and_the_grace_and_the_flag_overrides_the_port() -> None:
    env = {"LLMISVC_ROUTER_PROBE_PORT": "9090", "LLMISVC_ROUTER_READINESS_GRACE_SECONDS": "2.5"}
    settings = OrchestratorSettings.from_env(env)
    assert (settings.probe_port, settings.readiness_grace_seconds) == (9090, 2.5)
    assert settings.with_flags(probe_port=0).probe_port == 0


@pytest.mark.parametrize("command", ["worker", "run", "watch"])
def test_the_flag_is_on_every_long_running_command(command: str) -> None:
    args = build_parser().parse_args([command, "--probe-port", "0"])
    settings = options.settings(args, {}) if command == "watch" else options.settings(args)
    assert settings.probe_port == 0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            lambda: OrchestratorSettings.from_env({"LLMISVC_ROUTER_PROBE_PORT": "http"}),
            "LLMISVC_ROUTER_PROBE_PORT: Input should be a valid integer",
            id="variable-not-a-number",
        ),
        pytest.param(
            lambda: OrchestratorSettings.from_env({}).with_flags(probe_port=70000),
            "--probe-port: Input should be less than or equal to 65535",
            id="flag-too-large",
        ),
        pytest.param(
            lambda: OrchestratorSettings.from_env({"LLMISVC_ROUTER_READINESS_GRACE_SECONDS": "0"}),
            "LLMISVC_ROUTER_READINESS_GRACE_SECONDS: Input should be greater than 0",
            id="grace-zero",
        ),
    ],
)
def test_a_probe_setting_that_cannot_be_used_is_one_line_naming_it(make, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SettingsError) as raised:
        make()
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)
