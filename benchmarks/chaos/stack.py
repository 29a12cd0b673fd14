"""The processes of a chaos run, each its own OS process as in a cluster: the Temporal dev server on a
persistent db file (``temporal server start-dev --db-filename``), the Kubernetes side of
:mod:`benchmarks.kube_stack` (etcd, kube-apiserver and kube-controller-manager, the fault proxy, the
simulated gateway and workload controllers), and ``llmisvc-router worker`` / ``watch`` (any number of
each), each authenticated as its ServiceAccount and talking to kube-apiserver through the proxy.
Every process can be SIGKILLed and started again on the same ports and files; every wait is bounded.
Output goes to log files in the run's directory (a pipe nobody reads would block a chatty process).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from benchmarks.kube_stack import KubeStack
from benchmarks.procs import Proc, free_port, wait_until

BIN = Path(sys.executable).parent
TEMPORAL = BIN / "temporal"
ROUTER = BIN / "llmisvc-router"
#: What each product command logs once it serves (only waited for at start; a restart is not waited on).
READY_LINES = {"worker": "worker polling task queue", "watch": "watching LLMInferenceServices"}
#: The ServiceAccount each command runs as.
ROLES = {"worker": "worker", "watch": "watcher"}
__all__ = ["READY_LINES", "TEMPORAL", "Proc", "TemporalServer", "free_port", "product"]


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
        wait_until(self._serving, "the Temporal dev server", 60)
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


def product(
    command: str,
    label: str,
    workdir: Path,
    temporal: TemporalServer,
    kube: KubeStack,
    task_queue: str,
    namespaces: list[str],
) -> Proc:
    """``llmisvc-router <command>`` wired to this run's Temporal server and, as its ServiceAccount, to
    kube-apiserver through the proxy."""
    env = {
        "TEMPORAL_ADDRESS": temporal.address,
        "TEMPORAL_NAMESPACE": "default",
        "LLMISVC_ROUTER_TASK_QUEUE": task_queue,
        "LLMISVC_ROUTER_NAMESPACES": ",".join(namespaces),
        "KUBECONFIG": str(kube.kubeconfig(ROLES[command])),
        "OTEL_SDK_DISABLED": "true",
        "LLMISVC_ROUTER_PROBE_PORT": "0",  # several processes on one machine: 8081 is one's alone
    }
    return Proc(label, [str(ROUTER), command], workdir / f"{label}.log", env)
