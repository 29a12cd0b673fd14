"""A spec the router cannot read, in ``LLMInferenceServiceWorkflow`` on the time-skipping test server with
the production worker over an in-memory cluster: ``fetch_gateways`` only reads; the status that says why
is written by the one status writer (``evaluate_conditions``, a PUT of the status subresource), stamped
with the workflow's time, with one Warning Event; the pass ends with an error and is re-checked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from activities.management import Management
from llmisvc_core.models.kube import LLMISVC
from tests import history
from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster
from workflows.models import ReconcileSignal
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

PROBLEM = "field spec.model.lora.adapters: Input should be a valid list"
LATER = timedelta(hours=5)
#: The status fields a pass that routes writes: one that cannot read the spec keeps them as they are.
ROUTING = ("url", "address", "addresses", "router")


def unreadable(cluster: FakeCluster) -> None:
    """``model.lora.adapters`` is an open-schema field: the CRD accepts any value, the router wants a list."""
    svc = cluster.read(LLMISVC, world.NAMESPACE, world.NAME) or {}
    svc["spec"]["model"]["lora"] = {"adapters": "all of them"}
    cluster.put(svc)


def conditions(cluster: FakeCluster) -> dict[str, dict[str, str]]:
    svc = cluster.read(LLMISVC, world.NAMESPACE, world.NAME) or {}
    return {c["type"]: c for c in svc["status"]["conditions"]}


async def pass_after(svc: harness.Service, count: int, reason: str) -> None:
    await svc.handle.signal(LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason=reason))
    await svc.passes(count)


async def test_an_unreadable_spec_gets_its_status_from_the_status_writer_stamped_with_workflow_time(
    env, client
):
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster, resync_seconds=86_400) as svc:
        await svc.passes(1)
        await env.sleep(LATER)  # the workflow's clock moves ahead of the wall clock
        written_before, told_before, wall = len(cluster.writes), len(cluster.events), datetime.now(UTC)
        routed = (cluster.read(LLMISVC, world.NAMESPACE, world.NAME) or {})["status"]
        unreadable(cluster)
        await pass_after(svc, 2, "spec changed")
        state = await svc.state()
        runs = await history.activity_runs(svc.handle)

    assert cluster.writes[written_before:] == [
        f"replace_status LLMInferenceService {world.NAMESPACE}/{world.NAME}"
    ]
    found = conditions(cluster)
    for type_ in ("Ready", "RouterReady"):
        assert (found[type_]["status"], found[type_]["reason"], found[type_]["message"]) == (
            "False",
            "InvalidSpec",
            PROBLEM,
        )
    kept = (cluster.read(LLMISVC, world.NAMESPACE, world.NAME) or {})["status"]
    assert routed.get("url") and {k: kept.get(k) for k in ROUTING} == {k: routed.get(k) for k in ROUTING}
    stamped = datetime.strptime(found["RouterReady"]["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ")
    assert stamped.replace(tzinfo=UTC) >= wall + LATER - timedelta(minutes=1), "stamped with the wall clock"
    told = cluster.events[told_before:]
    assert [(e["type"], e["reason"], e["note"]) for e in told] == [("Warning", "InvalidSpec", PROBLEM)]
    assert harness.names(runs)[-2:] == ["fetch_gateways", "evaluate_conditions"]
    assert state.last is not None and state.last.outcome == "error" and state.last.status_written
    assert state.last.message == (
        f"InvalidLLMInferenceService: LLMInferenceService {world.NAMESPACE}/{world.NAME}: {PROBLEM}"
    )
    assert state.last_error == state.last.message and state.recheck_attempt == 1


async def test_a_pass_on_the_same_unreadable_spec_writes_nothing_and_tells_nothing_again(client):
    cluster = FakeCluster(world.minimal_world())
    unreadable(cluster)
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        written, told = list(cluster.writes), len(cluster.events)
        await pass_after(svc, 2, "resync")
        state = await svc.state()
        runs = await history.activity_runs(svc.handle)

    assert written == [f"replace_status LLMInferenceService {world.NAMESPACE}/{world.NAME}"] and told == 1
    assert (cluster.writes, len(cluster.events)) == (written, told)
    assert harness.names(runs) == ["fetch_gateways", "evaluate_conditions", "fetch_gateways"]
    assert state.last is not None and state.last.outcome == "error" and not state.last.status_written


async def test_an_unreadable_spec_in_shadow_mode_is_told_to_nobody(client):
    cluster = FakeCluster(world.minimal_world())
    unreadable(cluster)
    async with harness.running_service(client, cluster, management=Management.of("shadow")) as svc:
        state = await svc.passes(1)
        runs = await history.activity_runs(svc.handle)

    assert cluster.writes == [] and cluster.events == []
    assert harness.names(runs) == ["fetch_gateways"]
    assert state.last is not None and state.last.outcome == "error"
