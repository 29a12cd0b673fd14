"""``llmisvc-router dev`` as a user runs it: the whole stack in one process, driven with ``kubectl`` through
the kubeconfig it writes, stopped with Ctrl-C (SIGINT)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

KUBECTL = "/usr/bin/kubectl"
NAMESPACE = "llm"
EXAMPLE = "facebook-opt-125m"
SECOND = "second-model"
STARTUP = 90.0  # the Temporal dev server, the stand-in, the controllers, the first passes
STOP_WITHIN = 20.0
T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DevStack:
    def __init__(
        self, process: subprocess.Popen[bytes], kubeconfig: Path, stdout: Path, stderr: Path
    ) -> None:
        self.process = process
        self.kubeconfig = kubeconfig
        self.stdout = stdout
        self.stderr = stderr

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        command = [KUBECTL, "--kubeconfig", str(self.kubeconfig), *args]
        return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=30, check=False)

    def get_json(self, *args: str) -> Any:
        done = self.kubectl("get", *args, "-o", "json")
        return json.loads(done.stdout) if done.returncode == 0 else None

    def until(self, probe: Callable[[], T | None], what: str, timeout: float) -> T:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(
                    f"llmisvc-router dev exited with {self.process.returncode}:\n{self.stderr.read_text()}"
                )
            found = self.kubeconfig.exists() and probe()
            if found:
                return found
            time.sleep(0.25)
        pytest.fail(
            f"timed out after {timeout:.0f}s waiting for {what}; stderr:\n{self.stderr.read_text()[-4000:]}"
        )

    def router_ready(self, name: str) -> dict[str, Any] | None:
        svc = self.get_json("llminferenceservices", "-n", NAMESPACE, name)
        conditions = {c["type"]: c for c in ((svc or {}).get("status") or {}).get("conditions") or []}
        return svc if conditions.get("RouterReady", {}).get("status") == "True" else None


@pytest.fixture
def dev(tmp_path: Path) -> Iterator[DevStack]:
    kubeconfig = tmp_path / "kubeconfig"
    stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
    command = [sys.executable, "-m", "llmisvc_router", "dev", "--kubeconfig", str(kubeconfig)]
    command += ["--temporal-port", str(free_port()), "--ui-port", str(free_port())]
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=tmp_path)
    try:
        yield DevStack(process, kubeconfig, stdout, stderr)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def second_service() -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "serving.kserve.io/v1alpha2",
            "kind": "LLMInferenceService",
            "metadata": {"name": SECOND, "namespace": NAMESPACE},
            "spec": {
                "model": {"uri": "hf://Qwen/Qwen2.5-0.5B-Instruct", "name": "Qwen/Qwen2.5-0.5B-Instruct"},
                "router": {"route": {}, "gateway": {}, "scheduler": {}},
            },
        }
    )


def test_dev_stack_reconciles_the_example_and_an_applied_service_and_stops_cleanly_on_ctrl_c(dev):
    example = dev.until(lambda: dev.router_ready(EXAMPLE), f"{NAMESPACE}/{EXAMPLE} RouterReady=True", STARTUP)
    assert example["status"]["url"].endswith(f"/{NAMESPACE}/{EXAMPLE}")

    applied = dev.kubectl("apply", "-f", "-", stdin=second_service())
    assert applied.returncode == 0, applied.stderr

    route = dev.until(
        lambda: dev.get_json("httproutes", "-n", NAMESPACE, f"{SECOND}-kserve-route"),
        f"the managed route of {NAMESPACE}/{SECOND}",
        30,
    )
    assert route["metadata"]["ownerReferences"][0]["name"] == SECOND
    second = dev.until(lambda: dev.router_ready(SECOND), f"{NAMESPACE}/{SECOND} RouterReady=True", 30)
    assert second["status"]["url"].endswith(f"/{NAMESPACE}/{SECOND}")

    dev.process.send_signal(signal.SIGINT)
    try:
        code = dev.process.wait(timeout=STOP_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail(f"llmisvc-router dev did not stop within {STOP_WITHIN:.0f}s of SIGINT")
    stderr = dev.stderr.read_text()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert "llmisvc-router dev: stopped" in stderr
