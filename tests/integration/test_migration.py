"""The one-way InferencePool migration v1alpha2 -> v1 across passes, against a gateway controller that only
understands the v1 API group."""

from __future__ import annotations

import pytest

from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, POOL_V1_GROUP, POOL_V1ALPHA2_GROUP
from tests.history import activity_names
from tests.integration.harness import (
    annotations_of,
    backend_groups,
    route_parent_conditions,
    running_stack,
    until,
)
from tests.integration.world import Wire

pytestmark = pytest.mark.asyncio(loop_scope="session")

NAME = "opt"
MIGRATED = "serving.kserve.io/inference-pool-migrated"


async def test_route_moves_to_v1_pools_after_the_gateway_rejects_v1alpha2(temporal, cluster):
    async with running_stack(
        temporal, cluster, controller={"accepted_pool_groups": [POOL_V1_GROUP]}
    ) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        handle = await stack.start_workflow(NAME)
        await stack.passes(handle, 1)

        route = await stack.get(HTTPROUTE, naming.route_name(NAME))
        assert route is not None
        assert backend_groups(route) == {POOL_V1ALPHA2_GROUP}  # a brand-new route starts on v1alpha2
        assert MIGRATED not in annotations_of(route)
        assert "attempt_v1_migration" not in await activity_names(handle)

        async def refused() -> Wire | None:
            found = await stack.get(HTTPROUTE, naming.route_name(NAME))
            resolved = route_parent_conditions(found or {}).get("ResolvedRefs", {})
            return resolved if resolved.get("status") == "False" else None

        resolved = await until(refused, "the gateway controller to refuse the v1alpha2 backends")
        assert resolved["reason"] == "InvalidKind"

        summary = await stack.reconcile_now(handle, "the route's status changed")

        assert summary.outcome == "reconciled"
        route = await stack.get(HTTPROUTE, naming.route_name(NAME))
        assert route is not None
        assert backend_groups(route) == {POOL_V1_GROUP}
        assert annotations_of(route)[MIGRATED] == "v1"
        names = await activity_names(handle)
        assert names.count("attempt_v1_migration") == 1

        svc = await stack.until_router_ready(NAME, drive=handle)
        assert svc["status"]["url"].endswith(f"/{stack.namespace}/{NAME}")
        route = await stack.get(HTTPROUTE, naming.route_name(NAME))
        assert route is not None and backend_groups(route) == {POOL_V1_GROUP}  # and it stays there
        assert (await activity_names(handle)).count("attempt_v1_migration") == 1


@pytest.mark.parametrize(
    "groups",
    [[POOL_V1ALPHA2_GROUP], [POOL_V1_GROUP, POOL_V1ALPHA2_GROUP]],
    ids=["gateway-understands-v1alpha2-only", "gateway-understands-both"],
)
async def test_route_stays_on_v1alpha2_pools_while_the_gateway_accepts_them(temporal, cluster, groups):
    async with running_stack(temporal, cluster, controller={"accepted_pool_groups": groups}) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        handle = await stack.start_workflow(NAME)

        await stack.until_router_ready(NAME, drive=handle)

        route = await stack.get(HTTPROUTE, naming.route_name(NAME))
        assert route is not None
        assert backend_groups(route) == {POOL_V1ALPHA2_GROUP}
        assert MIGRATED not in annotations_of(route)
        assert "attempt_v1_migration" not in await activity_names(handle)
