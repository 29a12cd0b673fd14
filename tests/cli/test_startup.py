"""Starting a process (``llmisvc_runtime``): whatever stops it is one ``StartupError`` with a one-line
message and the exit status of its class, printed once by the command line, the same for every command."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest

from llmisvc_router.cli import main
from llmisvc_runtime import exit_codes, kube, temporal
from llmisvc_runtime.errors import StartupError
from llmisvc_runtime.settings import OrchestratorSettings, SettingsError
from llmisvc_runtime.telemetry import TelemetryError, metrics_runtime

GARBAGE = {
    "yaml-that-does-not-parse": "clusters: [",
    "no-current-context": "apiVersion: v1\nkind: Config\n",
    "fields-of-the-wrong-shape": "apiVersion: v1\nclusters: 5\n",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("content", GARBAGE.values(), ids=GARBAGE.keys())
def test_a_kubeconfig_the_client_cannot_use_is_a_startup_error_naming_the_file(
    content: str, tmp_path: Path
) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(content)
    with pytest.raises(StartupError) as raised:
        kube.load_kube(str(path))
    assert raised.value.code == exit_codes.USAGE
    message = str(raised.value)
    assert message.startswith(f"kubeconfig {path}: ") and "\n" not in message
    assert message.endswith("(check the file, or choose another with --kubeconfig)")


@pytest.mark.parametrize("command", ["worker", "watch", "status"])
def test_every_command_prints_a_startup_error_as_one_line_and_exits_with_its_status(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(GARBAGE["no-current-context"])
    args = [command, *(["llm/opt"] if command == "status" else []), "--kubeconfig", str(path)]
    assert main(args) == exit_codes.USAGE
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"llmisvc-router {command}: kubeconfig {path}: ") and "\n" not in err


def test_settings_and_telemetry_errors_are_startup_errors_of_their_class() -> None:
    with pytest.raises(StartupError) as bad_setting:
        OrchestratorSettings.from_env({"LLMISVC_ROUTER_RESYNC_SECONDS": "soon"})
    assert isinstance(bad_setting.value, SettingsError) and bad_setting.value.code == exit_codes.USAGE
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(StartupError) as taken:
            metrics_runtime(busy.getsockname()[1], "127.0.0.1")
    assert isinstance(taken.value, TelemetryError) and taken.value.code == exit_codes.UNAVAILABLE


def test_an_unreachable_temporal_is_retried_for_the_wait_then_named_in_one_line() -> None:
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(StartupError) as raised:
        asyncio.run(temporal.connect(address=address, wait=1.0))
    assert time.monotonic() - started >= 1.0
    assert raised.value.code == exit_codes.UNAVAILABLE
    assert str(raised.value).startswith(f"cannot connect to Temporal at {address}: ")
    assert "\n" not in str(raised.value)
