"""The product's processes as a pod runs them: ``llmisvc-router worker``, ``watch`` and a command, each a
real process against the session's Temporal dev server and the test's cluster (through its counting,
faulting proxy), as their own ServiceAccounts.

- Each process names itself to the API server, ``llmisvc-router/<version> (worker|watcher|cli)``, so audit
  logs and API Priority and Fairness can tell them apart.
- SIGTERM in the middle of a write: the worker stops polling, lets the running activity finish and report
  (no retry, the write made once), then exits 0.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from activities.management import Management
from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC
from llmisvc_kube.client import KubeClusterApi
from llmisvc_runtime.version import package_version
from tests.cluster import Cluster
from tests.integration import world
from tests.integration.harness import PRODUCT_AGENT, TEST_AGENT, WORKER_AGENT, running_stack, seed, until
from workflows.models import workflow_id

pytestmark = pytest.mark.asyncio(loop_scope="session")
NAME = "opt"
ROOT = Path(__file__).resolve().parents[2]


def product_env(
    temporal: Client, cluster: Cluster, task_queue: str, kubeconfig: Path, **extra: str
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "LLMISVC_ROUTER_", "OTEL_"))}
    return {
        **env,
        "HOME": "/nonexistent",  # no ~/.kube/config and no Temporal profile from the machine
        "KUBECONFIG": str(kubeconfig),
        "TEMPORAL_ADDRESS": temporal.service_client.config.target_host,
        "LLMISVC_ROUTER_TASK_QUEUE": task_queue,
        "LLMISVC_ROUTER_NAMESPACES": cluster.namespace,
        "POD_NAMESPACE": cluster.kserve_namespace,
        "LLMISVC_ROUTER_PROBE_PORT": "0",  # several processes at once: 8081 is one's alone
        **extra,
    }


@contextmanager
def product_process(
    command: str, env: dict[str, str], log: Path, *args: str
) -> Iterator[subprocess.Popen[bytes]]:
    """``llmisvc-router COMMAND ARGS`` in the background, its output in ``log``; killed if still running."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llmisvc_router", command, *args],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


async def logged(process: subprocess.Popen[bytes], log: Path, line: str, timeout: float = 90) -> None:
    async def probe() -> bool:
        assert process.poll() is None, f"exited with {process.returncode}:\n{log.read_text()}"
        return line in log.read_text(errors="replace")

    await until(probe, f"{line!r} in {log}", timeout, interval=0.2)


async def test_each_process_names_itself_and_its_version_in_its_user_agent(
    temporal: Client, cluster: Cluster, tmp_path: Path
) -> None:
    test_client = cluster.api_client(TEST_AGENT)
    kube = KubeClusterApi(test_client)
    await asyncio.to_thread(seed, cluster, kube)
    task_queue = f"identity-{cluster.namespace}"
    worker_env = product_env(temporal, cluster, task_queue, cluster.kubeconfig(tmp_path / "w", role="worker"))
    watcher_env = product_env(
        temporal, cluster, task_queue, cluster.kubeconfig(tmp_path / "v", role="watcher")
    )
    handle = temporal.get_workflow_handle(workflow_id(cluster.namespace, NAME))
    try:
        with (
            product_process("worker", worker_env, tmp_path / "worker.log") as worker,
            product_process("watch", watcher_env, tmp_path / "watcher.log") as watcher,
        ):
            await logged(worker, tmp_path / "worker.log", "worker polling task queue")
            await logged(watcher, tmp_path / "watcher.log", "watching LLMInferenceServices")
            await asyncio.to_thread(kube.create, LLMISVC, world.service(NAME, cluster.namespace))
            route = naming.route_name(NAME)
            await until(
                lambda: asyncio.to_thread(kube.get, HTTPROUTE, cluster.namespace, route), "the route", 60
            )
            cli_env = product_env(temporal, cluster, task_queue, cluster.kubeconfig(tmp_path / "a"))
            status = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "llmisvc_router", "status", f"{cluster.namespace}/{NAME}"],
                env=cli_env,
                capture_output=True,
                timeout=60,
            )
            assert status.returncode == 0, status.stderr
        agents = {r.user_agent for r in cluster.counter.records(user_agent=PRODUCT_AGENT)}
        version = package_version()
        assert agents == {f"llmisvc-router/{version} ({role})" for role in ("worker", "watcher", "cli")}
        assert not cluster.counter.records(user_agent="OpenAPI-Generator")
    finally:
        await handle.terminate("test finished")
        test_client.close()  # type: ignore[no-untyped-call]


async def test_sigterm_lets_the_running_write_finish_without_a_retry(
    temporal: Client, cluster: Cluster, tmp_path: Path
) -> None:
    async with running_stack(temporal, cluster) as stack:
        assert stack.worker is not None
        await stack.worker.stop()  # the process below is the task queue's only worker
        await stack.create_service(NAME)
        # The route's create is held at the proxy for longer than the activity's heartbeat timeout (5 s),
        # shorter than the client's read timeout (10 s): SIGTERM arrives while the write is under way.
        held = cluster.faults.inject(verb="create", resource="httproutes", user_agent=WORKER_AGENT, delay=7.0)
        kubeconfig = cluster.kubeconfig(tmp_path / "kubeconfig", role="worker")
        env = product_env(
            temporal, cluster, stack.task_queue, kubeconfig, LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS="25"
        )
        log = tmp_path / "worker.log"
        with product_process("worker", env, log) as worker:
            await logged(worker, log, "worker polling task queue")
            handle = await stack.start_workflow(NAME)

            async def write_held() -> bool:
                return held.fired > 0

            await until(write_held, "the route's create held at the proxy", 60)
            worker.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            code = await asyncio.to_thread(worker.wait, 40)
            waited = time.monotonic() - signalled
        output = log.read_text(errors="replace")
        assert code == 0, output
        assert "polling stopped, running activities have 25s to finish" in output
        assert waited > 2, "the worker exited without waiting for its running activity"
        assert "Traceback" not in output
        assert await stack.get(HTTPROUTE, naming.route_name(NAME)) is not None

        # The activity's result was reported: a new worker carries the pass on from there.
        cluster.faults.clear()
        await stack.worker.start(Management())
        await stack.passes(handle, 1)
        assert cluster.counter.count(verb="create", resource="httproutes", user_agent=WORKER_AGENT) == 1
        attempts = [
            event.activity_task_started_event_attributes.attempt
            async for event in handle.fetch_history_events()
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
        ]
        assert attempts and set(attempts) == {1}, attempts
