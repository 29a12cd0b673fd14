"""Worker Versioning on a real dev server: services run on build A, build B starts, the deployment's current
version is switched to B with the ``temporal`` CLI, and every service's next pass runs on B; nothing is lost
(the pass count and the pending trigger carry over, the objects stay, a removed route comes back) and
nothing is replayed wrongly (no failed workflow task in any run); A drains and stops.

The server runs with short drainage intervals (by default Temporal re-checks a draining version every
3 minutes). The steps and their times are printed and written to ``test-artifacts/``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType, RoutingConfigUpdateState, VersioningBehavior
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.workflowservice.v1 import DescribeWorkerDeploymentRequest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.router_activities import RouterActivities
from llmisvc_cache.targets import start_worker_cache
from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE
from llmisvc_kube.client import CLIENT_RETRIES, KubeClusterApi
from llmisvc_runtime.settings import OrchestratorSettings, WorkerSizing
from llmisvc_watcher.runner import stop_cache
from tests.cluster import Cluster
from tests.integration.conftest import TEMPORAL
from tests.integration.harness import (
    TEST_AGENT,
    TUNING,
    WORKER_AGENT,
    Stack,
    assert_nothing_forbidden,
    seed,
    until,
)
from worker import versioning
from worker.factory import DATA_CONVERTER, build_worker
from workflows.models import PassSummary, ReconcileSignal, WorkflowState
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ("opt-a", "opt-b", "opt-c")
BUILD_A, BUILD_B = "0.1.0-a", "0.1.0-b"
PATIENCE = 60.0  # seconds for a step on a loaded machine (each takes well under 2 s when idle)
#: Drainage checked every second, with a 2 s grace for visibility (production: 3 minutes each).
DRAINAGE = (
    "matching.wv.VersionDrainageStatusVisibilityGracePeriod",
    "matching.wv.VersionDrainageStatusRefreshInterval",
)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def versioned_env() -> AsyncIterator[WorkflowEnvironment]:
    extra = []
    for key, value in zip(DRAINAGE, ('"2s"', '"1s"'), strict=True):
        extra += ["--dynamic-config-value", f"{key}={value}"]
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL),
        data_converter=DATA_CONVERTER,
        ui=False,
        dev_server_log_level="error",
        dev_server_extra_args=extra,
    )
    try:
        yield env
    finally:
        await env.shutdown()


class Timeline:
    """The steps of the test with their times, printed at the end."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.steps: list[str] = []

    def note(self, step: str) -> None:
        at = datetime.now(UTC).strftime("%H:%M:%S.%f")[:-3]
        self.steps.append(f"{at}Z  +{time.monotonic() - self.start:6.2f}s  {step}")

    def report(self) -> str:
        return "\n".join(["Worker Versioning cut-over timeline:", *self.steps])


def cli(client: Client, *args: str) -> str:
    """The ``temporal`` CLI against the test's server, as an operator would run it."""
    address = client.service_client.config.target_host
    result = subprocess.run(
        [str(TEMPORAL), *args, "--address", address, "--namespace", client.namespace],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,  # the failure is raised below with the CLI's own message
    )
    if result.returncode != 0:
        raise RuntimeError(f"temporal {' '.join(args)}: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


async def set_current(client: Client, deployment: str, build: str) -> None:
    """``set-current-version``, retried until the version's pollers have registered it."""

    async def attempt() -> bool:
        try:
            await asyncio.to_thread(
                cli, client, "worker", "deployment", "set-current-version",
                "--deployment-name", deployment, "--build-id", build, "--yes",
            )  # fmt: skip
        except RuntimeError:
            return False
        return True

    await until(attempt, f"{deployment}.{build} to become current", timeout=PATIENCE, interval=0.5)


async def routing_propagated(client: Client, deployment: str) -> None:
    """Wait until the new routing has reached every task queue of the deployment (Temporal propagates it
    asynchronously; a task dispatched before that still goes to the previous version)."""

    async def probe() -> bool:
        described = await client.workflow_service.describe_worker_deployment(
            DescribeWorkerDeploymentRequest(namespace=client.namespace, deployment_name=deployment)
        )
        state = described.worker_deployment_info.routing_config_update_state
        return state == RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_COMPLETED

    await until(probe, f"the routing of {deployment} to propagate", timeout=PATIENCE, interval=0.2)


async def describe_version(client: Client, deployment: str, build: str) -> dict[str, Any]:
    out = await asyncio.to_thread(
        cli, client, "worker", "deployment", "describe-version",
        "--deployment-name", deployment, "--build-id", build, "--output", "json",
    )  # fmt: skip
    described: dict[str, Any] = json.loads(out)
    return described


async def drainage(client: Client, deployment: str, build: str) -> str:
    info = (await describe_version(client, deployment, build)).get("drainageInfo") or {}
    return str(info.get("drainageStatus", "unspecified"))


@asynccontextmanager
async def versioned_worker(
    temporal: Client, cluster: Cluster, task_queue: str, deployment: str, build: str
) -> AsyncIterator[Worker]:
    """A worker process of ``build``: its own API client (the worker's ServiceAccount) and cache,
    versioned through the settings."""
    settings = OrchestratorSettings(task_queue=task_queue, deployment_name=deployment, build_id=build)
    api_client = cluster.api_client(WORKER_AGENT, role="worker", retries=CLIENT_RETRIES)
    async with AsyncExitStack() as stack:
        stack.callback(api_client.close)
        executor = stack.enter_context(ThreadPoolExecutor(max_workers=4, thread_name_prefix=f"act-{build}"))
        cache = start_worker_cache(api_client, [cluster.namespace], cluster.env, TUNING)
        stack.push_async_callback(stop_cache, cache)
        activities = RouterActivities(KubeClusterApi(api_client), cache, cluster.env)
        worker = build_worker(
            temporal,
            task_queue,
            activities,
            executor,
            WorkerSizing(activity_threads=4),
            versioning.deployment_config(settings.deployment_name, settings.build_id),
        )
        yield await stack.enter_async_context(worker)


async def latest_state(stack: Stack, name: str) -> WorkflowState:
    return await stack.state(stack.handle(name))


async def pass_on(stack: Stack, name: str, count: int, build: str) -> WorkflowState:
    """Wait until the service's latest run has finished pass ``count``, run by ``build``."""

    async def probe() -> WorkflowState | None:
        state = await latest_state(stack, name)
        done = state.pass_count >= count and not state.pending_reasons
        return state if done and state.last is not None and state.last.build_id == build else None

    return await until(probe, f"pass {count} of {name} on build {build}", timeout=PATIENCE)


async def runs(temporal: Client, workflow_id: str) -> list[Sequence[HistoryEvent]]:
    """The history events of each run of a workflow, oldest run first."""
    found = [w async for w in temporal.list_workflows(f"WorkflowId = '{workflow_id}'")]
    ordered = sorted(found, key=lambda w: w.start_time)
    return [
        (await temporal.get_workflow_handle(workflow_id, run_id=w.run_id).fetch_history()).events
        for w in ordered
    ]


def task_builds(events: Sequence[HistoryEvent]) -> list[str]:
    """The build stamped on each completed workflow task (pinned: the run's one build)."""
    completed = [e for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]
    stamps = [e.workflow_task_completed_event_attributes for e in completed]
    assert all(s.versioning_behavior == VersioningBehavior.VERSIONING_BEHAVIOR_PINNED for s in stamps)
    return [s.deployment_version.build_id for s in stamps]


async def test_switching_the_current_version_moves_every_service_to_the_new_build_and_drains_the_old(
    versioned_env, cluster
):
    temporal = versioned_env.client
    timeline = Timeline()
    suffix = uuid.uuid4().hex[:8]
    deployment, task_queue = f"llmisvc-router-{suffix}", f"versioning-{suffix}"
    with cluster.api_client(TEST_AGENT) as test_api:
        kube = KubeClusterApi(test_api)
        seed(cluster, kube)
        stack = Stack(cluster, temporal, task_queue, kube)
        try:
            async with AsyncExitStack() as b_workers, AsyncExitStack() as a_workers:
                await a_workers.enter_async_context(
                    versioned_worker(temporal, cluster, task_queue, deployment, BUILD_A)
                )
                timeline.note(f"worker of build {BUILD_A} polling task queue {task_queue}")
                await set_current(temporal, deployment, BUILD_A)
                timeline.note(f"temporal worker deployment set-current-version --build-id {BUILD_A}")

                for name in SERVICES:
                    await stack.create_service(name)
                    await stack.start_workflow(name)
                first = {name: await pass_on(stack, name, 1, BUILD_A) for name in SERVICES}
                timeline.note(f"{len(SERVICES)} services reconciled on {BUILD_A}: {', '.join(SERVICES)}")

                await b_workers.enter_async_context(
                    versioned_worker(temporal, cluster, task_queue, deployment, BUILD_B)
                )
                timeline.note(f"worker of build {BUILD_B} polling (not current: it gets no tasks yet)")
                await set_current(temporal, deployment, BUILD_B)
                await routing_propagated(temporal, deployment)
                draining = await drainage(temporal, deployment, BUILD_A)
                timeline.note(
                    f"set-current-version --build-id {BUILD_B}, routing propagated; {BUILD_A} is {draining}"
                )

                # One service's route was removed by hand meanwhile: B's pass must put it back.
                await stack.delete(HTTPROUTE, naming.route_name(SERVICES[0]))
                for name in SERVICES:
                    await stack.handle(name).signal(
                        LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="HTTPRoute changed")
                    )
                second = {name: await pass_on(stack, name, 2, BUILD_B) for name in SERVICES}
                timeline.note(f"next pass of every service ran on {BUILD_B}")

                await until(
                    lambda: _is(drainage(temporal, deployment, BUILD_A), "drained"),
                    f"{BUILD_A} to drain",
                    timeout=PATIENCE,
                    interval=0.5,
                )
                timeline.note(f"describe-version {BUILD_A}: drained")
                await a_workers.aclose()  # worker A stops
                timeline.note(f"worker of build {BUILD_A} stopped")

                for name in SERVICES:
                    await stack.handle(name).signal(
                        LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="resync")
                    )
                third = {name: await pass_on(stack, name, 3, BUILD_B) for name in SERVICES}
                timeline.note(f"a further pass of every service ran on {BUILD_B} alone")
                histories = {name: await runs(temporal, stack.handle(name).id) for name in SERVICES}
                route_back = await stack.get(HTTPROUTE, naming.route_name(SERVICES[0]))
        finally:
            await stack.terminate_workflows()
    assert_nothing_forbidden(cluster)
    assert draining == "draining", "A still had the services pinned when B became current"
    report = timeline.report()
    print("\n" + report)
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    (ROOT / "test-artifacts" / "versioning-timeline.txt").write_text(report + "\n")

    for name in SERVICES:
        assert last(first[name]).outcome == last(second[name]).outcome == "reconciled"
        assert third[name].pass_count == 3, "the pass count carried over: nothing restarted from scratch"
        run_a, run_b = histories[name]
        assert set(task_builds(run_a)) == {BUILD_A} and set(task_builds(run_b)) == {BUILD_B}
        assert run_a[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
        for events in (run_a, run_b):
            failed = [e for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED]
            assert not failed, f"{name}: a workflow task failed (non-determinism?): {failed}"
    assert last(second[SERVICES[0]]).writes >= 1
    assert route_back is not None, "B put the route back"
    for name in SERVICES[1:]:
        assert last(second[name]).writes == 0, "B found A's work in place"


def last(state: WorkflowState) -> PassSummary:
    assert state.last is not None
    return state.last


async def _is(value: Awaitable[str], expected: str) -> bool:
    return (await value) == expected
