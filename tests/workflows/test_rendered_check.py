"""KServe #5918 in the workflow, on the time-skipping test server: the API server's verdict on the merged
spec is asked inside ``fetch_gateways``, kept in the workflow's state while it is final, and asked again
only for a new merged spec or after a check that got no answer (``activities.rendered_check``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from llmisvc_core.merge.rendered_validation import Outcome
from llmisvc_core.models.kube import LLMISVC
from llmisvc_kube.api import ApiError
from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster
from workflows.models import ReconcileSignal
from workflows.service_workflow import RECHECK_FIRST, LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

MESSAGE = (
    'LLMInferenceService.serving.kserve.io "opt-validation-abcde" is invalid: spec.model.uri: Required value'
)
INVALID: dict[str, Any] = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "message": MESSAGE,
    "reason": "Invalid",
    "details": {
        "causes": [{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.model.uri"}]
    },
    "code": 422,
}


def asked(cluster: FakeCluster) -> int:
    """Dry-run creates the API answered, and those a fault answered."""
    return len(cluster.dry_runs) + sum(f.startswith("dry_run ") for f in cluster.failed)


def presets_combined(cluster: FakeCluster) -> dict[str, Any]:
    svc = cluster.read(LLMISVC, world.NAMESPACE, world.NAME)
    assert svc is not None
    (found,) = [c for c in svc["status"]["conditions"] if c["type"] == "PresetsCombined"]
    return dict(found)


async def test_5918_the_verdict_is_asked_once_and_kept_for_the_passes_after(client: Client) -> None:
    cluster = FakeCluster(world.minimal_world())
    async with harness.running_service(client, cluster) as svc:
        await svc.passes(1)
        for count in (2, 3):
            await svc.handle.signal(LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="again"))
            state = await svc.passes(count)

    assert asked(cluster) == 1
    (sent,) = cluster.dry_runs
    assert sent["metadata"] == {"generateName": f"{world.NAME}-validation-", "namespace": world.NAMESPACE}
    assert state.rendered is not None and state.rendered.outcome is Outcome.ACCEPTED


async def test_5918_a_rejection_is_invalid_rendered_config_and_is_not_asked_again_at_the_recheck(
    env: WorkflowEnvironment, client: Client
) -> None:
    cluster = FakeCluster(world.minimal_world())
    cluster.fail("dry_run", ApiError(422, MESSAGE, body=INVALID), kind="LLMInferenceService")
    async with harness.running_service(client, cluster, resync_seconds=3600) as svc:
        first = await svc.passes(1)
        await env.sleep(RECHECK_FIRST + timedelta(seconds=1))
        state = await svc.passes(2)

    assert first.last is not None and first.last.outcome == "failed"
    assert first.last.message == f"rendered config rejected: {MESSAGE}"
    presets = presets_combined(cluster)
    assert (presets["status"], presets["reason"]) == ("False", "InvalidRenderedConfig")
    assert presets["message"].endswith("]: spec.model.uri: Required value")
    assert asked(cluster) == 1, "the re-check reused the rejection"
    assert state.rendered is not None and state.rendered.outcome is Outcome.REJECTED
    assert cluster.writes == [f"replace_status LLMInferenceService {world.NAMESPACE}/{world.NAME}"], (
        "the status only: nothing routed for a refused spec"
    )


async def test_5918_a_check_without_an_answer_is_unknown_and_asked_again_at_the_recheck(
    env: WorkflowEnvironment, client: Client
) -> None:
    cluster = FakeCluster(world.minimal_world())
    cluster.fail(
        "dry_run", ApiError(0, "POST /apis/serving.kserve.io: connection refused"), kind="LLMInferenceService"
    )
    async with harness.running_service(client, cluster, resync_seconds=3600) as svc:
        first = await svc.passes(1)
        unknown = presets_combined(cluster)
        await env.sleep(RECHECK_FIRST + timedelta(seconds=1))
        state = await svc.passes(2)

    assert first.last is not None and first.last.outcome == "failed"
    assert first.rendered is None, "no answer is not a verdict to keep"
    assert (unknown["status"], unknown["reason"]) == ("Unknown", "ValidationUnavailable")
    assert unknown["message"].endswith("]: POST /apis/serving.kserve.io: connection refused")
    assert asked(cluster) == 2
    assert state.last is not None and state.last.outcome == "reconciled"
    assert presets_combined(cluster)["status"] == "True"
