"""One test's stack: the test's namespaces on the real control plane (``tests/cluster.py``: a namespace,
a KServe namespace and a counting, faulting proxy of its own), the production worker
(``worker.factory.build_worker`` with the real ``RouterActivities`` over ``KubeClusterApi`` and the
official client) on a task queue of its own, optionally the simulated gateway controller and the
watcher, all against the session's Temporal dev server. Helpers read the world through the test's own
client and wait for things to happen.

The worker and the watcher authenticate as their ServiceAccounts, with exactly the RBAC ``deploy/``
ships: a call it does not allow is a 403 and fails the test. Their caches watch the test's namespaces
only, as a deployment with ``LLMISVC_ROUTER_NAMESPACES`` does, so no test reconciles another's leftovers.
Requests are told apart in the proxy's counters by User-Agent: the worker's activities, the watcher, the
simulated gateway controller and the test itself (as the admin) each have their own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker

from activities.management import Management
from activities.router_activities import RouterActivities
from llmisvc_cache.cache import ClusterCache
from llmisvc_cache.model import SeenVersion
from llmisvc_cache.targets import start_worker_cache
from llmisvc_core.models.kube import DEPLOYMENT, GATEWAY, GATEWAYCLASS, LLMISVC, ResourceType
from llmisvc_core.world.config import Environment
from llmisvc_devstack.controllers.gateway import ControllerConfig, SimulatedGatewayController
from llmisvc_devstack.proxy import RequestRecord
from llmisvc_devstack.proxy.requestinfo import WRITE_VERBS
from llmisvc_kube.api import ApiError, Wire
from llmisvc_kube.client import CLIENT_RETRIES, KubeClusterApi
from llmisvc_runtime.settings import OrchestratorSettings, WorkerSizing
from llmisvc_runtime.version import user_agent
from llmisvc_watcher.model import Tuning
from llmisvc_watcher.runner import run_watcher, stop_cache
from tests.builders import kube
from tests.cluster import Cluster
from tests.integration import world
from worker.factory import build_worker
from workflows.models import PassSummary, ReconcileSignal, ServiceWorkflowInput, WorkflowState, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

T = TypeVar("T")
Handle = WorkflowHandle[Any, Any]

PRODUCT_AGENT = "llmisvc-router/"  # prefix of both below
#: The product's own agents (``llmisvc_runtime.version``), which the in-process worker and watcher send as the
#: processes do.
WORKER_AGENT = user_agent("worker")
WATCHER_AGENT = user_agent("watcher")
CONTROLLER_AGENT = "simulated-gateway-controller"
TEST_AGENT = "integration-test"
WAIT = 20.0  # seconds a helper waits for the stack to get somewhere
#: The watcher's production timing, with a shorter debounce so tests do not wait for it.
TUNING = Tuning(debounce_seconds=0.05)
#: Runs a test once per RBAC shape ``deploy/`` ships (issue 18): the cluster-wide ClusterRoles, and the
#: namespaced overlay (ClusterRoles shrunk to the cluster-wide reads, Roles in the managed namespace).
BOTH_RBAC_SHAPES = pytest.mark.parametrize("cluster", ["default", "namespaced-rbac"], indirect=True)


@dataclass
class Stack:
    cluster: Cluster
    temporal: Client
    task_queue: str
    kube: KubeClusterApi  # the test's own client (the admin)
    controller: SimulatedGatewayController | None = None
    workflow_ids: set[str] = field(default_factory=set)
    worker: WorkerSlot | None = None  # the worker, restartable with other settings
    cluster_name: str = ""  # the install's LLMISVC_ROUTER_CLUSTER: in the workflow ids

    @property
    def namespace(self) -> str:
        return self.cluster.namespace

    @property
    def kserve_namespace(self) -> str:
        return self.cluster.kserve_namespace

    @property
    def env(self) -> Environment:
        return self.cluster.env

    # --- the cluster ---------------------------------------------------------------------------------

    async def get(self, type_: ResourceType, name: str, namespace: str | None = None) -> Wire | None:
        return await asyncio.to_thread(
            self.kube.get, type_, self.namespace if namespace is None else namespace, name
        )

    async def create(self, type_: ResourceType, body: Wire) -> Wire:
        return await asyncio.to_thread(self.kube.create, type_, body)

    async def delete(self, type_: ResourceType, name: str, namespace: str | None = None) -> None:
        await asyncio.to_thread(
            self.kube.delete, type_, self.namespace if namespace is None else namespace, name
        )

    async def patch(self, type_: ResourceType, name: str, patch: Wire) -> Wire:
        return await asyncio.to_thread(self.kube.patch_merge, type_, self.namespace, name, patch)

    async def create_service(self, name: str, *, router: Wire | None = None, stopped: bool = False) -> Wire:
        """Create an LLMInferenceService (as ``kubectl apply`` would); its workflow id is cleaned up."""
        self.workflow_ids.add(workflow_id(self.namespace, name, self.cluster_name))
        return await self.create(LLMISVC, world.service(name, self.namespace, router=router, stopped=stopped))

    async def service(self, name: str) -> Wire:
        found = await self.get(LLMISVC, name)
        assert found is not None, f"LLMInferenceService {self.namespace}/{name} is gone"
        return found

    async def conditions(self, name: str) -> dict[str, Wire]:
        return conditions_of(await self.service(name))

    async def make_scheduler_ready(self, name: str) -> None:
        """Do what KServe's workload reconciler and the kubelet would: an available scheduler Deployment."""
        deployment = await self.create(DEPLOYMENT, kube.scheduler_deployment(await self.service(name)))
        await asyncio.to_thread(
            self.kube.replace_status, DEPLOYMENT, {**deployment, "status": world.AVAILABLE_DEPLOYMENT_STATUS}
        )

    # --- the workflows -------------------------------------------------------------------------------

    async def start_workflow(self, name: str, resync_seconds: int = 600) -> Handle:
        """Start the service's workflow as the watcher would; the first pass runs at once."""
        wid = workflow_id(self.namespace, name, self.cluster_name)
        self.workflow_ids.add(wid)
        return await self.temporal.start_workflow(
            LLMInferenceServiceWorkflow.run,
            ServiceWorkflowInput(namespace=self.namespace, name=name, resync_seconds=resync_seconds),
            id=wid,
            task_queue=self.task_queue,
        )

    def handle(self, name: str) -> Handle:
        """The service's workflow (started by the watcher or by :meth:`start_workflow`)."""
        return self.temporal.get_workflow_handle_for(
            LLMInferenceServiceWorkflow.run, workflow_id(self.namespace, name, self.cluster_name)
        )

    async def state(self, handle: Handle) -> WorkflowState:
        result: WorkflowState = await handle.query(LLMInferenceServiceWorkflow.state)
        return result

    async def passes(self, handle: Handle, count: int) -> WorkflowState:
        """Wait until ``count`` passes have finished and no trigger is pending."""

        async def probe() -> WorkflowState | None:
            state = await self.state(handle)
            return state if state.pass_count >= count and not state.pending_reasons else None

        return await until(probe, f"{count} passes of {handle.id}")

    async def reconcile_now(
        self, handle: Handle, reason: str = "integration test", after: Wire | None = None
    ) -> PassSummary:
        """A pass now; with ``after`` (the service as the API server stored it), one that plans on that
        version or a newer one, as ``llmisvc-router reconcile`` asks (the worker's cache may not have
        seen a write the test has just made)."""
        seen = [] if after is None else [SeenVersion.stored(LLMISVC, after)]
        summary: PassSummary = await handle.execute_update(
            LLMInferenceServiceWorkflow.reconcile_now, ReconcileSignal(reason=reason, seen=seen)
        )
        return summary

    async def until_router_ready(self, name: str, drive: Handle | None = None, timeout: float = WAIT) -> Wire:
        """Wait for ``RouterReady=True`` on the stored service; with ``drive``, run a pass on each try
        (no watcher is there to signal the workflow when the gateway controller writes a status)."""

        async def probe() -> Wire | None:
            if drive is not None:
                await self.reconcile_now(drive, "waiting for RouterReady")
            svc = await self.service(name)
            return svc if is_true(conditions_of(svc), "RouterReady") else None

        return await until(probe, f"RouterReady=True on {self.namespace}/{name}", timeout, interval=0.2)

    # --- the proxy's counters ------------------------------------------------------------------------

    def product_requests(self) -> int:
        return self.cluster.counter.count(user_agent=PRODUCT_AGENT)

    def worker_writes(self, resource: str | None = None) -> int:
        return self.cluster.counter.writes(resource=resource, user_agent=WORKER_AGENT)

    def worker_stored(self) -> list[RequestRecord]:
        """The worker's writes the API server took, oldest first, each with its body (the proxy's log): not
        the dry runs, which store nothing, nor the Events, which tell about the writes."""
        return [
            r
            for r in self.cluster.counter.records(user_agent=WORKER_AGENT, verb=WRITE_VERBS, dry_run=False)
            if r.code < 300 and r.resource != "events"
        ]

    async def terminate_workflows(self) -> None:
        for wid in sorted(self.workflow_ids):
            handle = self.temporal.get_workflow_handle(wid)
            try:
                if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
                    await handle.terminate("integration test finished")
            except RPCError as err:
                if err.status != RPCStatusCode.NOT_FOUND:
                    raise


@asynccontextmanager
async def running_stack(
    temporal: Client,
    cluster: Cluster,
    *,
    controller: Mapping[str, Any] | None = None,
    watcher: bool = False,
    resync_seconds: int = 600,
    tuning: Tuning = TUNING,
    management: Management | None = None,
    cluster_name: str = "",
    task_queue: str | None = None,
) -> AsyncIterator[Stack]:
    """The test's cluster seeded with KServe's ingress Gateway (when Gateway API is served), the worker on a
    task queue of its own and, when asked, the gateway controller (``controller``: its
    ``ControllerConfig`` fields) and the watcher. ``management``: the mode and the selection of worker and
    watcher (``activities.management``; default: write, everything). ``cluster_name``: the install's
    ``LLMISVC_ROUTER_CLUSTER`` (its watcher's workflow ids; the task queue is the cluster's own unless
    ``task_queue`` names one)."""
    management = management or Management()
    namespaces = [cluster.namespace]
    with _clients(cluster) as clients:
        test_client, worker_client, watcher_client = clients
        kube = KubeClusterApi(test_client)
        await asyncio.to_thread(seed, cluster, kube)
        worker_api = KubeClusterApi(worker_client)
        async with AsyncExitStack() as stack_exit:
            gateway_controller = None
            if controller is not None:
                gateway_controller = stack_exit.enter_context(
                    running_gateway_controller(cluster, **controller)
                )
            executor = stack_exit.enter_context(
                ThreadPoolExecutor(max_workers=8, thread_name_prefix="activity")
            )
            task_queue = (
                task_queue or f"integration-{cluster_name + '-' if cluster_name else ''}{cluster.namespace}"
            )
            # Worker and watcher as separate processes would run them: each with its own cache.
            selector = management.selector.text
            cache = start_worker_cache(worker_client, namespaces, cluster.env, tuning, selector)
            stack_exit.push_async_callback(stop_cache, cache)
            slot = WorkerSlot(temporal, task_queue, worker_api, cache, executor, cluster.env)
            await slot.start(management)
            stack_exit.push_async_callback(slot.stop)
            stack = Stack(cluster, temporal, task_queue, kube, gateway_controller, cluster_name=cluster_name)
            stack.worker = slot
            stack_exit.push_async_callback(stack.terminate_workflows)
            if watcher:
                settings = OrchestratorSettings(
                    task_queue=task_queue,
                    cluster=cluster_name,
                    resync_seconds=resync_seconds,
                    service_selector=selector,
                    namespaces=namespaces,
                    mode=management.mode.value,
                )
                stop = asyncio.Event()
                watcher_cache = ClusterCache(watcher_client, tuning)
                stack_exit.push_async_callback(stop_cache, watcher_cache)
                task = asyncio.create_task(
                    run_watcher(watcher_cache, temporal, settings, cluster.env, stop, tuning)
                )
                stack_exit.push_async_callback(_stop_task, stop, task)
            yield stack
        assert_nothing_forbidden(cluster)


def assert_nothing_forbidden(cluster: Cluster) -> None:
    """Every request the product made was one ``deploy/``'s RBAC allows: a refused one fails the test even
    when the product coped with it (a watch retried with backoff, a read that falls back)."""
    refused = cluster.counter.records(code=403, user_agent=PRODUCT_AGENT)
    assert not refused, "refused by RBAC: " + ", ".join(
        f"{r.user_agent} {r.verb} {r.group or 'core'}/{r.resource}"
        f"{'/' + r.subresource if r.subresource else ''} in {r.namespace or '(all namespaces)'}"
        for r in refused
    )


@contextmanager
def running_gateway_controller(cluster: Cluster, **config: Any) -> Iterator[SimulatedGatewayController]:
    """The simulated gateway controller (``config``: its ``ControllerConfig`` fields), a client of the
    cluster as a real one is, for the ``with`` block."""
    api = cluster.api_client(CONTROLLER_AGENT)
    controller = SimulatedGatewayController(api, ControllerConfig(**config)).start()
    try:
        yield controller
    finally:
        controller.stop()
        api.close()  # type: ignore[no-untyped-call]


@dataclass
class WorkerSlot:
    """The stack's worker, which a test can restart with other settings (as a deployment restarts its
    worker pods with a new mode) while the workflows keep running."""

    temporal: Client
    task_queue: str
    api: KubeClusterApi
    cache: ClusterCache
    executor: ThreadPoolExecutor
    env: Environment
    _worker: Worker | None = None
    _task: asyncio.Task[None] | None = None

    async def start(self, management: Management) -> None:
        activities = RouterActivities(self.api, self.cache, self.env, management)
        sizing = WorkerSizing(activity_threads=8)
        self._worker = build_worker(self.temporal, self.task_queue, activities, self.executor, sizing)
        self._task = asyncio.create_task(self._worker.run())

    async def stop(self) -> None:
        if self._worker is not None and self._task is not None:
            await self._worker.shutdown()
            await self._task
            self._worker = self._task = None

    async def restart(self, management: Management) -> None:
        await self.stop()
        await self.start(management)


async def _stop_task(stop: asyncio.Event, task: asyncio.Task[None]) -> None:
    stop.set()
    await asyncio.wait_for(task, 15)


@contextmanager
def _clients(cluster: Cluster) -> Iterator[list[k8s.ApiClient]]:
    """One client per party, so the proxy's counters can tell their requests apart: the test as the
    admin, the worker and the watcher as their ServiceAccounts, configured as the product's processes
    are."""
    clients = [
        cluster.api_client(TEST_AGENT),
        cluster.api_client(WORKER_AGENT, role="worker", retries=CLIENT_RETRIES),
        cluster.api_client(WATCHER_AGENT, role="watcher", retries=CLIENT_RETRIES),
    ]
    try:
        yield clients
    finally:
        for client in clients:
            client.close()  # type: ignore[no-untyped-call]


def is_served(api: k8s.ApiClient, type_: ResourceType) -> bool:
    """Whether the API server serves ``type_`` (discovery, as kubectl asks)."""
    if not type_.group:
        return True
    try:
        found: Any = k8s.CustomObjectsApi(api).get_api_resources(type_.group, type_.version)
    except ApiException as err:
        if err.status == 404:
            return False
        raise
    return any(resource.name == type_.plural for resource in found.resources)


def seed(cluster: Cluster, kube: KubeClusterApi) -> None:
    """KServe's ingress Gateway in the test's KServe namespace, and the GatewayClass every test of the
    plane shares (created by the first), when Gateway API is installed."""
    if not all(is_served(kube.api_client, t) for t in (GATEWAY, GATEWAYCLASS)):
        return
    for type_, body in world.ingress(cluster.kserve_namespace):
        try:
            kube.create(type_, body)
        except ApiError as err:
            if not (type_ == GATEWAYCLASS and err.status == 409):
                raise


# --- waiting -------------------------------------------------------------------------------------------


async def until(
    probe: Callable[[], Awaitable[T | None]], what: str, timeout: float = WAIT, interval: float = 0.05
) -> T:
    """Poll ``probe`` until it returns something (not None, not False); fail naming ``what``."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while True:
        last = await probe()
        if last is not None and last is not False:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(interval)


# --- reading objects -----------------------------------------------------------------------------------


def conditions_of(obj: Wire) -> dict[str, Wire]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def is_true(conditions: Mapping[str, Wire], type_: str) -> bool:
    return conditions.get(type_, {}).get("status") == "True"


def annotations_of(obj: Wire) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def backend_groups(route: Wire) -> set[str]:
    """The API groups of the InferencePool backends of a route."""
    return {
        ref.get("group", "")
        for rule in (route.get("spec") or {}).get("rules") or []
        for ref in rule.get("backendRefs") or []
        if ref.get("kind") == "InferencePool"
    }


def route_parent_conditions(route: Wire) -> dict[str, Wire]:
    """The simulated controller's conditions on a route's (first) parent."""
    for parent in (route.get("status") or {}).get("parents") or []:
        if parent.get("controllerName") == world.CONTROLLER_NAME:
            return {c["type"]: c for c in parent.get("conditions") or []}
    return {}


async def gateway_programmed(stack: Stack) -> Wire | None:
    return await gateway_programmed_on(stack.kube, stack.cluster)


async def gateway_programmed_on(kube: KubeClusterApi, cluster: Cluster) -> Wire | None:
    """KServe's ingress Gateway in the test's KServe namespace, once it is Programmed."""
    gateway = await asyncio.to_thread(kube.get, GATEWAY, cluster.kserve_namespace, world.INGRESS_GATEWAY)
    return gateway if gateway is not None and is_true(conditions_of(gateway), "Programmed") else None
