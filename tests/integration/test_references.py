"""A service that brings its own HTTPRoute (``route.http.refs``) and Gateway (``gateway.refs``): the router
validates the references, creates no managed route and takes its readiness and URL from them."""

from __future__ import annotations

import pytest

from llmisvc_core import naming
from llmisvc_core.models.kube import GATEWAY, HTTPROUTE
from tests.integration import world
from tests.integration.harness import BOTH_RBAC_SHAPES, conditions_of, running_stack, until
from tests.integration.world import Wire

pytestmark = pytest.mark.asyncio(loop_scope="session")

NAME = "byo"
ROUTE = "team-route"
GATEWAY_NAME = "team-gateway"


def router(namespace: str) -> Wire:
    return {
        "route": {"http": {"refs": [{"name": ROUTE}]}},
        "gateway": {"refs": [{"name": GATEWAY_NAME, "namespace": namespace}]},
    }


@BOTH_RBAC_SHAPES
async def test_referenced_route_and_gateway_are_validated_then_drive_readiness(temporal, cluster):
    async with running_stack(temporal, cluster, controller={}) as stack:
        ns = stack.namespace
        await stack.create(GATEWAY, world.gateway(GATEWAY_NAME, ns))
        await stack.create_service(NAME, router=router(ns))
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert state.last is not None and state.last.outcome == "invalid-references"
        refs = (await stack.conditions(NAME))["HTTPRoutesReady"]
        assert (refs["status"], refs["reason"]) == ("False", "RefsInvalid")
        assert refs["message"] == f"HTTPRoute {ns}/{ROUTE} does not exist"

        await stack.create(HTTPROUTE, world.http_route(ROUTE, ns, GATEWAY_NAME, ns))
        svc = await stack.until_router_ready(NAME, drive=handle)

        assert await stack.get(HTTPROUTE, naming.route_name(NAME)) is None  # no managed route
        assert svc["status"]["url"] == f"http://{world.GATEWAY_ADDRESS}/"
        gateways = svc["status"]["router"]["gateways"]
        assert [(g["namespace"], g["name"]) for g in gateways] == [(ns, GATEWAY_NAME)]
        assert conditions_of(svc)["HTTPRoutesReady"]["status"] == "True"

        await stack.delete(GATEWAY, GATEWAY_NAME)

        async def gateway_missing() -> Wire | None:
            summary = await stack.reconcile_now(handle, "Gateway deleted")
            return (
                (await stack.conditions(NAME)).get("GatewaysReady")
                if summary.outcome != "reconciled"
                else None
            )

        gone = await until(gateway_missing, "the missing Gateway to be reported")
        assert (gone["status"], gone["reason"]) == ("False", "RefsInvalid")
        assert gone["message"] == f"Gateway {ns}/{GATEWAY_NAME} does not exist"
