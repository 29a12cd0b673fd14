"""The ``ModelNameCollision`` Warning on the real control plane (KServe #5800: ``router.go``
``reconcileHTTPRoutes``, ``router_validation.go`` ``findModelNameCollisions``), with the watcher driving
the passes: a second service serving the first one's model name gets the Warning naming the first, and
the first gets it too, signalled by the watcher (KServe would wait for the first one's own next event);
two members of one routing group serving one model name get none. Each Warning is recorded once, not on
every pass."""

from __future__ import annotations

import asyncio

import pytest

from activities.events import EVENT
from llmisvc_core.httproute.collisions import MODEL_NAME_COLLISION
from llmisvc_core.models.kube import LLMISVC
from llmisvc_kube.api import Wire
from tests import builders as b
from tests.integration.harness import Stack, running_stack, until
from workflows.models import workflow_id

pytestmark = pytest.mark.asyncio(loop_scope="session")

ROUTE: Wire = {"route": {}, "gateway": {}}
GROUPED: Wire = {"route": {"group": "grouped", "weight": 1}, "gateway": {}}


async def collision_events(stack: Stack, name: str) -> list[Wire]:
    listed = await asyncio.to_thread(stack.kube.list_objects, EVENT, stack.namespace, {})
    return [
        e
        for e in listed
        if e.get("regarding", {}).get("name") == name and e.get("reason") == MODEL_NAME_COLLISION
    ]


async def create(stack: Stack, name: str, model_name: str, router: Wire) -> None:
    stack.workflow_ids.add(workflow_id(stack.namespace, name, stack.cluster_name))
    model = b.model(name=model_name)
    body = b.service(name, stack.namespace, uid=None, generation=None, model=model, router=router)
    await stack.create(LLMISVC, body)


async def test_5800_a_shared_model_name_warns_both_services_once_and_group_members_not_at_all(
    temporal, cluster
):
    async with running_stack(temporal, cluster, controller={}, watcher=True) as stack:
        await create(stack, "grouped-a", "org/grouped", GROUPED)
        await create(stack, "grouped-b", "org/grouped", GROUPED)
        await create(stack, "first", "org/shared", ROUTE)
        await stack.until_router_ready("first")
        assert await collision_events(stack, "first") == []  # alone with its name so far

        await create(stack, "second", "org/shared", ROUTE)

        async def warned(name: str) -> list[Wire] | None:
            return await collision_events(stack, name) or None

        (on_second,) = await until(lambda: warned("second"), "the Warning on the second service")
        assert on_second["type"] == "Warning"
        assert on_second["note"].startswith('model name "org/shared" is also served by first in namespace')
        # The watcher tells the first service that another one now claims its name.
        (on_first,) = await until(lambda: warned("first"), "the Warning on the first service")
        assert "is also served by second in namespace" in on_first["note"]

        await stack.until_router_ready("second")
        for name in ("grouped-a", "grouped-b"):
            await stack.until_router_ready(name)
        for name in ("first", "second"):
            await stack.reconcile_now(stack.handle(name), "another pass over the same collision")

        assert await collision_events(stack, "grouped-a") == []
        assert await collision_events(stack, "grouped-b") == []
        for name in ("first", "second"):
            (event,) = await collision_events(stack, name)
            assert "series" not in event, f"the Warning on {name} was recorded again: {event}"
