"""Steps 6-8 of the router pass followed by the RouterReady rollup, through the readiness judges:
the condition parts of edge cases 43-45, 50, 79-81 and R-STOP-2."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from llmisvc_core.models.gateway_api import Gateway, HTTPRoute
from llmisvc_core.models.inference_pool import InferencePool
from llmisvc_core.models.llmisvc import LLMInferenceService, ServiceCondition
from llmisvc_core.readiness import gateways_and_routes, pools
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions
from tests import builders as b

NOW = "2026-01-01T00:00:00Z"
SUBS = ("GatewaysReady", "HTTPRoutesReady", "InferencePoolReady")
GW_REF = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "name": "ready-gateway",
    "namespace": "test-ns",
}
ROUTE_READY = [{"type": "Accepted", "status": "True"}, {"type": "ResolvedRefs", "status": "True"}]


@dataclass
class World:
    """What the caller read for one pass: resolved Gateways, the route set and the pools."""

    gateways: list[Gateway] = field(default_factory=list)
    routes: list[HTTPRoute] = field(default_factory=list)
    keys: list[tuple[str, str]] = field(default_factory=list)
    v1_pool: InferencePool | None = None


def service(spec: dict[str, Any], *, stopped: bool = False) -> LLMInferenceService:
    wire = b.service("svc", "test-ns", uid=None, generation=None, **spec)
    svc = LLMInferenceService.from_wire(b.stopped(wire, "TRUE") if stopped else wire)
    # A previous pass left every router condition behind, so "absent" below means "unset by this pass".
    svc.status.conditions = [
        ServiceCondition(type="PresetsCombined", status="True"),
        ServiceCondition(type="WorkloadsReady", status="True"),
    ] + [ServiceCondition(type=t, status="False", severity="Info", reason="Old", message="old") for t in SUBS]
    return svc


def run_pass(svc: LLMInferenceService, world: World) -> Conditions:
    conds = Conditions(svc.status, NOW)
    pools.evaluate_pools(conds, svc, world.keys, v1_pool=world.v1_pool)
    gateways_and_routes.evaluate_gateways(conds, svc, world.gateways)
    gateways_and_routes.evaluate_http_routes(conds, svc, world.routes)
    conditions.determine_router_readiness(conds)
    return conds


def row(conds: Conditions, type_: str) -> tuple[str, str, str] | None:
    found = conds.get(type_)
    return None if found is None else (found.status, found.reason or "", found.message or "")


def gateway(name: str, programmed: str | None) -> Gateway:
    conditions = [{"type": "Programmed", "status": programmed}] if programmed else []
    return Gateway.from_wire(b.gateway(name, "test-ns", conditions=conditions))


def route(name: str, *parents: list[dict[str, Any]]) -> HTTPRoute:
    status_parents = [{"parentRef": GW_REF, "conditions": conds} for conds in parents]
    wire = b.http_route(
        name, "test-ns", parent_refs=[GW_REF], status_parents=status_parents, generation=None, rv=None
    )
    return HTTPRoute.from_wire(wire)


GATEWAY_REFS_SPEC = {"router": {"gateway": {"refs": [{"name": "ready-gateway"}]}, "route": {"http": {}}}}


@pytest.mark.parametrize(
    ("gateways", "gateways_ready", "router_ready"),
    [
        ([gateway("ready-gateway", "True")], ("True", "", ""), ("True", "", "")),
        (
            [gateway("not-ready-gateway", "False")],
            (
                "False",
                "GatewaysNotReady",
                "The following Gateways are not ready: [test-ns/not-ready-gateway]",
            ),
            (
                "False",
                "GatewaysNotReady",
                "The following Gateways are not ready: [test-ns/not-ready-gateway]",
            ),
        ),
        (
            [gateway("ready-gateway", "True"), gateway("other", "Unknown")],
            ("False", "GatewaysNotReady", "The following Gateways are not ready: [test-ns/other]"),
            ("False", "GatewaysNotReady", "The following Gateways are not ready: [test-ns/other]"),
        ),
        (
            [gateway("bare", None)],
            ("False", "GatewaysNotReady", "The following Gateways are not ready: [test-ns/bare]"),
            ("False", "GatewaysNotReady", "The following Gateways are not ready: [test-ns/bare]"),
        ),
    ],
    ids=["programmed", "not-programmed", "one-of-two", "no-programmed-condition"],
)
def test_edge_43_gateway_readiness_rolls_up_into_router_ready(gateways, gateways_ready, router_ready):
    conds = run_pass(service(GATEWAY_REFS_SPEC), World(gateways=gateways))
    assert row(conds, "GatewaysReady") == gateways_ready
    assert row(conds, "RouterReady") == router_ready


def test_edge_43_no_gateway_refs_leaves_gateways_ready_absent():
    conds = run_pass(service({"router": {"route": {"http": {}}}}), World(gateways=[gateway("g", "False")]))
    assert row(conds, "GatewaysReady") is None
    assert row(conds, "RouterReady") == ("True", "", "")


def test_edge_44_kuadrant_and_gateway_entries_for_one_parent_are_ready():
    kuadrant = [{"type": "kuadrant.io/AuthPolicyAffected", "status": "True"}]
    spec = {
        "router": {"route": {"http": {"refs": [{"name": "facebook-opt-125m-single-simulated-kserve-route"}]}}}
    }
    world = World(routes=[route("facebook-opt-125m-single-simulated-kserve-route", kuadrant, ROUTE_READY)])
    conds = run_pass(service(spec), world)
    assert row(conds, "HTTPRoutesReady") == ("True", "", "")
    assert row(conds, "RouterReady") == ("True", "", "")


def test_edge_45_rejected_route_rolls_up_into_router_ready():
    rejected = [
        {"type": "Accepted", "status": "False", "reason": "NotAccepted", "message": "Route was not accepted"}
    ]
    spec = {"router": {"route": {"http": {"refs": [{"name": "not-ready-route"}]}}}}
    conds = run_pass(service(spec), World(routes=[route("not-ready-route", rejected)]))
    expected = (
        "False",
        "HTTPRoutesNotReady",
        'The following HTTPRoutes are not ready: [test-ns/not-ready-route: "False" '
        '(reason "NotAccepted", message "Route was not accepted")]',
    )
    assert row(conds, "HTTPRoutesReady") == expected
    assert row(conds, "RouterReady") == expected


@pytest.mark.parametrize("spec", [{}, {"router": {}}], ids=["no-spec-router-edge-79", "empty-router-edge-50"])
def test_edge_50_and_79_without_routing_router_conditions_are_absent_and_router_ready(spec):
    conds = run_pass(service(spec), World())
    assert [row(conds, t) for t in SUBS] == [None, None, None]
    assert row(conds, "RouterReady") == ("True", "", "")
    assert row(conds, "Ready") == ("True", "", "")


def test_edge_81_scheduler_without_route_keeps_router_not_ready():
    pool = InferencePool.from_wire(
        {
            "metadata": {"name": "svc-inference-pool", "namespace": "test-ns"},
            "status": {
                "parents": [{"parentRef": {"name": "gw", "namespace": "test-ns"}, "conditions": ROUTE_READY}]
            },
        }
    )
    spec = {"router": {"scheduler": {"template": {"containers": [{"name": "main"}]}}}}
    conds = run_pass(service(spec), World(v1_pool=pool))
    expected = (
        "False",
        "WaitingForGateway",
        "Inference Pool test-ns/svc-inference-pool exists but no Gateway controller has accepted it yet",
    )
    assert row(conds, "InferencePoolReady") == expected
    assert row(conds, "RouterReady") == expected


def test_r_stop_2_stopped_service_is_stopped_everywhere_and_gateways_decide_the_rollup():
    spec = {
        "router": {
            "gateway": {"refs": [{"name": "ready-gateway"}]},
            "route": {"http": {"refs": [{"name": "r"}]}},
            "scheduler": {},
        }
    }
    conds = run_pass(service(spec, stopped=True), World(gateways=[gateway("ready-gateway", "True")]))
    stopped = ("False", "Stopped", "Service is stopped")
    assert [row(conds, t) for t in SUBS] == [stopped, stopped, stopped]
    assert row(conds, "RouterReady") == stopped
    assert row(conds, "Ready") == stopped
