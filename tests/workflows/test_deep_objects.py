"""An object the pass reads that is nested past the depth bound (an LLMInferenceServiceConfig's
open-schema field, say) stops the pass of the services that read it with one line naming the object and
the field, at once and without retries; the workflow keeps running and no task fails."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from activities.errors import ErrorType
from llmisvc_core.limits import MAX_DEPTH
from tests import history
from tests.workflows import harness, world
from tests.workflows.fake_cluster import FakeCluster

pytestmark = pytest.mark.asyncio(loop_scope="session")


def deep_config(levels: int) -> dict[str, object]:
    plugins: object = "leaf"
    for _ in range(levels):
        plugins = {"x": plugins}
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceServiceConfig",
        "metadata": {"name": "deep-config", "namespace": world.NAMESPACE},
        "spec": {"router": {"scheduler": {"config": {"inline": {"plugins": plugins}}}}},
    }


async def test_a_config_nested_past_the_bound_ends_the_pass_naming_it_without_retries(client: Client) -> None:
    service = world.service()
    service["spec"]["baseRefs"] = [{"name": "deep-config"}]
    cluster = FakeCluster([service, world.gateway_class(), world.ingress_gateway(), deep_config(300)])
    async with harness.running_service(client, cluster) as svc:
        state = await svc.passes(1)
        runs = await history.activity_runs(svc.handle)
        events = (await svc.handle.fetch_history()).events

    assert state.last is not None and state.last.outcome == "error"
    assert state.last_error == (
        f"{ErrorType.TOO_DEEP}: LLMInferenceServiceConfig {world.NAMESPACE}/deep-config: "
        f"field spec.router.scheduler.config.inline.plugins…: nested deeper than {MAX_DEPTH} levels"
    )
    assert [r.attempt for r in runs if r.name == "fetch_gateways"] == [1], "not retried"
    assert not [e for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED]
