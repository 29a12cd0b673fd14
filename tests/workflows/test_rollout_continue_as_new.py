"""Continue-as-new of ``RolloutWorkflow`` on a local dev server (the time-skipping server never suggests
it), with ``limit.historyCount.suggestContinueAsNew`` lowered so that nearly every turn continues: the
state (step, weights, timeline) goes across runs, and no step is taken twice."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.rollout_models import RolloutMembers
from activities.router_activities import RouterActivities
from llmisvc_core.rollout.plan import parse_plan
from llmisvc_core.rollout.weights import Weights
from llmisvc_runtime.settings import WorkerSizing
from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster
from tests.workflows.test_rollout_workflow import GROUP, member, weights_of
from worker.factory import build_worker
from workflows.rollout_models import RolloutInput, RolloutPhase, RolloutStatus, rollout_workflow_id
from workflows.rollout_workflow import RolloutWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def dev_client() -> AsyncIterator[Client]:
    env: WorkflowEnvironment = await harness.start_dev_server(15)
    yield env.client
    await env.shutdown()


async def test_rollout_continues_as_new_with_its_state(dev_client: Client) -> None:
    cluster = FakeCluster([member("stable", 100), member("canary", 0)])
    members = RolloutMembers(namespace=world.NAMESPACE, group=GROUP, stable="stable", candidate="canary")
    plan = parse_plan(
        {"steps": [{"weight": w, "dwell_seconds": 2} for w in (10, 50, 100)], "gate_recheck_seconds": 1}
    )
    suffix = uuid.uuid4().hex[:8]
    with ThreadPoolExecutor(max_workers=4) as executor:
        activities = RouterActivities(cluster, cluster, world.ENV)
        async with build_worker(dev_client, f"rollout-can-{suffix}", activities, executor, WorkerSizing(4)):
            handle = await dev_client.start_workflow(
                RolloutWorkflow.run,
                RolloutInput(members=members, plan=plan),
                id=f"{rollout_workflow_id(world.NAMESPACE, GROUP)}-{suffix}",
                task_queue=f"rollout-can-{suffix}",
            )
            first_run = handle.result_run_id
            result = await handle.result()
            status: RolloutStatus = await handle.query(RolloutWorkflow.status)
    assert result.phase == RolloutPhase.SUCCEEDED
    assert weights_of(cluster) == Weights(stable=0, candidate=100)
    assert [(e.step, e.weights.candidate) for e in status.timeline] == [(0, 0), (1, 10), (2, 50), (3, 100)]
    assert [w for w in cluster.writes if w.startswith("patch")] == [
        "patch LLMInferenceService llm/stable",
        "patch LLMInferenceService llm/canary",
    ] * 3
    history = await dev_client.get_workflow_handle(handle.id, run_id=first_run).fetch_history()
    assert history.events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
