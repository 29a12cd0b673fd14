"""The mode and the managed-services selection as settings and flags (worker, run, watch): each flag
overrides its variable, the worker's activities get them, and a bad value is one line naming the
variable or the flag."""

from __future__ import annotations

import pytest

from activities.management import Mode
from llmisvc_router import options
from llmisvc_router.cli import build_parser
from llmisvc_runtime.settings import OrchestratorSettings, SettingsError

SERVICE = {"metadata": {"namespace": "llm", "name": "opt", "labels": {"router": "llmisvc"}}}


def test_by_default_every_service_is_managed_in_write_mode() -> None:
    management = OrchestratorSettings.from_env({}).management()
    assert management.mode is Mode.WRITE and management.handoff_reason(SERVICE) is None


def test_the_variables_set_the_mode_and_the_selection() -> None:
    settings = OrchestratorSettings.from_env(
        {
            "LLMISVC_ROUTER_MODE": "shadow",
            "LLMISVC_ROUTER_SERVICE_SELECTOR": "router=kserve",
            "LLMISVC_ROUTER_NAMESPACES": "llm,team-a",
        }
    )
    management = settings.management()
    assert management.shadow
    assert (
        management.handoff_reason(SERVICE) == "llm/opt no longer matches the service selector 'router=kserve'"
    )
    other = {"metadata": {"namespace": "elsewhere", "name": "x", "labels": {"router": "kserve"}}}
    assert management.handoff_reason(other) == "elsewhere/x is outside the managed namespaces (llm, team-a)"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LLMISVC_ROUTER_MODE": "dry-run"}, "LLMISVC_ROUTER_MODE: Input should be 'write' or 'shadow'"),
        (
            {"LLMISVC_ROUTER_SERVICE_SELECTOR": "router in ()"},
            "LLMISVC_ROUTER_SERVICE_SELECTOR: unable to parse requirement: 'router in ()': in needs values",
        ),
    ],
)
def test_a_bad_mode_or_selector_is_one_line_naming_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as err:
        OrchestratorSettings.from_env(env)
    assert str(err.value) == message


@pytest.mark.parametrize("command", ["worker", "run"])
def test_the_flags_override_the_variables(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMISVC_ROUTER_MODE", "write")
    monkeypatch.setenv("LLMISVC_ROUTER_SERVICE_SELECTOR", "router=kserve")
    flags = ["--mode", "shadow", "--service-selector", "router=llmisvc", "--namespace", "llm"]
    settings = options.settings(build_parser().parse_args([command, *flags]))
    assert (settings.mode, settings.service_selector, settings.namespaces) == (
        "shadow",
        "router=llmisvc",
        ["llm"],
    )


def test_a_bad_selector_flag_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLMISVC_ROUTER_SERVICE_SELECTOR", raising=False)
    args = build_parser().parse_args(["worker", "--service-selector", "a=b c"])
    with pytest.raises(SettingsError, match=r"^--service-selector: invalid label value 'b c'"):
        options.settings(args)


@pytest.mark.parametrize("command", ["worker", "run", "watch"])
def test_every_long_running_command_takes_the_selection_flags_over_the_variables(command: str) -> None:
    env = {"LLMISVC_ROUTER_NAMESPACES": "team-a", "LLMISVC_ROUTER_SERVICE_SELECTOR": "router=kserve"}
    args = build_parser().parse_args([command, "--service-selector", "router=llmisvc", "--namespace", "llm"])
    settings = options.settings(args, env)
    assert (settings.service_selector, settings.namespaces) == ("router=llmisvc", ["llm"])
    assert options.settings(build_parser().parse_args([command]), env).namespaces == ["team-a"]
