"""How long a worker lost in the middle of a write costs: SIGKILL the worker whose write activity is
waiting on the API server, and time until another worker has carried the write out.

Two ``llmisvc-router worker`` processes and a watcher run against a Temporal dev server and the real
control plane (with the simulated controllers), through the fault proxy. The first create of the
service's HTTPRoute hangs at the proxy (it would answer 503 much later, forwarding nothing), so
``reconcile_routes`` is mid-request when
the worker running it (found from the activity's worker identity, ``pid@host``) is killed. Measured
from the kill: the route created by the other worker, and the service Ready.

    .venv/bin/python -m benchmarks.measure_worker_kill [--runs 3]

With heartbeats (timeout 5 s) the retry starts after the heartbeat timeout plus the first retry interval
(1 s); before them only the attempt's start-to-close timeout (60 s then) noticed the loss.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from benchmarks.kube_stack import KubeStack
from benchmarks.scale_stack import NS, Fleet, free_port, kube_stack, product, service
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC
from worker.factory import DATA_CONVERTER
from workflows import search_attributes
from workflows.models import workflow_id

TEMPORAL = Path(sys.executable).parent / "temporal"
TASK_QUEUE = "llmisvc-router-kill"


async def _until(probe: Callable[[], object], what: str, timeout: float = 120.0) -> float:
    """Poll ``probe`` (a sync callable) until truthy; the monotonic time it became so."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await asyncio.to_thread(probe):
            return time.monotonic()
        await asyncio.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


async def _worker_running_the_write(client: Client, name: str) -> int:
    """The pid of the worker running the service's pending write activity."""
    handle = client.get_workflow_handle(workflow_id(NS, name))
    for _ in range(200):
        pending = (await handle.describe()).raw_description.pending_activities
        identity = next((p.last_worker_identity for p in pending if p.last_worker_identity), "")
        if identity:
            return int(identity.split("@", 1)[0])
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no worker picked up the write of {name}")


async def one_run(
    client: Client, fleet: Fleet, stack: KubeStack, address: str, workdir: Path, i: int
) -> dict[str, float]:
    name = f"kill-{i}"
    hung = fleet.control.add_fault(
        verb="create", resource="httproutes", hang=True, hang_timeout=300, status=503, times=1
    )
    with contextlib.ExitStack() as workers:
        for label in ("a", "b"):
            log = workdir / f"worker-{i}{label}.log"
            workers.enter_context(product("worker", stack.kubeconfig("worker"), address, TASK_QUEUE, log))
        await asyncio.to_thread(fleet.kube.create, LLMISVC, service(name))
        await _until(
            lambda: any(f["fired"] for f in fleet.control.faults() if f["id"] == hung["id"]),
            "the hung create",
        )
        victim = await _worker_running_the_write(client, name)
        killed = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        routed = await _until(
            lambda: fleet.kube.get(HTTPROUTE, NS, f"{name}-kserve-route") is not None, "the route"
        )
        ready = await _until(lambda: name in fleet.ready(), "the service Ready")
    fleet.control.clear_faults()  # the hung request ends with 503, to a worker that is gone
    return {"route_written_s": routed - killed, "ready_s": ready - killed}


async def main_async(runs: int) -> list[dict[str, float]]:
    port = free_port()
    env = await WorkflowEnvironment.start_local(
        port=port,
        dev_server_existing_path=str(TEMPORAL),
        data_converter=DATA_CONVERTER,
        search_attributes=search_attributes.ALL,
        dev_server_log_level="error",
    )
    results = []
    try:
        address = f"127.0.0.1:{port}"
        with tempfile.TemporaryDirectory() as tmp, kube_stack(Path(tmp)) as stack:
            fleet = Fleet(stack)
            try:
                fleet.seed()
                watcher = stack.kubeconfig("watcher")
                with product("watch", watcher, address, TASK_QUEUE, Path(tmp) / "watch.log"):
                    for i in range(runs):
                        result = await one_run(env.client, fleet, stack, address, Path(tmp), i)
                        written, ready = result["route_written_s"], result["ready_s"]
                        print(f"run {i}: route written {written:.1f}s, Ready {ready:.1f}s after the SIGKILL")
                        results.append(result)
            finally:
                fleet.close()
    finally:
        await env.shutdown()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    results = asyncio.run(main_async(args.runs))
    for key in ("route_written_s", "ready_s"):
        values = [r[key] for r in results]
        print(
            f"{key}: median {statistics.median(values):.1f}s, max {max(values):.1f}s over {len(values)} runs"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
