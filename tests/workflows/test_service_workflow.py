"""``LLMInferenceServiceWorkflow`` on the time-skipping test server.

The worker is the production one (``worker.factory.build_worker`` with the real ``RouterActivities`` and
the real planning core); only the Kubernetes API underneath is faked, in memory, so each test sets up the
world, lets simulated time pass, and checks the world, the ``state`` query and what Temporal recorded.
"""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import WithStartWorkflowOperation, WorkflowUpdateStage
from temporalio.common import WorkflowIDConflictPolicy

from activities.router_activities import RouterActivities
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC, SERVICE
from llmisvc_runtime.settings import WorkerSizing
from tests import history
from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster, annotations_of
from worker.factory import build_worker
from workflows.models import ReconcileSignal, ServiceWorkflowInput, workflow_id
from workflows.service_workflow import RECHECK_FIRST, LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

RESYNC = timedelta(seconds=3)


# -- the loop -----------------------------------------------------------------------------------------


async def test_first_pass_runs_on_start_and_creates_the_route_pools_and_status(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        state = await svc.passes(1)

    assert state.pass_count == 1
    assert state.last is not None and state.last.outcome == "reconciled"
    assert all(any(k.startswith(m) for k in cluster.kinds()) for m in world.MANAGED), cluster.kinds()
    stored = cluster.read(LLMISVC, world.NAMESPACE, world.NAME)
    assert stored is not None and stored["status"]["url"] == "http://203.0.113.10/llm/opt"


async def test_resync_timer_runs_a_pass_after_resync_seconds_without_a_trigger(client):
    # A short resync that passes in real time: no `env.sleep`, whose RPC has the client's 30 s default
    # deadline and once ran out on a loaded CI machine. History times are the server's, so the gap
    # between the two passes is what the timer waited, however slow the machine.
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster, resync_seconds=int(RESYNC.total_seconds())) as svc:
        await svc.passes(2)
        state = await svc.state()
        runs = await history.activity_runs(svc.handle)

    first, second = harness.pass_starts(runs)
    assert second.scheduled - first.scheduled >= RESYNC, "no pass before the resync period is over"
    assert state.last is not None and state.last.writes == 0, "a resync of a settled world writes nothing"
    # The resync of a settled world is one activity: nothing to write, the status unchanged.
    assert harness.names(runs) == [
        "fetch_gateways",
        "reconcile_scheduler",
        "reconcile_routes",
        "evaluate_conditions",
        "fetch_gateways",
    ]
    assert state.last.status_written is False


async def test_reconcile_signals_sent_during_a_pass_are_coalesced_into_one_following_pass(client):
    cluster = FakeCluster(world.minimal_world())
    held = cluster.hold("sync")  # fetch_gateways of the first pass
    async with harness.running_service(client, cluster) as svc:
        assert await asyncio.to_thread(held.reached.wait, harness.WAIT)
        for reason in ("HTTPRoute changed", "Gateway changed", "InferencePool changed"):
            await svc.handle.signal(LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason=reason))
        during = await svc.state()
        cluster.release(held)
        state = await svc.passes(2)
        runs = await history.activity_runs(svc.handle)

    assert during.pass_count == 0
    assert during.pending_reasons == ["HTTPRoute changed", "Gateway changed", "InferencePool changed"]
    assert state.pass_count == 2 and state.pending_reasons == []
    assert len(harness.pass_starts(runs)) == 2


async def test_state_query_reports_pass_count_last_outcome_and_conditions(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="Gateway changed")
        )
        state = await svc.passes(2)

    assert state.pass_count == 2
    assert state.uid == cluster.read(LLMISVC, world.NAMESPACE, world.NAME)["metadata"]["uid"]  # type: ignore[index]
    assert state.last is not None
    assert state.last.outcome == "reconciled"
    assert state.last.url == "http://203.0.113.10/llm/opt"
    assert state.last.conditions["RouterReady"] == "False(HTTPRoutesNotReady)"
    assert state.last.conditions["HTTPRoutesReady"] == "False(HTTPRoutesNotReady)"
    assert state.last_error is None and state.recheck_attempt == 0


async def test_reconcile_now_update_returns_the_pass_summary(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        cluster.put(world.ingress_gateway() | {"status": {}})  # the Gateway lost its address
        summary = await svc.handle.execute_update(
            LLMInferenceServiceWorkflow.reconcile_now, ReconcileSignal(reason="user asked")
        )
        state = await svc.state()

    assert state.pass_count == 2
    assert summary == state.last
    assert summary.outcome == "reconciled"
    assert summary.url is None
    assert summary.conditions["RouterReady"].startswith("False")


async def test_stop_then_resume_set_and_remove_the_stop_annotation_before_the_pass(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        cluster.writes.clear()

        await svc.handle.signal(LLMInferenceServiceWorkflow.stop)
        stopped = await svc.passes(2)
        stop_writes = list(cluster.writes)
        managed_while_stopped = [k for k in cluster.kinds() if any(k.startswith(m) for m in world.MANAGED)]
        annotations_while_stopped = annotations_of(cluster, world.NAMESPACE, world.NAME)

        cluster.writes.clear()
        await svc.handle.signal(LLMInferenceServiceWorkflow.resume)
        resumed = await svc.passes(3)
        runs = await history.activity_runs(svc.handle)

    assert annotations_while_stopped == {"serving.kserve.io/stop": "true"}
    assert stop_writes[0] == f"patch LLMInferenceService {world.NAMESPACE}/{world.NAME}"
    assert f"delete HTTPRoute {world.NAMESPACE}/{world.ROUTE}" in stop_writes
    assert managed_while_stopped == []
    assert stopped.last is not None and stopped.last.conditions["RouterReady"] == "False(Stopped)"

    assert "serving.kserve.io/stop" not in annotations_of(cluster, world.NAMESPACE, world.NAME)
    assert cluster.writes[0] == f"patch LLMInferenceService {world.NAMESPACE}/{world.NAME}"
    assert all(any(k.startswith(m) for k in cluster.kinds()) for m in world.MANAGED)
    assert resumed.desired_stop is None

    # Each stop/resume is carried out first in its pass, before the service is read for the pass.
    order = harness.names(runs)
    second, third = [i for i, name in enumerate(order) if name == "set_stop_annotation"]
    assert order[second + 1] == order[third + 1] == "fetch_gateways"
    assert order.count("set_stop_annotation") == 2


async def test_stop_of_an_already_stopped_service_writes_nothing_to_it(client):
    cluster = FakeCluster(world.minimal_world(stopped=True))
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        cluster.writes.clear()
        await svc.handle.signal(LLMInferenceServiceWorkflow.stop)
        await svc.passes(2)

    assert not any(w.startswith("patch") for w in cluster.writes)
    assert annotations_of(cluster, world.NAMESPACE, world.NAME) == {"serving.kserve.io/stop": "true"}


# -- the service's lifecycle --------------------------------------------------------------------------


async def test_workflow_completes_when_the_service_is_gone(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        cluster.remove(LLMISVC, world.NAMESPACE, world.NAME)
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="LLMInferenceService deleted")
        )
        result = await asyncio.wait_for(svc.handle.result(), harness.WAIT)
        runs = await history.activity_runs(svc.handle)

    assert result.passes == 2
    assert "gone" in result.reason
    assert harness.names(runs)[-1] == "fetch_gateways", (
        "nothing is read or written for a service that is gone"
    )


async def test_workflow_completes_when_the_service_is_gone_between_reads(client):
    cluster = FakeCluster(world.minimal_world())
    held = cluster.hold("sync")
    async with harness.running_service(client, cluster) as svc:
        assert await asyncio.to_thread(held.reached.wait, harness.WAIT)
        cluster.remove(LLMISVC, world.NAMESPACE, world.NAME)  # while fetch_gateways reads it
        cluster.release(held)
        result = await asyncio.wait_for(svc.handle.result(), harness.WAIT)
        runs = await history.activity_runs(svc.handle)

    assert result.passes == 1
    assert harness.names(runs) == ["fetch_gateways"]
    assert cluster.writes == []


async def test_reconcile_now_accepted_before_the_service_is_gone_reports_gone_before_completing(client):
    cluster = FakeCluster(world.minimal_world())
    held = cluster.hold("sync")
    async with harness.running_service(client, cluster) as svc:
        assert await asyncio.to_thread(held.reached.wait, harness.WAIT)
        cluster.remove(LLMISVC, world.NAMESPACE, world.NAME)
        update = await svc.handle.start_update(
            LLMInferenceServiceWorkflow.reconcile_now,
            ReconcileSignal(reason="user asked"),
            wait_for_stage=WorkflowUpdateStage.ACCEPTED,
        )
        cluster.release(held)
        summary = await asyncio.wait_for(update.result(), harness.WAIT)
        result = await asyncio.wait_for(svc.handle.result(), harness.WAIT)

    # The update was accepted while the service still seemed to exist; the workflow let its pass run (and
    # find the service gone) before completing, instead of abandoning it.
    assert summary.outcome == "gone"
    assert result.passes == 2


def owner_uids(cluster: FakeCluster) -> set[str]:
    """The uids of the controllers of the managed objects."""
    route = cluster.read(HTTPROUTE, world.NAMESPACE, world.ROUTE)
    epp = cluster.read(SERVICE, world.NAMESPACE, "opt-epp-service")
    return {ref["uid"] for obj in (route, epp) if obj for ref in obj["metadata"]["ownerReferences"]}


async def test_delete_and_recreate_is_noticed_by_its_new_uid(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        first = await svc.passes(1)
        cluster.remove(LLMISVC, world.NAMESPACE, world.NAME)  # the garbage collector takes its objects
        recreated = cluster.put(world.service())
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="LLMInferenceService created")
        )
        second = await svc.passes(2)

    new_uid = recreated["metadata"]["uid"]
    assert first.uid != new_uid
    assert second.uid == new_uid
    assert owner_uids(cluster) == {new_uid}, "the managed objects were created again for the new object"
    stored = cluster.read(LLMISVC, world.NAMESPACE, world.NAME)
    assert stored is not None and stored["status"]["conditions"], "the new object got its status"
    assert second.last is not None and second.last.outcome == "reconciled" and second.last.status_written


async def test_recreated_service_whose_old_objects_are_not_collected_yet_converges_on_a_recheck(env, client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        first = await svc.passes(1)
        cluster.remove(LLMISVC, world.NAMESPACE, world.NAME, collect=False)
        cluster.put(world.service())
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="LLMInferenceService created")
        )
        blocked = await svc.passes(2)  # the old objects still belong to the deleted object
        cluster.collect_garbage()
        await env.sleep(RECHECK_FIRST + timedelta(seconds=1))
        converged = await svc.passes(3)

    assert blocked.last is not None and blocked.last.outcome == "failed"
    assert "not controlled by" in (blocked.last.message or "")
    assert blocked.recheck_attempt == 1
    assert converged.last is not None and converged.last.outcome == "reconciled"
    assert owner_uids(cluster) == {converged.uid} != {first.uid}


async def test_a_pass_of_the_update_that_finds_the_service_gone_ends_the_workflow_at_once(client):
    """``llmisvc-router reconcile`` of a deleted service: the update's pass finds it gone, and the main loop,
    already waiting for its resync timer, wakes and ends instead of waiting the 10 minutes out."""
    cluster = FakeCluster([])  # no service
    suffix = uuid.uuid4().hex[:8]
    task_queue = f"workflow-tests-{suffix}"
    request = ServiceWorkflowInput(namespace=world.NAMESPACE, name=world.NAME, resync_seconds=600)
    with ThreadPoolExecutor(max_workers=4) as executor:
        async with build_worker(
            client,
            task_queue,
            RouterActivities(cluster, cluster, world.ENV),
            executor,
            WorkerSizing(activity_threads=4),
        ):
            operation = WithStartWorkflowOperation(
                LLMInferenceServiceWorkflow.run,
                request,
                id=f"{workflow_id(world.NAMESPACE, world.NAME)}-{suffix}",
                task_queue=task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
            summary = await client.execute_update_with_start_workflow(
                LLMInferenceServiceWorkflow.reconcile_now,
                ReconcileSignal(reason="llmisvc-router reconcile"),
                start_workflow_operation=operation,
            )
            handle = await operation.workflow_handle()
            await asyncio.wait_for(handle.result(), harness.WAIT)
            described = await handle.describe()

    assert summary.outcome == "gone"
    assert described.close_time is not None
    assert described.close_time - described.start_time < timedelta(seconds=30), "it waited for its timer"


async def test_signals_query_and_update_carry_descriptions_for_the_temporal_ui(client):
    """The UI's forms read these from the workflow's metadata query."""
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        metadata = await svc.handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    definition = metadata.definition
    handlers = [*definition.signal_definitions, *definition.query_definitions, *definition.update_definitions]
    described = {d.name: d.description for d in handlers}
    for name in ("reconcile", "stop", "resume", "state", "reconcile_now"):
        assert len(described.get(name, "").split()) >= 8, f"{name}: {described.get(name)!r}"


async def test_the_wait_between_passes_has_a_timer_summary(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        history = await svc.handle.fetch_history()
    summaries = [
        client.data_converter.payload_converter.from_payload(e.user_metadata.summary, str)
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED
    ]
    assert summaries and summaries[-1] == "resync in 10m"
