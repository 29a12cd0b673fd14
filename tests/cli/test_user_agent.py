"""The User-Agent of each process: the product, its installed version and the process's role, on the
client every process builds (instead of the client library's generic ``OpenAPI-Generator/...``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmisvc_runtime import kube
from llmisvc_runtime.version import package_version, user_agent
from tests.builders.kube import UNREACHABLE_KUBECONFIG as KUBECONFIG


@pytest.mark.parametrize("role", ["worker", "watcher", "cli"])
def test_the_user_agent_names_the_product_its_version_and_the_process(role: str) -> None:
    assert user_agent(role) == f"llmisvc-router/{package_version()} ({role})"  # type: ignore[arg-type]


def test_the_version_is_the_installed_packages() -> None:
    assert package_version() not in ("", "0.0.0")


def test_a_client_sends_its_processs_agent_and_a_command_is_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    watcher = kube.load_kube(str(path), role="watcher")
    command = kube.load_kube(str(path))
    try:
        assert watcher.user_agent == user_agent("watcher")
        assert command.user_agent == user_agent("cli")
    finally:
        watcher.close()
        command.close()
