"""Running ``LLMInferenceServiceWorkflow`` against a test server: the production worker (``build_worker``
with the real ``RouterActivities``) over a :class:`FakeCluster`, plus helpers that wait for passes and
read what Temporal recorded. Shared by the workflow tests and ``tests/replay/record_histories.py``."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.client import WorkflowExecutionStatus as Status
from temporalio.testing import WorkflowEnvironment

from activities.management import Management
from activities.router_activities import RouterActivities
from llmisvc_runtime.settings import WorkerSizing
from tests.history import ActivityRun
from tests.workflows import world
from tests.workflows.fake_cluster import FakeCluster
from worker.factory import DATA_CONVERTER, build_worker
from workflows.models import ServiceWorkflowInput, ServiceWorkflowResult, WorkflowState, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

BIN = Path(sys.executable).parent
TEST_SERVER = BIN / "temporal-test-server"
DEV_SERVER = BIN / "temporal"
WAIT = 15.0  # real seconds a helper waits for the workflow to get somewhere

Handle = WorkflowHandle[LLMInferenceServiceWorkflow, ServiceWorkflowResult]

SIZING = WorkerSizing(activity_threads=4)


async def start_time_skipping() -> WorkflowEnvironment:
    return await WorkflowEnvironment.start_time_skipping(
        data_converter=DATA_CONVERTER, test_server_existing_path=str(TEST_SERVER)
    )


async def start_dev_server(suggest_continue_as_new_after: int) -> WorkflowEnvironment:
    """A local dev server that suggests continue-as-new once a run's history has that many events."""
    return await WorkflowEnvironment.start_local(
        data_converter=DATA_CONVERTER,
        dev_server_existing_path=str(DEV_SERVER),
        dev_server_extra_args=[
            "--dynamic-config-value",
            f"limit.historyCount.suggestContinueAsNew={suggest_continue_as_new_after}",
        ],
    )


@dataclass
class Service:
    """One running workflow, the world it reconciles and the client that reaches it."""

    client: Client
    cluster: FakeCluster
    task_queue: str
    handle: Handle

    async def state(self) -> WorkflowState:
        return await self.handle.query(LLMInferenceServiceWorkflow.state)

    async def until(self, check: Callable[[WorkflowState], bool], what: str) -> WorkflowState:
        """Poll the ``state`` query until ``check`` holds (real time; time skipping stays locked)."""
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            state = await self.state()
            if check(state):
                return state
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out waiting for {what}; state: {state!r}")
            await asyncio.sleep(0.05)

    async def passes(self, count: int) -> WorkflowState:
        """Wait until ``count`` passes have finished and no trigger is pending."""
        return await self.until(lambda s: s.pass_count >= count and not s.pending_reasons, f"{count} passes")


@asynccontextmanager
async def running_service(
    client: Client,
    cluster: FakeCluster,
    *,
    resync_seconds: int = 600,
    name: str = world.NAME,
    label: str | None = None,
    management: Management | None = None,
) -> AsyncIterator[Service]:
    """A worker (the production factory) and one started workflow; terminated on the way out.

    ``label`` names the task queue and ends the workflow id (default: random, so tests never collide).
    """
    suffix = label or uuid.uuid4().hex[:8]
    task_queue = f"workflow-tests-{suffix}"
    with ThreadPoolExecutor(max_workers=4) as executor:
        async with build_worker(
            client,
            task_queue,
            RouterActivities(cluster, cluster, world.ENV, management),
            executor,
            WorkerSizing(activity_threads=4),
        ):
            handle = await client.start_workflow(
                LLMInferenceServiceWorkflow.run,
                ServiceWorkflowInput(namespace=world.NAMESPACE, name=name, resync_seconds=resync_seconds),
                id=f"{workflow_id(world.NAMESPACE, name)}-{suffix}",
                task_queue=task_queue,
            )
            try:
                yield Service(client, cluster, task_queue, handle)
            finally:
                # A workflow left running would keep timers on the shared server; with no worker on its
                # task queue, its next task would hold time skipping for every later test.
                if (await handle.describe()).status == Status.RUNNING:
                    await handle.terminate("test finished")


# -- what Temporal recorded ---------------------------------------------------------------------------


def pass_starts(runs: list[ActivityRun]) -> list[ActivityRun]:
    """Every pass starts with ``fetch_gateways`` (or with ``set_stop_annotation`` just before it); a pass
    restarted after a lost race runs it again."""
    return [r for r in runs if r.name == "fetch_gateways"]


def names(runs: list[ActivityRun]) -> list[str]:
    return [r.name for r in runs]


async def timers(handle: WorkflowHandle[Any, Any]) -> list[timedelta]:
    """The durations of the timers the run started (resync, re-check and restart back-off)."""
    history = await handle.fetch_history()
    return [
        event.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_TIMER_STARTED
    ]
