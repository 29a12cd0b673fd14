"""Cost and speed of the orchestrator: the production worker (``worker.process.run_worker``) and watcher
(``llmisvc_watcher.runner.run_watcher``) on a local Temporal dev server, against the real control plane (etcd,
kube-apiserver, kube-controller-manager) with the simulated gateway controller in a process of its own,
the worker and the watcher each as its ServiceAccount through the counting proxy (its own process too).

Prints:
  * history events of a service's first pass and of a no-op resync pass;
  * API reads and writes of those passes (the proxy's request counters, the worker's User-Agent);
  * the time from creating a service (a POST, as ``kubectl apply`` does) to ``RouterReady=True`` with the
    watcher and the gateway controller running: median over ``--services`` services, one at a time;
  * passes/s with ``--concurrent`` services: created at once (until all are RouterReady), then one
    ``reconcile_now`` pass each, all at once, on the settled world.

The scheduler Deployment each service needs for ``SchedulerWorkloadReady`` (KServe's workload reconciler
writes it) is created, available, right after the service.

    .venv/bin/python benchmarks/bench_orchestrator.py [--services 5] [--concurrent 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from benchmarks.kube_stack import KubeStack
from benchmarks.scale_stack import kube_stack
from llmisvc_cache.cache import ClusterCache
from llmisvc_cache.targets import start_worker_cache
from llmisvc_core.models.kube import DEPLOYMENT, GATEWAY, GATEWAYCLASS, LLMISVC, ResourceType
from llmisvc_kube.api import ApiError
from llmisvc_kube.client import KubeClusterApi
from llmisvc_runtime.environment import environment_from
from llmisvc_runtime.settings import OrchestratorSettings
from llmisvc_watcher.runner import run_watcher, stop_cache
from tests import builders as b
from tests.builders import kube
from worker.factory import DATA_CONVERTER
from worker.process import run_worker
from workflows import search_attributes
from workflows.models import ReconcileSignal, ServiceWorkflowInput, WorkflowState, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

Wire = dict[str, Any]
NAMESPACE_TYPE = ResourceType("", "v1", "Namespace", "namespaces", namespaced=False)
NS = "bench"
TASK_QUEUE = "bench-orchestrator"
WORKER_AGENT = "llmisvc-router/worker"
WATCHER_AGENT = "llmisvc-router/watcher"
RESYNC_SECONDS = 4  # of the probe service, so a resync pass comes quickly
TEMPORAL = Path(sys.executable).parent / "temporal"
READ_VERBS = ("get", "list")


def service(name: str) -> Wire:
    return b.service(name, NS, uid=None, generation=None, model=b.model(), router=b.presets())


AVAILABLE = {
    "replicas": 1,
    "readyReplicas": 1,  # a real API server refuses more available replicas than ready ones
    "availableReplicas": 1,
    "conditions": [{"type": "Available", "status": "True"}],
}


class Cluster:
    """The benchmark's own view of the cluster: the admin's client (to kube-apiserver directly) plus the
    proxy's control endpoint, whose counters are the product's requests."""

    def __init__(self, stack: KubeStack) -> None:
        self.client = stack.client("bench")
        self.kube = KubeClusterApi(self.client)
        self.control = stack.control

    def seed(self) -> None:
        try:
            self.kube.create(NAMESPACE_TYPE, {"metadata": {"name": NS}})
        except ApiError as err:
            if err.status != 409:
                raise
        self.kube.create(
            GATEWAYCLASS,
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "GatewayClass",
                "metadata": {"name": "simulated"},
                "spec": {"controllerName": "gateway.standin.local/controller"},
            },
        )
        self.kube.create(
            GATEWAY,
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "Gateway",
                "metadata": {"name": "kserve-ingress-gateway", "namespace": "kserve"},
                "spec": {
                    "gatewayClassName": "simulated",
                    "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
                },
            },
        )

    def create_service(self, name: str) -> None:
        """The service, then its available scheduler Deployment (the workload reconciler's part)."""
        created = self.kube.create(LLMISVC, service(name))
        deployment = self.kube.create(DEPLOYMENT, kube.scheduler_deployment(created))
        self.kube.replace_status(DEPLOYMENT, {**deployment, "status": AVAILABLE})

    def condition(self, name: str, type_: str) -> str | None:
        svc = self.kube.get(LLMISVC, NS, name) or {}
        for cond in (svc.get("status") or {}).get("conditions") or []:
            if cond.get("type") == type_:
                return str(cond.get("status"))
        return None

    def requests(self, agent: str) -> tuple[int, int]:
        """(reads, writes) made by ``agent`` since the last reset."""
        rows = [r for r in self.control.requests()["counts"] if str(r["user_agent"]).startswith(agent)]
        reads = sum(r["count"] for r in rows if r["verb"] in READ_VERBS)
        return reads, sum(r["count"] for r in rows) - reads


async def until(probe: Callable[[], Awaitable[bool]], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not await probe():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def state_of(handle: WorkflowHandle[Any, Any]) -> WorkflowState:
    result: WorkflowState = await handle.query(LLMInferenceServiceWorkflow.state)
    return result


async def history_length(handle: WorkflowHandle[Any, Any]) -> int:
    return len((await handle.fetch_history()).events)


async def idle_after(handle: WorkflowHandle[Any, Any], passes: int) -> WorkflowState:
    """Wait until ``passes`` passes have finished and nothing is pending."""
    found: list[WorkflowState] = []

    async def done() -> bool:
        found[:] = [await state_of(handle)]
        return found[0].pass_count >= passes and not found[0].pending_reasons

    await until(done, f"{passes} passes of {handle.id}")
    return found[0]


async def measure_passes(temporal: Client, cluster: Cluster) -> None:
    """History events and API requests of a first pass and of a no-op resync pass (no watcher yet)."""
    await asyncio.to_thread(cluster.create_service, "probe")
    await asyncio.to_thread(cluster.control.reset_requests)
    handle = await temporal.start_workflow(
        LLMInferenceServiceWorkflow.run,
        ServiceWorkflowInput(namespace=NS, name="probe", resync_seconds=RESYNC_SECONDS),
        id=workflow_id(NS, "probe"),
        task_queue=TASK_QUEUE,
    )
    await idle_after(handle, 1)
    first_events = await history_length(handle)
    reads, writes = await asyncio.to_thread(cluster.requests, WORKER_AGENT)
    print(
        f"first pass:       {first_events:>4} history events (from the workflow's start), {reads} API reads, "
        f"{writes} API writes"
    )

    # Settle: passes until the gateway controller's answers are in and a pass changes nothing.
    for _ in range(50):
        summary = await handle.execute_update(
            LLMInferenceServiceWorkflow.reconcile_now, ReconcileSignal(reason="settle")
        )
        if summary.outcome == "reconciled" and summary.writes == 0 and not summary.status_written:
            break
        await asyncio.sleep(0.2)
    for _ in range(5):  # measure one resync pass alone: retry if another trigger slipped in
        state = await idle_after(handle, 0)
        before = await history_length(handle)
        await asyncio.to_thread(cluster.control.reset_requests)
        after_state = await idle_after(handle, state.pass_count + 1)
        after = await history_length(handle)
        reads, writes = await asyncio.to_thread(cluster.requests, WORKER_AGENT)
        if after_state.pass_count == state.pass_count + 1:
            break
    print(
        f"no-op resync:     {after - before:>4} history events, {reads} API reads, {writes} API writes "
        f"(outcome {after_state.last.outcome if after_state.last else '?'}, "
        f"{after_state.last.writes if after_state.last else '?'} object writes)"
    )
    await handle.terminate("benchmark: probe done")


async def time_to_ready(cluster: Cluster, count: int) -> None:
    """Create services one at a time, each timed from its POST to RouterReady=True (watcher running)."""
    seconds = []
    for i in range(count):
        name = f"ready-{i}"
        started = time.perf_counter()
        await asyncio.to_thread(cluster.create_service, name)

        async def ready(name: str = name) -> bool:
            return await asyncio.to_thread(cluster.condition, name, "RouterReady") == "True"

        await until(ready, f"{name} RouterReady")
        seconds.append(time.perf_counter() - started)
    print(
        f"create -> RouterReady=True: median {statistics.median(seconds):.2f}s over {count} services "
        f"(min {min(seconds):.2f}s, max {max(seconds):.2f}s)"
    )


async def concurrent_passes(temporal: Client, cluster: Cluster, count: int) -> None:
    names = [f"fleet-{i:03d}" for i in range(count)]
    await asyncio.to_thread(cluster.control.reset_requests)
    started = time.perf_counter()
    await asyncio.gather(*(asyncio.to_thread(cluster.create_service, n) for n in names))

    async def all_ready() -> bool:
        states = await asyncio.gather(
            *(asyncio.to_thread(cluster.condition, n, "RouterReady") for n in names)
        )
        return all(s == "True" for s in states)

    await until(all_ready, f"{count} services RouterReady", timeout=600)
    elapsed = time.perf_counter() - started
    handles = [temporal.get_workflow_handle(workflow_id(NS, n)) for n in names]
    states = [await state_of(h) for h in handles]
    passes = sum(s.pass_count for s in states)
    reads, writes = await asyncio.to_thread(cluster.requests, WORKER_AGENT)
    print(
        f"{count} services created at once: all RouterReady=True after {elapsed:.2f}s; {passes} passes "
        f"({passes / elapsed:.1f} passes/s), {reads} API reads, {writes} API writes"
    )

    await asyncio.sleep(1.0)  # let the last watcher-triggered passes finish
    await asyncio.gather(*(idle_after(h, 0) for h in handles))
    started = time.perf_counter()
    summaries = await asyncio.gather(
        *(
            h.execute_update(LLMInferenceServiceWorkflow.reconcile_now, ReconcileSignal(reason="benchmark"))
            for h in handles
        )
    )
    elapsed = time.perf_counter() - started
    noop = sum(1 for s in summaries if s.writes == 0 and not s.status_written)
    print(
        f"{count} passes at once on the settled services: {elapsed:.2f}s, {count / elapsed:.1f} passes/s "
        f"({noop} of them no-ops)"
    )


async def run(args: argparse.Namespace) -> None:
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL),
        data_converter=DATA_CONVERTER,
        search_attributes=search_attributes.ALL,
        dev_server_log_level="error",
    )
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            kube_stack(Path(tmp), controller_args=["--no-workload"]) as stack,
        ):
            cluster = Cluster(stack)
            cluster.seed()
            settings = OrchestratorSettings(task_queue=TASK_QUEUE)
            print(
                f"Temporal dev server (local), control plane + proxy + gateway controller in processes of "
                f"their own, worker with {settings.activity_threads} activity threads",
                flush=True,
            )
            stop = asyncio.Event()
            worker_client = stack.client(WORKER_AGENT, "worker", settings.kube_connections)
            watcher_client = stack.client(WATCHER_AGENT, "watcher")
            env_settings = environment_from()
            cache = start_worker_cache(worker_client, [], env_settings)
            watcher_cache = ClusterCache(watcher_client)
            api = KubeClusterApi(worker_client)
            tasks = [asyncio.create_task(run_worker(env.client, api, cache, settings, env_settings, stop))]
            try:
                await measure_passes(env.client, cluster)  # before the watcher: nothing else triggers
                tasks.append(
                    asyncio.create_task(run_watcher(watcher_cache, env.client, settings, env_settings, stop))
                )
                await time_to_ready(cluster, args.services)
                await concurrent_passes(env.client, cluster, args.concurrent)
            finally:
                stop.set()
                await asyncio.gather(*tasks)
                await stop_cache(cache)
                await stop_cache(watcher_cache)
                worker_client.close()  # type: ignore[no-untyped-call]
                watcher_client.close()  # type: ignore[no-untyped-call]
                cluster.client.close()  # type: ignore[no-untyped-call]
    finally:
        await env.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--services", type=int, default=5, help="services timed one at a time (default 5)")
    parser.add_argument("--concurrent", type=int, default=50, help="services reconciled at once (default 50)")
    asyncio.run(run(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
