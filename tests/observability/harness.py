"""The orchestrator as its processes run it, for the observability tests: the test's namespaces on the real
control plane (``tests/cluster.py``) holding one LLMInferenceService next to the ingress Gateway, the
production worker (``run_worker``) whose ``KubeClusterApi`` counts its requests on the client's metrics
endpoint and, when asked, the production watcher (``run_watcher``), each as its ServiceAccount."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from llmisvc_cache.cache import ClusterCache
from llmisvc_cache.targets import start_worker_cache
from llmisvc_core.models.kube import LLMISVC
from llmisvc_kube.api import Wire
from llmisvc_kube.client import CLIENT_RETRIES, KubeClusterApi
from llmisvc_kube.telemetry import ApiTelemetry
from llmisvc_runtime import telemetry
from llmisvc_runtime.settings import OrchestratorSettings
from llmisvc_watcher.model import Tuning
from llmisvc_watcher.runner import run_watcher, stop_cache
from tests.cluster import Cluster
from tests.integration import world
from tests.integration.harness import TEST_AGENT, WATCHER_AGENT, WORKER_AGENT, assert_nothing_forbidden, seed
from worker.process import run_worker
from workflows.models import WorkflowState, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

T = TypeVar("T")
WAIT = 20.0  # seconds a helper waits for the stack to get somewhere
SERVICE = "opt"


@dataclass
class Orchestrator:
    client: Client
    cluster: Cluster
    kube: KubeClusterApi  # the test's own client (the admin)
    settings: OrchestratorSettings
    namespace: str
    name: str = SERVICE

    async def state(self) -> WorkflowState:
        handle = self.client.get_workflow_handle(workflow_id(self.namespace, self.name))
        result: WorkflowState = await handle.query(LLMInferenceServiceWorkflow.state)
        return result

    async def passes(self, count: int) -> WorkflowState:
        """Wait until ``count`` passes have finished and no trigger is pending."""

        async def probe() -> WorkflowState | None:
            try:
                state = await self.state()
            except RPCError:  # not started yet
                return None
            return state if state.pass_count >= count and not state.pending_reasons else None

        return await until(probe, f"{count} passes of {self.namespace}/{self.name}")

    def service(self) -> Wire:
        found = self.kube.get(LLMISVC, self.namespace, self.name)
        assert found is not None
        return found


@asynccontextmanager
async def running_orchestrator(
    client: Client, cluster: Cluster, *, watcher: bool = False, mode: str = "write"
) -> AsyncIterator[Orchestrator]:
    """The test's cluster with one service and the worker (and the watcher) on a task queue of their own."""
    namespace, env = cluster.namespace, cluster.env
    settings = OrchestratorSettings.model_validate(
        {"task_queue": f"observability-{namespace}", "namespaces": [namespace], "mode": mode}
    )
    async with AsyncExitStack() as stack:
        test_client = cluster.api_client(TEST_AGENT)
        stack.callback(test_client.close)
        kube = KubeClusterApi(test_client)
        await asyncio.to_thread(seed, cluster, kube)
        await asyncio.to_thread(kube.create, LLMISVC, world.service(SERVICE, namespace))
        worker_client = cluster.api_client(WORKER_AGENT, role="worker", retries=CLIENT_RETRIES)
        stack.callback(worker_client.close)
        api = KubeClusterApi(worker_client, ApiTelemetry(telemetry.metric_meter(client)))
        stop = asyncio.Event()
        cache = start_worker_cache(worker_client, settings.namespaces, env)
        stack.push_async_callback(stop_cache, cache)
        tasks = [asyncio.create_task(run_worker(client, api, cache, settings, env, stop))]
        if watcher:
            watcher_client = cluster.api_client(WATCHER_AGENT, role="watcher", retries=CLIENT_RETRIES)
            stack.callback(watcher_client.close)
            tuning = Tuning(debounce_seconds=0.05)
            watcher_cache = ClusterCache(watcher_client, tuning)
            stack.push_async_callback(stop_cache, watcher_cache)
            tasks.append(asyncio.create_task(run_watcher(watcher_cache, client, settings, env, stop, tuning)))
        orchestrator = Orchestrator(client, cluster, kube, settings, namespace)
        stack.push_async_callback(_stop, stop, tasks, orchestrator)
        yield orchestrator
    assert_nothing_forbidden(cluster)


async def _stop(stop: asyncio.Event, tasks: list[asyncio.Task[None]], orchestrator: Orchestrator) -> None:
    handle = orchestrator.client.get_workflow_handle(workflow_id(orchestrator.namespace, orchestrator.name))
    try:
        if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            await handle.terminate("test finished")
    except RPCError:  # never started
        pass
    stop.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 20)


async def until(probe: Callable[[], Awaitable[T | None]], what: str, timeout: float = WAIT) -> T:
    """Poll ``probe`` until it returns something other than None; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        found = await probe()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.1)
