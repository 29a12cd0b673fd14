"""The ``ModelNameCollision`` Warning through the workflow (KServe #5800, ``router.go``
``reconcileHTTPRoutes``): told once while the collision lasts, told again when it comes back or its peers
change; an idle pass over an unchanged collision stays one activity.

KServe emits the Event on every reconcile and lets client-go's recorder fold the repeats into one series;
here the workflow remembers what the last pass planned (``WorkflowState.announced``) and records only
what is new, as the routing group's ``MemberDivergence`` Warning is recorded only when it changes.
"""

from __future__ import annotations

import pytest
from temporalio.client import Client

from llmisvc_core.httproute.collisions import MODEL_NAME_COLLISION
from llmisvc_core.models.kube import LLMISVC
from tests import history
from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster
from workflows.models import ReconcileSignal
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


def _collision_notes(cluster: FakeCluster) -> list[str]:
    found = cluster.events_about(world.NAMESPACE, world.NAME)
    return [e["note"] for e in found if e["reason"] == MODEL_NAME_COLLISION]


async def _pass(svc: harness.Service, count: int, reason: str) -> None:
    await svc.handle.signal(LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason=reason))
    await svc.passes(count)


async def test_5800_the_warning_is_recorded_once_per_collision_and_again_when_it_changes(
    client: Client,
) -> None:
    cluster = FakeCluster([*world.minimal_world(), world.service("twin")])  # same model name
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        first = _collision_notes(cluster)

        await _pass(svc, 2, "resync")
        idle = await history.activity_runs(svc.handle)
        again = _collision_notes(cluster)
        bumped = [
            e
            for e in cluster.events_about(world.NAMESPACE, world.NAME)
            if "series" in e and e["reason"] == MODEL_NAME_COLLISION
        ]
        announced = (await svc.state()).announced

        cluster.put(world.service("triplet"))
        await _pass(svc, 3, "LLMInferenceService llm/triplet created")
        grown = _collision_notes(cluster)

        cluster.remove(LLMISVC, world.NAMESPACE, "twin")
        cluster.remove(LLMISVC, world.NAMESPACE, "triplet")
        await _pass(svc, 4, "peers deleted")
        cleared = (await svc.state()).announced
        cluster.put(world.service("twin"))
        await _pass(svc, 5, "LLMInferenceService llm/twin created")
        back = cluster.events_about(world.NAMESPACE, world.NAME)

    assert len(first) == 1 and "is also served by twin in namespace llm" in first[0]
    assert again == first and bumped == [], "an unchanged collision is not recorded again"
    assert [a.reason for a in announced] == [MODEL_NAME_COLLISION]
    assert harness.names(idle)[-1] == "fetch_gateways", "the idle pass ran one activity"
    assert len(grown) == 2 and "is also served by triplet, twin in namespace llm" in grown[1]
    assert cleared == []
    # The collision is back: the same note within the recorder's window bumps the first Event's series.
    twin = [e for e in back if e["reason"] == MODEL_NAME_COLLISION and "by twin in" in e["note"]]
    assert len(twin) == 1 and twin[0]["series"]["count"] == 2
