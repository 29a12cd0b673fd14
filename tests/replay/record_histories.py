"""Record the histories that ``test_replay.py`` replays: a few representative runs of
``LLMInferenceServiceWorkflow`` and of ``RolloutWorkflow`` on the time-skipping test server, over the
in-memory cluster of the workflow tests, each written to ``histories/<scenario>.json``.

Run from the repository root after a deliberate, compatible change to the workflow (never to make a
failing replay pass: that failure means running workflows would break)::

    .venv/bin/python -m tests.replay.record_histories [SCENARIO ...]
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client, WorkflowHistory
from temporalio.testing import WorkflowEnvironment

from activities.management import Management
from llmisvc_core.models.kube import GATEWAY, GATEWAYCLASS, HTTPROUTE, LLMISVC, POOL_V1, POOL_V1ALPHA2
from llmisvc_kube.api import ApiError
from tests.workflows import harness, world
from tests.workflows import test_rollout_workflow as rollouts
from tests.workflows.fake_cluster import FakeCluster
from workflows.models import ReconcileSignal
from workflows.rollout_models import ControlRequest
from workflows.rollout_workflow import RolloutWorkflow
from workflows.service_workflow import LLMInferenceServiceWorkflow

HISTORIES = Path(__file__).parent / "histories"
Scenario = Callable[[WorkflowEnvironment, Client], Awaitable[WorkflowHistory]]


async def first_pass(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """The first pass creates the EPP Service, both InferencePools and the HTTPRoute, then the status."""
    async with harness.running_service(client, FakeCluster(world.minimal_world()), label="first-pass") as svc:
        await svc.passes(1)
        return await svc.handle.fetch_history()


async def noop_resync(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """The resync timer fires on a settled world: a pass that reads, plans and writes nothing."""
    async with harness.running_service(
        client, FakeCluster(world.minimal_world()), resync_seconds=600, label="noop-resync"
    ) as svc:
        await svc.passes(1)
        await env.sleep(timedelta(seconds=601))
        await svc.passes(2)
        return await svc.handle.fetch_history()


async def stop_resume(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    async with harness.running_service(
        client, FakeCluster(world.minimal_world()), label="stop-resume"
    ) as svc:
        await svc.passes(1)
        await svc.handle.signal(LLMInferenceServiceWorkflow.stop)
        await svc.passes(2)
        await svc.handle.signal(LLMInferenceServiceWorkflow.resume)
        await svc.passes(3)
        return await svc.handle.fetch_history()


async def conflict_restart(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """A route write loses a race (409): the pass waits, reads the world again and converges."""
    cluster = FakeCluster(world.minimal_world())
    cluster.fail("create", ApiError(409, "httproutes opt-kserve-route already exists"), kind="HTTPRoute")
    async with harness.running_service(client, cluster, label="conflict-restart") as svc:
        await env.sleep(timedelta(seconds=3))
        await svc.passes(1)
        return await svc.handle.fetch_history()


async def recheck_then_reconcile(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """Gateway API is not installed: re-checks after 10 s and 20 s, then the CRDs appear and it reconciles.
    Along the way a ``reconcile_now`` update and a ``reconcile`` signal arrive."""
    cluster = FakeCluster(world.minimal_world(), served=[LLMISVC])
    async with harness.running_service(client, cluster, label="recheck-then-reconcile") as svc:
        await svc.passes(1)
        await env.sleep(timedelta(seconds=31))
        await svc.passes(3)
        cluster.served_types |= {HTTPROUTE, GATEWAY, GATEWAYCLASS, POOL_V1, POOL_V1ALPHA2}
        await svc.handle.execute_update(
            LLMInferenceServiceWorkflow.reconcile_now, ReconcileSignal(reason="CRDs installed")
        )
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="Gateway changed")
        )
        await svc.passes(5)
        return await svc.handle.fetch_history()


async def gone(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """The service is deleted: the next pass finds it gone and the workflow completes."""
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster, label="gone") as svc:
        await svc.passes(1)
        cluster.remove(LLMISVC, world.NAMESPACE, world.NAME)
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="LLMInferenceService deleted")
        )
        await asyncio.wait_for(svc.handle.result(), harness.WAIT)
        return await svc.handle.fetch_history()


async def shadow(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """Shadow mode: passes that read and plan, write nothing and record the drift (a signal in between)."""
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(
        client, cluster, label="shadow", management=Management.of("shadow")
    ) as svc:
        await svc.passes(1)
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="Gateway changed")
        )
        await svc.passes(2)
        return await svc.handle.fetch_history()


async def handed_off(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """The service leaves the selection: its next pass hands it off and the workflow completes."""
    labelled = world.service()
    labelled["metadata"]["labels"] = {"router": "llmisvc"}
    cluster = FakeCluster([labelled, *world.minimal_world()[1:]])
    selected = Management.of("write", "router=llmisvc")
    async with harness.running_service(client, cluster, label="handed-off", management=selected) as svc:
        await svc.passes(1)
        current = cluster.read(LLMISVC, world.NAMESPACE, world.NAME) or {}
        current["metadata"]["labels"] = {}
        cluster.put(current)
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="labels changed")
        )
        await asyncio.wait_for(svc.handle.result(), harness.WAIT)
        return await svc.handle.fetch_history()


async def rendered_rejected(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """KServe #5918: the API server refuses the merged spec (422), and the re-check 10 s later reuses the
    verdict kept in the workflow's state."""
    cluster = FakeCluster(world.minimal_world())
    message = 'LLMInferenceService.serving.kserve.io "opt-validation-abcde" is invalid: spec: Invalid value'
    body = {"kind": "Status", "reason": "Invalid", "code": 422, "message": message}
    cluster.fail("dry_run", ApiError(422, message, body=body), kind="LLMInferenceService")
    async with harness.running_service(client, cluster, label="rendered-rejected") as svc:
        await svc.passes(1)
        await env.sleep(timedelta(seconds=11))
        await svc.passes(2)
        return await svc.handle.fetch_history()


async def model_name_collision(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """Another service serves the same model name: the first pass records the ModelNameCollision
    Warning; the resync after it plans the same Warning and records nothing (one activity)."""
    cluster = FakeCluster([*world.minimal_world(), world.service("twin")])
    async with harness.running_service(
        client, cluster, resync_seconds=600, label="model-name-collision"
    ) as svc:
        await svc.passes(1)
        await env.sleep(timedelta(seconds=601))
        await svc.passes(2)
        return await svc.handle.fetch_history()


async def invalid_spec(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """A spec the router cannot read: the status writer says so; the re-check 10 s later, on the same
    spec, reads only."""
    svc = world.service()
    svc["spec"]["model"]["lora"] = {"adapters": "all of them"}  # open schema: the router wants a list
    cluster = FakeCluster([svc, *world.minimal_world()[1:]])
    async with harness.running_service(client, cluster, label="invalid-spec") as running:
        await running.passes(1)
        await env.sleep(timedelta(seconds=11))
        await running.passes(2)
        return await running.handle.fetch_history()


#: A rollout plan whose dwells are watched twice each: a short history with every kind of turn in it.
ROLLOUT_PLAN = {
    "steps": [{"weight": w, "dwell_seconds": 60} for w in (10, 50, 100)],
    "gate_recheck_seconds": 30,
    "gate_timeout_seconds": 60,
}


async def rollout_paused_and_resumed(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """``RolloutWorkflow`` 10% → 50% → 100%, paused and resumed at step 1, to ``succeeded``."""
    async with rollouts.rollout(client, ROLLOUT_PLAN) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        await run.handle.execute_update(RolloutWorkflow.pause, ControlRequest(by="record_histories"))
        await run.handle.execute_update(RolloutWorkflow.resume, ControlRequest(by="record_histories"))
        await run.handle.result()
        return await run.handle.fetch_history()


async def rollout_rolled_back(env: WorkflowEnvironment, client: Client) -> WorkflowHistory:
    """The candidate's ``WorkloadsReady`` turns False at step 1: the gates wait, then roll back."""
    cluster = FakeCluster([rollouts.member("stable", 100), rollouts.member("canary", 0)])
    async with rollouts.rollout(client, ROLLOUT_PLAN, cluster) as run:
        await run.until(lambda s: s.step == 1, "step 1")
        canary = cluster.read(LLMISVC, world.NAMESPACE, "canary") or {}
        canary["status"]["conditions"][2]["status"] = "False"
        cluster.put(canary)
        await run.handle.result()
        return await run.handle.fetch_history()


SCENARIOS: dict[str, Scenario] = {
    "first_pass": first_pass,
    "noop_resync": noop_resync,
    "stop_resume": stop_resume,
    "conflict_restart": conflict_restart,
    "recheck_then_reconcile": recheck_then_reconcile,
    "gone": gone,
    "shadow": shadow,
    "handed_off": handed_off,
    "rendered_rejected": rendered_rejected,
    "model_name_collision": model_name_collision,
    "invalid_spec": invalid_spec,
    "rollout_paused_and_resumed": rollout_paused_and_resumed,
    "rollout_rolled_back": rollout_rolled_back,
}


async def record(names: list[str]) -> None:
    env = await harness.start_time_skipping()
    try:
        HISTORIES.mkdir(exist_ok=True)
        for name in names:
            history = await SCENARIOS[name](env, env.client)
            path = HISTORIES / f"{name}.json"
            path.write_text(history.to_json() + "\n", encoding="utf-8")
            print(f"{path}: {len(history.events)} events")
    finally:
        await env.shutdown()


def main(argv: list[str]) -> int:
    unknown = [n for n in argv if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    asyncio.run(record(argv or list(SCENARIOS)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
