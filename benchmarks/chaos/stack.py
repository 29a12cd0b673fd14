"""The processes of a chaos run, each its own OS process as in a cluster: the Temporal dev server on a
persistent db file (``temporal server start-dev --db-filename``), the API stand-in with its simulated
gateway and workload controllers, and ``llmisvc-router worker`` / ``watch`` (any number of each).
Every process can be SIGKILLed and started again on the same ports and files; every wait is bounded.
Output goes to log files in the run's directory (a pipe nobody reads would block a chatty process).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
TEMPORAL = BIN / "temporal"
ROUTER = BIN / "llmisvc-router"
#: What each product command logs once it serves (only waited for at start; a restart is not waited on).
#: Settings of the caller's environment a child must not inherit (a metrics port would clash).
UNSET = ("LLMISVC_ROUTER_METRICS_PORT",)
READY_LINES = {"worker": "worker polling task queue", "watch": "watching LLMInferenceServices"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Proc:
    """One restartable child process."""

    name: str
    argv: list[str]
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    def start(self) -> Proc:
        self.starts += 1
        out = self.log.open("ab")
        out.write(f"--- start {self.starts} at {time.time():.3f}\n".encode())
        out.flush()
        env = {k: v for k, v in {**os.environ, **self.env}.items() if k not in UNSET}
        self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        out.close()
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: no clean-up, as an OOM kill or a node loss."""
        if self.alive():
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if not self.alive():
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def wait_for_line(self, line: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        marker = f"--- start {self.starts} at"
        while True:
            text = self.log.read_text(errors="replace")
            if line in text[text.rfind(marker) :]:
                return
            if not self.alive():
                raise RuntimeError(f"{self.name} exited with {self.process and self.process.returncode}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name} did not log {line!r} within {timeout:.0f}s; see {self.log}")
            time.sleep(0.1)


def _wait(check: object, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():  # type: ignore[operator]
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{what} not ready within {timeout:.0f}s")


class TemporalServer:
    """``temporal server start-dev`` on a db file, so a restart keeps every workflow."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        argv = [str(TEMPORAL), "server", "start-dev", "--headless", "--ip", "127.0.0.1"]
        argv += ["--port", str(self.port), "--http-port", str(free_port())]
        argv += ["--metrics-port", str(free_port()), "--db-filename", str(workdir / "temporal.db")]
        argv += ["--log-level", "error"]  # a global flag of the CLI; the server logs only errors
        self.proc = Proc("temporal", argv, workdir / "temporal.log")

    def start(self) -> TemporalServer:
        self.proc.start()
        _wait(self._serving, "the Temporal dev server", 60)
        return self

    def _serving(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1):
            pass
        result = subprocess.run(
            [str(TEMPORAL), "operator", "cluster", "health", "--address", self.address],
            capture_output=True,
            timeout=10,
            check=False,
        )
        return result.returncode == 0

    def register_search_attributes(self, log: Path) -> None:
        env = {**os.environ, "TEMPORAL_ADDRESS": self.address, "TEMPORAL_NAMESPACE": "default"}
        with log.open("ab") as out:
            command = [str(ROUTER), "register-search-attributes"]
            subprocess.run(command, stdout=out, stderr=out, env=env, timeout=60, check=False)


class Standin:
    """The API stand-in process with the simulated gateway and workload controllers."""

    def __init__(self, workdir: Path, label: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.kubeconfig = workdir / f"{label}.kubeconfig"
        argv = [sys.executable, "-m", "apiserver_standin", "apiserver", "--port", str(self.port)]
        argv += ["--kubeconfig", str(self.kubeconfig), "--crds", "all"]
        argv += ["--gateway-controller", "--workload-controller"]
        self.proc = Proc("apiserver", argv, workdir / f"{label}-apiserver.log")

    def start(self) -> Standin:
        self.proc.start()

        def healthy() -> bool:
            with urllib.request.urlopen(f"{self.url}/_standin/healthz", timeout=1) as response:
                return bool(response.status == 200)

        _wait(healthy, "the API stand-in", 30)
        return self


def product(
    command: str,
    label: str,
    workdir: Path,
    temporal: TemporalServer,
    standin: Standin,
    task_queue: str,
    namespaces: list[str],
) -> Proc:
    """``llmisvc-router <command>`` wired to this run's Temporal server and stand-in."""
    env = {
        "TEMPORAL_ADDRESS": temporal.address,
        "TEMPORAL_NAMESPACE": "default",
        "LLMISVC_ROUTER_TASK_QUEUE": task_queue,
        "LLMISVC_ROUTER_NAMESPACES": ",".join(namespaces),
        "KUBECONFIG": str(standin.kubeconfig),
        "OTEL_SDK_DISABLED": "true",
    }
    return Proc(label, [str(ROUTER), command], workdir / f"{label}.log", env)
