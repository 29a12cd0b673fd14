"""``RolloutWorkflow`` on the time-skipping test server (issue 22), with the production worker
(``worker.factory.build_worker``) over an in-memory API server and a tiny Prometheus over HTTP: the
steps advance on durable timers named after them; pause, resume, promote and abort; a failing gate rolls
back; a weight edited by someone else pauses the rollout and is never overwritten."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from activities.events import EventRecorder
from activities.management import Management
from activities.rollout_activities import RolloutActivities
from activities.rollout_models import RolloutMembers, WriteWeightsInput
from activities.router_activities import RouterActivities
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.rollout.plan import parse_plan
from llmisvc_core.rollout.weights import Weights
from llmisvc_runtime.settings import WorkerSizing
from tests import builders as b
from tests import prometheus
from tests.workflows import world
from tests.workflows.fake_cluster import FakeCluster
from worker.factory import build_worker
from workflows.rollout_models import (
    ControlRequest,
    RolloutInput,
    RolloutPhase,
    RolloutResult,
    RolloutStatus,
    rollout_workflow_id,
)
from workflows.rollout_workflow import RolloutWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

GROUP = "llama"
READY = [{"type": t, "status": "True"} for t in ("Ready", "RouterReady", "WorkloadsReady", "GroupReady")]
WAIT = 15.0
Handle = WorkflowHandle[RolloutWorkflow, RolloutResult]


def member(name: str, weight: int, conditions: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return b.service(
        name,
        world.NAMESPACE,
        uid=None,
        generation=None,
        model=b.model(),
        router={"route": {"group": GROUP, "weight": weight}, "gateway": {}},
        status={"conditions": READY if conditions is None else conditions},
    )


def weights_of(cluster: FakeCluster) -> Weights:
    stable = cluster.read(LLMISVC, world.NAMESPACE, "stable")
    canary = cluster.read(LLMISVC, world.NAMESPACE, "canary")
    assert stable is not None and canary is not None
    return Weights(
        stable=stable["spec"]["router"]["route"]["weight"],
        candidate=canary["spec"]["router"]["route"]["weight"],
    )


@dataclass
class Rollout:
    cluster: FakeCluster
    handle: Handle

    async def status(self) -> RolloutStatus:
        return await self.handle.query(RolloutWorkflow.status)

    async def until(self, check: Callable[[RolloutStatus], bool], what: str) -> RolloutStatus:
        """Poll ``status`` in real time (time skipping waits while nobody awaits the result)."""
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            status = await self.status()
            if check(status):
                return status
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out waiting for {what}; status: {status!r}")
            await asyncio.sleep(0.05)

    async def edited_until_paused(self, env: WorkflowEnvironment, name: str, weight: int) -> RolloutStatus:
        """Someone else (a person, a GitOps tool) sets ``name``'s weight: the rollout's next look during the
        dwell (20 s of skipped time later) finds the edit and pauses."""
        svc = self.cluster.read(LLMISVC, world.NAMESPACE, name)
        assert svc is not None
        svc["spec"]["router"]["route"]["weight"] = weight
        self.cluster.put(svc)
        await env.sleep(20)
        return await self.until(lambda s: s.phase == RolloutPhase.PAUSED, "the rollout to pause")


PLAN = {"steps": [{"weight": 10, "dwell_seconds": 600}, {"weight": 50, "dwell_seconds": 600},
                  {"weight": 100, "dwell_seconds": 600}]}  # fmt: skip


@asynccontextmanager
async def rollout(
    client: Client, plan: dict[str, Any] = PLAN, cluster: FakeCluster | None = None
) -> AsyncIterator[Rollout]:
    cluster = cluster or FakeCluster([member("stable", 100), member("canary", 0)])
    suffix = uuid.uuid4().hex[:8]
    task_queue = f"rollout-tests-{suffix}"
    members = RolloutMembers(namespace=world.NAMESPACE, group=GROUP, stable="stable", candidate="canary")
    with ThreadPoolExecutor(max_workers=4) as executor:
        activities = RouterActivities(cluster, cluster, world.ENV)
        async with build_worker(client, task_queue, activities, executor, WorkerSizing(activity_threads=4)):
            handle = await client.start_workflow(
                RolloutWorkflow.run,
                RolloutInput(members=members, plan=parse_plan(plan)),
                id=f"{rollout_workflow_id(world.NAMESPACE, GROUP)}-{suffix}",
                task_queue=task_queue,
            )
            try:
                yield Rollout(cluster, handle)
            finally:
                # A rollout left running would hold its timers (and time skipping) on the shared server.
                if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
                    await handle.terminate("test finished")


async def test_rollout_steps_advance_on_timers_named_after_the_step(client: Client) -> None:
    async with rollout(client) as run:
        result = await run.handle.result()
        assert (result.phase, result.weights) == (RolloutPhase.SUCCEEDED, Weights(stable=0, candidate=100))
        assert weights_of(run.cluster) == Weights(stable=0, candidate=100)
        status = await run.status()
        assert [(e.step, e.weights.candidate, e.note) for e in status.timeline] == [
            (0, 0, "started"), (1, 10, "step 1"), (2, 50, "step 2"), (3, 100, "step 3"),
        ]  # fmt: skip
        assert [round((e.at - status.timeline[1].at).total_seconds()) for e in status.timeline[1:]] == [
            0,
            600,
            1200,
        ]
        history = await run.handle.fetch_history()
        started = [e for e in history.events if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED]
        summaries = [e.user_metadata.summary.data.decode() for e in started]
        # The dwell is watched: a timer per re-check of the gates, each named after its step.
        assert list(dict.fromkeys(summaries)) == [
            '"step 1/3: 10% to the candidate"', '"step 2/3: 50% to the candidate"',
            '"step 3/3: 100% to the candidate"',
        ]  # fmt: skip
        reasons = [e["reason"] for e in run.cluster.events_about(world.NAMESPACE, "canary")]
        assert reasons == ["RolloutStarted", "RolloutStep", "RolloutStep", "RolloutStep", "RolloutSucceeded"]
        assert reasons == [e["reason"] for e in run.cluster.events_about(world.NAMESPACE, "stable")]


async def test_rollout_second_start_for_the_group_is_refused_naming_the_running_one(client: Client) -> None:
    async with rollout(client) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        with pytest.raises(WorkflowAlreadyStartedError) as raised:
            await client.start_workflow(
                RolloutWorkflow.run,
                RolloutInput(
                    members=RolloutMembers(
                        namespace=world.NAMESPACE, group=GROUP, stable="stable", candidate="x"
                    ),
                    plan=parse_plan(PLAN),
                ),
                id=run.handle.id,
                task_queue="elsewhere",
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            )
        assert raised.value.workflow_id == run.handle.id


async def test_rollout_pause_freezes_the_dwell_and_resume_goes_on(
    client: Client, env: WorkflowEnvironment
) -> None:
    async with rollout(client) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        paused = await run.handle.execute_update(RolloutWorkflow.pause, ControlRequest(by="alice"))
        assert (paused.phase, paused.reason) == (RolloutPhase.PAUSED, "paused by alice")
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await run.handle.execute_update(RolloutWorkflow.pause, ControlRequest(by="bob"))
        assert "is paused already: paused by alice" in str(refused.value.cause)
        await env.sleep(900)  # paused for longer than the dwell (600 s): no step is taken
        assert (await run.status()).step == 1
        assert weights_of(run.cluster) == Weights(stable=90, candidate=10)
        resumed = await run.handle.execute_update(RolloutWorkflow.resume, ControlRequest(by="alice"))
        assert resumed.phase == RolloutPhase.RUNNING
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await run.handle.execute_update(RolloutWorkflow.resume, ControlRequest(by="alice"))
        assert "is not paused (it is running)" in str(refused.value.cause)
        assert (await run.handle.result()).phase == RolloutPhase.SUCCEEDED
        reasons = [e["reason"] for e in run.cluster.events_about(world.NAMESPACE, "canary")]
        assert "RolloutPaused" in reasons and "RolloutResumed" in reasons


async def test_rollout_promote_jumps_to_100(client: Client) -> None:
    async with rollout(client) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        done = await run.handle.execute_update(RolloutWorkflow.promote, ControlRequest(by="alice"))
        assert (done.phase, done.reason, done.step) == (RolloutPhase.SUCCEEDED, "promoted by alice", 1)
        assert weights_of(run.cluster) == Weights(stable=0, candidate=100)
        assert (await run.handle.result()).phase == RolloutPhase.SUCCEEDED
        with pytest.raises(RPCError):  # ended: the server takes no more updates
            await run.handle.execute_update(RolloutWorkflow.abort, ControlRequest(by="bob"))


async def test_rollout_abort_puts_back_the_starting_weights(client: Client) -> None:
    async with rollout(client) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        done = await run.handle.execute_update(RolloutWorkflow.abort, ControlRequest(by="alice"))
        assert done.phase == RolloutPhase.ABORTED
        assert done.reason == "aborted by alice; back to stable 100 / candidate 0"
        assert weights_of(run.cluster) == Weights(stable=100, candidate=0)
        assert (await run.handle.result()).phase == RolloutPhase.ABORTED


async def test_rollout_failing_prometheus_gate_rolls_back_to_last_good(
    client: Client, env: WorkflowEnvironment
) -> None:
    with prometheus.serving(0.01) as prom:
        plan = {**PLAN, "prometheus": {"url": prom.url, "query": "error_rate", "threshold": 0.05}}
        async with rollout(client, plan) as run:
            await run.until(lambda s: s.step == 1, "step 1")
            await env.sleep(600)
            await run.until(lambda s: s.step == 2, "step 2")
            prom.value = 0.3  # the candidate at 50% is failing
            result = await run.handle.result()
        assert result.phase == RolloutPhase.ROLLED_BACK
        assert result.reason == (
            "gate failed: prometheus (error_rate = 0.3, must be at most 0.05); "
            "rolled back to stable 90 / candidate 10"
        )
        assert weights_of(run.cluster) == Weights(stable=90, candidate=10)
        assert set(prom.queries) == {"error_rate"}
        notes = [
            e["note"] for e in run.cluster.events_about(world.NAMESPACE, "stable") if e["type"] == "Warning"
        ]
        assert notes == [f"rolled-back: {result.reason}"]


async def test_rollout_rolls_back_to_stable_when_gates_stay_pending(client: Client) -> None:
    cluster = FakeCluster([member("stable", 100), member("canary", 0)])
    plan = {**PLAN, "rollback": "stable", "gate_timeout_seconds": 120}
    async with rollout(client, plan, cluster) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        canary = cluster.read(LLMISVC, world.NAMESPACE, "canary")
        assert canary is not None
        canary["status"]["conditions"][2]["status"] = "False"  # WorkloadsReady: the candidate's pods crash
        cluster.put(canary)
        result = await run.handle.result()
        assert result.phase == RolloutPhase.ROLLED_BACK
        assert result.reason.startswith(
            "gates pending for over 120s: canary WorkloadsReady (WorkloadsReady is False)"
        )
        assert weights_of(cluster) == Weights(stable=100, candidate=0)


async def test_rollout_weights_edited_by_someone_else_pause_it(
    client: Client, env: WorkflowEnvironment
) -> None:
    async with rollout(client) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        status = await run.edited_until_paused(env, "canary", 30)
        assert status.reason == "weights edited by someone else: canary has weight 30, the rollout set 10"
        assert weights_of(run.cluster) == Weights(stable=90, candidate=30)  # left as the person set it
        # Resumed, the rollout takes the weights as they are and goes on from the next step.
        await run.handle.execute_update(RolloutWorkflow.resume, ControlRequest(by="alice"))
        assert (await run.handle.result()).phase == RolloutPhase.SUCCEEDED
        assert weights_of(run.cluster) == Weights(stable=0, candidate=100)


async def test_rollout_abort_after_an_edit_leaves_the_weights_alone(
    client: Client, env: WorkflowEnvironment
) -> None:
    async with rollout(client) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        await run.edited_until_paused(env, "stable", 70)
        done = await run.handle.execute_update(RolloutWorkflow.abort, ControlRequest(by="alice"))
        assert (
            done.reason
            == "aborted by alice; the weights were edited by someone else and are left as they are"
        )
        assert weights_of(run.cluster) == Weights(stable=70, candidate=10)


async def test_rollout_write_is_idempotent() -> None:
    """A write tried again (its answer lost, its worker killed) finds the target in place and writes
    nothing: no double step."""
    cluster = FakeCluster([member("stable", 100), member("canary", 0)])
    activities = RolloutActivities(cluster, EventRecorder(cluster))
    members = RolloutMembers(namespace=world.NAMESPACE, group=GROUP, stable="stable", candidate="canary")
    request = WriteWeightsInput(
        members=members, expected=Weights(stable=100, candidate=0), target=Weights(stable=90, candidate=10)
    )
    first = activities.write_rollout_weights(request)
    again = activities.write_rollout_weights(request)
    assert (first.written, first.edited) == (["stable", "canary"], None)
    assert (again.written, again.edited) == ([], None)
    assert cluster.writes == ["patch LLMInferenceService llm/stable", "patch LLMInferenceService llm/canary"]
    # Half done (the stable service written, then the worker died): the retry writes the candidate only.
    half = FakeCluster([member("stable", 90), member("canary", 0)])
    resumed = RolloutActivities(half, EventRecorder(half)).write_rollout_weights(request)
    assert (resumed.written, half.writes) == (["canary"], ["patch LLMInferenceService llm/canary"])


async def test_rollout_in_shadow_mode_writes_nothing_and_pauses(client: Client) -> None:
    cluster = FakeCluster([member("stable", 100), member("canary", 0)])
    members = RolloutMembers(namespace=world.NAMESPACE, group=GROUP, stable="stable", candidate="canary")
    suffix = uuid.uuid4().hex[:8]
    with ThreadPoolExecutor(max_workers=4) as executor:
        activities = RouterActivities(cluster, cluster, world.ENV, Management.of("shadow"))
        async with build_worker(client, f"rollout-shadow-{suffix}", activities, executor, WorkerSizing(4)):
            handle = await client.start_workflow(
                RolloutWorkflow.run,
                RolloutInput(members=members, plan=parse_plan(PLAN)),
                id=f"{rollout_workflow_id(world.NAMESPACE, GROUP)}-{suffix}",
                task_queue=f"rollout-shadow-{suffix}",
            )
            run = Rollout(cluster, handle)
            status = await run.until(lambda s: s.phase == RolloutPhase.PAUSED, "the rollout to pause")
            await handle.terminate("test finished")
    assert status.reason.startswith("cannot write the weights (step 1): this worker runs in shadow mode")
    assert weights_of(cluster) == Weights(stable=100, candidate=0)
    assert not [w for w in cluster.writes if w.startswith("patch")]


async def test_rollout_promote_after_an_edit_starts_from_the_weights_as_they_are(
    client: Client, env: WorkflowEnvironment
) -> None:
    async with rollout(client) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        await run.edited_until_paused(env, "canary", 30)
        done = await run.handle.execute_update(RolloutWorkflow.promote, ControlRequest(by="alice"))
        assert (done.phase, done.reason) == (RolloutPhase.SUCCEEDED, "promoted by alice")
        assert weights_of(run.cluster) == Weights(stable=0, candidate=100)
