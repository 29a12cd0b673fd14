"""``llmisvc-router watch`` as a process: one-line errors for bad settings or unreachable services, and
a clean stop on SIGTERM after it started the workflows of the services it found (as the watcher
ServiceAccount, through the test's proxy to the real control plane)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from llmisvc_devstack.controlplane import write_kubeconfig
from tests.cluster import Cluster
from worker.factory import DATA_CONVERTER
from workflows.models import workflow_id

from .harness import SERVING, World, service

ROOT = Path(__file__).resolve().parents[2]
TEMPORAL = Path(sys.executable).parent / "temporal"
# The console script's main, which prints a failing command's one line and returns its status.
LAUNCH = "import sys\nfrom llmisvc_router.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "LLMISVC_ROUTER_"))}
    env.pop("KUBECONFIG", None)
    env["HOME"] = "/nonexistent"  # no ~/.kube/config and no Temporal profile from the machine
    env["LLMISVC_ROUTER_PROBE_PORT"] = "0"  # 8081 may be another process's on this machine
    return {**env, **extra}


def watch(*args: str, env: dict[str, str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, "watch", *args],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )


def plain_http_kubeconfig(path: Path, url: str) -> Path:
    """A kubeconfig for a plain-HTTP ``url`` (nothing listens there: the CA and token are never used)."""
    return write_kubeconfig(path, url, path.with_name("unused-ca.crt"), "unused")


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_a_bad_setting_exits_2_naming_the_variable(tmp_path):
    kubeconfig = plain_http_kubeconfig(tmp_path / "kubeconfig", "http://127.0.0.1:1")
    result = watch("--kubeconfig", str(kubeconfig), env=environment(LLMISVC_ROUTER_RESYNC_SECONDS="soon"))
    assert result.returncode == 2
    assert one_line(result.stderr).startswith("llmisvc-router watch: LLMISVC_ROUTER_RESYNC_SECONDS:")


def test_a_missing_kubeconfig_exits_2_naming_the_file(tmp_path):
    result = watch("--kubeconfig", str(tmp_path / "absent"), env=environment())
    assert result.returncode == 2
    assert one_line(result.stderr) == (
        f"llmisvc-router watch: kubeconfig {tmp_path / 'absent'}: no such file "
        "(set KUBECONFIG or --kubeconfig to an existing kubeconfig)"
    )


def test_an_unreachable_kubernetes_api_exits_4(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    kubeconfig = plain_http_kubeconfig(tmp_path / "kubeconfig", url)
    result = watch("--kubeconfig", str(kubeconfig), env=environment(TEMPORAL_ADDRESS="127.0.0.1:1"))
    assert result.returncode == 4
    assert one_line(result.stderr).startswith(
        f"llmisvc-router watch: cannot reach the Kubernetes API at {url}"
    )


def test_an_unreachable_temporal_exits_4_naming_the_address(tmp_path: Path, cluster: Cluster) -> None:
    kubeconfig = cluster.kubeconfig(tmp_path / "kubeconfig", role="watcher")
    address = f"127.0.0.1:{free_port()}"
    env = environment(TEMPORAL_ADDRESS=address, POD_NAMESPACE=cluster.kserve_namespace)
    result = watch("--kubeconfig", str(kubeconfig), env=env)
    assert result.returncode == 4
    assert one_line(result.stderr).startswith(
        f"llmisvc-router watch: cannot connect to Temporal at {address}:"
    )


@pytest.mark.skipif(not TEMPORAL.exists(), reason="the temporal dev server binary is not installed")
async def test_the_watcher_starts_the_workflows_and_stops_cleanly_on_sigterm(
    tmp_path: Path, cluster: Cluster, world: World
) -> None:
    temporal = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL), data_converter=DATA_CONVERTER, ui=False
    )
    try:
        world.create(SERVING, service("existing"))
        kubeconfig = cluster.kubeconfig(tmp_path / "kubeconfig", role="watcher")
        env = environment(
            TEMPORAL_ADDRESS=temporal.client.service_client.config.target_host,
            POD_NAMESPACE=cluster.kserve_namespace,
        )
        ns = cluster.namespace
        args = ["watch", "--kubeconfig", str(kubeconfig), "--namespace", ns, "--task-queue", "e2e"]
        process = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, *args],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # The first wait covers the process's start-up too (seconds of imports on a busy machine).
            await running_workflow(temporal, ns, "existing", timeout=60)
            world.create(SERVING, service("new"))
            described = await running_workflow(temporal, ns, "new")
            assert described.task_queue == "e2e"
            stopped_at = time.monotonic()
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        assert process.returncode == 0, stderr
        assert time.monotonic() - stopped_at < 6
        assert "Traceback" not in stderr
        assert cluster.counter.count(code=403) == 0, "the watcher's RBAC refused a request"
    finally:
        await temporal.shutdown()


async def running_workflow(
    temporal: WorkflowEnvironment, namespace: str, name: str, timeout: float = 15.0
) -> WorkflowExecutionDescription:
    handle = temporal.client.get_workflow_handle(workflow_id(namespace, name))
    deadline = time.monotonic() + timeout
    while True:
        try:
            described = await handle.describe()
            if described.status == WorkflowExecutionStatus.RUNNING:
                return described
        except RPCError:
            pass  # not started yet
        if time.monotonic() > deadline:
            raise AssertionError(f"no running workflow for {namespace}/{name} within {timeout}s")
        await asyncio.sleep(0.1)
