"""Worker sizing settings: every knob has a variable and a flag, the Kubernetes connection pool is never
smaller than the activity threads that share it, and the numbers reach the worker and the client."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmisvc_kube.client import load_api_client
from llmisvc_router import options
from llmisvc_router.cli import build_parser
from llmisvc_runtime.settings import SPARE_CONNECTIONS, OrchestratorSettings, SettingsError, WorkerSizing
from tests.builders.kube import UNREACHABLE_KUBECONFIG as KUBECONFIG


def test_defaults_leave_the_pool_room_beyond_the_executor_threads() -> None:
    settings = OrchestratorSettings.from_env({})
    assert settings.sizing() == WorkerSizing(
        activity_threads=16, max_cached_workflows=1000, workflow_task_pollers=5, activity_task_pollers=5
    )
    assert settings.kube_connections == 32 + SPARE_CONNECTIONS


def test_every_activity_slot_and_every_local_activity_slot_has_a_thread() -> None:
    """Local activities run on the same executor as the others: with the SDK's 100 local slots on 16
    threads, ``fetch_gateways`` of 300 new services timed out waiting for a thread."""
    sizing = WorkerSizing(activity_threads=12)
    assert sizing.local_activity_slots == 12
    assert sizing.executor_threads == 24


def test_each_sizing_variable_sets_its_knob() -> None:
    settings = OrchestratorSettings.from_env(
        {
            "LLMISVC_ROUTER_ACTIVITY_THREADS": "24",
            "LLMISVC_ROUTER_MAX_CACHED_WORKFLOWS": "3000",
            "LLMISVC_ROUTER_WORKFLOW_TASK_POLLERS": "8",
            "LLMISVC_ROUTER_ACTIVITY_TASK_POLLERS": "4",
            "LLMISVC_ROUTER_KUBE_CONNECTIONS": "30",
        }
    )
    assert settings.sizing() == WorkerSizing(24, 3000, 8, 4)
    assert settings.kube_connections == 30


def test_the_pool_follows_the_activity_threads_unless_set() -> None:
    settings = OrchestratorSettings.from_env({"LLMISVC_ROUTER_ACTIVITY_THREADS": "40"})
    assert settings.kube_connections == 80 + SPARE_CONNECTIONS
    assert settings.with_flags(activity_threads=50).kube_connections == 100 + SPARE_CONNECTIONS


@pytest.mark.parametrize(
    ("env", "message"),
    [
        pytest.param(
            {"LLMISVC_ROUTER_ACTIVITY_THREADS": "16", "LLMISVC_ROUTER_KUBE_CONNECTIONS": "10"},
            "LLMISVC_ROUTER_KUBE_CONNECTIONS: 10 connections is fewer than the 16 activity threads",
            id="pool-smaller-than-threads",
        ),
        pytest.param(
            {"LLMISVC_ROUTER_WORKFLOW_TASK_POLLERS": "1"},
            "LLMISVC_ROUTER_WORKFLOW_TASK_POLLERS: Input should be greater than or equal to 2",
            id="one-workflow-poller-with-a-cache",
        ),
        pytest.param(
            {"LLMISVC_ROUTER_ACTIVITY_THREADS": "0"},
            "LLMISVC_ROUTER_ACTIVITY_THREADS: Input should be greater than or equal to 1",
            id="no-threads",
        ),
        pytest.param(
            {"LLMISVC_ROUTER_MAX_CACHED_WORKFLOWS": "many"},
            "LLMISVC_ROUTER_MAX_CACHED_WORKFLOWS: Input should be a valid integer",
            id="not-a-number",
        ),
    ],
)
def test_unusable_sizing_is_one_line_naming_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as err:
        OrchestratorSettings.from_env(env)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("command", ["worker", "run"])
def test_sizing_flags_override_the_environment(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMISVC_ROUTER_ACTIVITY_THREADS", "8")
    flags = "--activity-threads 20 --max-cached-workflows 500 --kube-connections 25"
    flags += " --workflow-task-pollers 6 --activity-task-pollers 3"
    args = build_parser().parse_args([command, *flags.split()])
    settings = options.settings(args)
    assert settings.sizing() == WorkerSizing(20, 500, 6, 3)
    assert settings.kube_connections == 25


def test_a_pool_flag_smaller_than_the_threads_names_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLMISVC_ROUTER_ACTIVITY_THREADS", raising=False)
    args = build_parser().parse_args(["worker", "--kube-connections", "4"])
    with pytest.raises(SettingsError, match=r"^--kube-connections: 4 connections is fewer than the 16"):
        options.settings(args)


def test_the_kubernetes_client_keeps_as_many_connections_as_configured(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    api_client = load_api_client(str(kubeconfig), None, connections=28)
    try:
        assert api_client.rest_client.pool_manager.connection_pool_kw["maxsize"] == 28
    finally:
        api_client.close()  # type: ignore[no-untyped-call]
