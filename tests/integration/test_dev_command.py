"""``llmisvc-router dev`` as a user runs it: the whole stack on a real control plane (etcd, kube-apiserver,
kube-controller-manager) with the simulated controllers in a process of their own, driven with ``kubectl``
through the admin kubeconfig it writes, stopped with Ctrl-C (SIGINT)."""

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

from tests.tools import KUBECTL

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "config" / "samples"
NAMESPACE = "llm"
EXAMPLE = "facebook-opt-125m"
#: The control plane (its CRDs take tens of seconds to be Established on a loaded machine), the Temporal
#: dev server, the controllers, the first passes.
STARTUP = 240.0
STOP_WITHIN = 30.0  # the worker and watcher, the controllers, then the control plane's three processes
WORKER = "system:serviceaccount:llmisvc-router:llmisvc-router-worker"
WATCHER = "system:serviceaccount:llmisvc-router:llmisvc-router-watcher"
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

    def can(self, user: str, verb: str, resource: str) -> bool:
        done = self.kubectl("auth", "can-i", verb, resource, "--all-namespaces", "--as", user)
        return done.stdout.strip() == "yes"

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


def sample_services() -> dict[str, str]:
    """The LLMInferenceServices of config/samples, by name, with the file each is in."""
    return {
        doc["metadata"]["name"]: path.name
        for path in sorted(SAMPLES.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc["kind"] == "LLMInferenceService"
    }


def test_dev_stack_reconciles_the_example_and_every_sample_and_stops_cleanly_on_ctrl_c(dev):
    example = dev.until(lambda: dev.router_ready(EXAMPLE), f"{NAMESPACE}/{EXAMPLE} RouterReady=True", STARTUP)
    assert example["status"]["url"].endswith(f"/{NAMESPACE}/{EXAMPLE}")
    # deploy/'s RBAC is what the worker and the watcher are held to: each may do its part, no more.
    assert dev.can(WORKER, "create", "httproutes.gateway.networking.k8s.io")
    assert not dev.can(WORKER, "delete", "llminferenceservices.serving.kserve.io")
    assert dev.can(WATCHER, "watch", "llminferenceservices.serving.kserve.io")
    assert not dev.can(WATCHER, "create", "httproutes.gateway.networking.k8s.io")

    # The README's quick start: the samples applied with kubectl, each Ready within seconds.
    applied = dev.kubectl("apply", "-n", NAMESPACE, "-f", str(SAMPLES))
    assert applied.returncode == 0, applied.stderr
    samples = sample_services()
    assert set(samples.values()) == {p.name for p in SAMPLES.glob("*.yaml")}, "a sample without a service"
    for name, file in samples.items():
        ready = dev.until(
            lambda n=name: dev.router_ready(n), f"{file}: {NAMESPACE}/{name} RouterReady=True", 30
        )
        assert ready["status"]["url"], f"{file}: no URL"
    route = dev.get_json("httproutes", "-n", NAMESPACE, "opt-125m-kserve-route")
    assert route["metadata"]["ownerReferences"][0]["name"] == "opt-125m"
    assert dev.get_json("httproutes", "-n", NAMESPACE, "opt-125m-own-kserve-route") is None  # its own route
    lora = dev.get_json("httproutes", "-n", NAMESPACE, "opt-125m-lora-kserve-route")
    assert "sql-helper" in json.dumps(lora["spec"]), "model-based routing matches each adapter"
    described = dev.kubectl("describe", "llminferenceservice", "-n", NAMESPACE, "opt-125m")
    assert described.returncode == 0, described.stderr

    dev.process.send_signal(signal.SIGINT)
    try:
        code = dev.process.wait(timeout=STOP_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail(f"llmisvc-router dev did not stop within {STOP_WITHIN:.0f}s of SIGINT")
    stderr = dev.stderr.read_text()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert "llmisvc-router dev: stopped" in stderr
    # A settled stack's terminal: one Ready line per service, no SDK dict appended to the lines.
    for name in [EXAMPLE, *samples]:
        assert stderr.count(f"{NAMESPACE}/{name} is Ready") == 1, stderr
    assert "'workflow_id'" not in stderr and "'activity_id'" not in stderr
