"""Shadow mode and hand-offs in ``LLMInferenceServiceWorkflow`` on the time-skipping test server, with the
production worker over an in-memory cluster: a shadow pass is ``fetch_gateways`` alone and writes
nothing; a service outside the selection ends its workflow without a write."""

from __future__ import annotations

import asyncio

import pytest

from activities.management import Management
from llmisvc_core.models.kube import LLMISVC
from tests import history
from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster, annotations_of
from workflows.models import ReconcileSignal
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

SHADOW = Management.of("shadow")
SELECTED = Management.of("write", "router=llmisvc")


async def test_a_shadow_pass_writes_nothing_and_records_what_it_would_write(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster, management=SHADOW) as svc:
        state = await svc.passes(1)
        report = await svc.handle.query(LLMInferenceServiceWorkflow.drift)
        runs = await history.activity_runs(svc.handle)

    assert cluster.writes == [] and cluster.events == []
    assert harness.names(runs) == ["fetch_gateways"]
    assert report.mode == "shadow" and report.drift == len(report.objects) + 1  # objects and the status
    assert {obj.action for obj in report.objects} == {"create"}
    assert state.last is not None and state.last.drift == report.drift and state.last.writes == 0
    assert state.drift == report


async def test_a_stop_in_shadow_mode_is_not_written(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster, management=SHADOW) as svc:
        await svc.passes(1)
        await svc.handle.signal(LLMInferenceServiceWorkflow.stop)
        await svc.passes(2)

    assert cluster.writes == []
    assert "serving.kserve.io/stop" not in annotations_of(cluster, world.NAMESPACE, world.NAME)


async def test_the_drift_query_of_a_workflow_that_never_ran_in_shadow_mode_says_write_and_zero(client):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        state = await svc.passes(1)
        report = await svc.handle.query(LLMInferenceServiceWorkflow.drift)

    assert (report.mode, report.drift, report.objects) == ("write", 0, [])
    assert state.drift is None and state.last is not None and state.last.drift is None


async def test_a_service_that_leaves_the_selection_is_handed_off_without_a_write(client):
    labelled = world.service()
    labelled["metadata"]["labels"] = {"router": "llmisvc"}
    cluster = FakeCluster([labelled, *world.minimal_world()[1:]])
    async with harness.running_service(client, cluster, management=SELECTED) as svc:
        await svc.passes(1)
        assert cluster.writes, "the selected service is reconciled"
        cluster.writes.clear()
        current = cluster.read(LLMISVC, world.NAMESPACE, world.NAME)
        assert current is not None
        current["metadata"]["labels"] = {"router": "kserve"}
        cluster.put(current)
        await svc.handle.signal(
            LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="labels changed")
        )
        result = await asyncio.wait_for(svc.handle.result(), harness.WAIT)
        state = await svc.state()
        runs = await history.activity_runs(svc.handle)

    key = f"{world.NAMESPACE}/{world.NAME}"
    assert result.reason == f"{key} no longer matches the service selector 'router=llmisvc'"
    assert cluster.writes == [] and harness.names(runs)[-1] == "fetch_gateways"
    assert state.last is not None and state.last.outcome == "handed-off"
    assert state.handed_off == result.reason


async def test_a_service_outside_the_namespaces_ends_at_its_first_pass(client):
    cluster = FakeCluster(world.minimal_world())
    outside = Management.of("write", "", ["elsewhere"])
    async with harness.running_service(client, cluster, management=outside) as svc:
        result = await asyncio.wait_for(svc.handle.result(), harness.WAIT)

    assert result.reason == f"{world.NAMESPACE}/{world.NAME} is outside the managed namespaces (elsewhere)"
    assert cluster.writes == [] and cluster.events == []
