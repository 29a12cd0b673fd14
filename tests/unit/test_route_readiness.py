"""GatewaysReady (spec 3.8.2) and HTTPRoutesReady (3.8.3): catalogue rows 4.1 and 4.2, edge cases 43-49."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.models.gateway_api import Gateway, HTTPRoute
from llmisvc_core.models.kube import Condition
from llmisvc_core.models.llmisvc import LLMInferenceService, LLMInferenceServiceStatus, ServiceCondition
from llmisvc_core.readiness import gateways_and_routes
from llmisvc_core.world.conditions import Conditions
from tests import builders as b

NOW = "2026-01-01T00:00:00Z"
GW = {"group": "gateway.networking.k8s.io", "kind": "Gateway"}
KUADRANT = [{"type": "kuadrant.io/AuthPolicyAffected", "status": "True", "reason": "Accepted"}]


def service(router: dict[str, Any] | None, *, stopped: bool = False) -> LLMInferenceService:
    svc = b.service("svc", "test-ns", uid=None, generation=None, router=router)
    return LLMInferenceService.from_wire(b.stopped(svc, "True") if stopped else svc)


WITH_GATEWAY_REFS = {"gateway": {"refs": [{"name": "gw", "namespace": "test-ns"}]}, "route": {"http": {}}}
WITH_ROUTE_REFS = {"route": {"http": {"refs": [{"name": "r"}]}}}


def with_old(type_: str) -> Conditions:
    """Conditions holding a stale value of ``type_`` so that unset and overwrite are both visible."""
    old = ServiceCondition(type=type_, status="False", severity="Info", reason="Old", message="old")
    return Conditions(LLMInferenceServiceStatus(conditions=[old]), NOW)


def row(conds: Conditions, type_: str) -> tuple[str, str, str] | None:
    found = conds.get(type_)
    return None if found is None else (found.status, found.reason or "", found.message or "")


def gateway(name: str, *conds: tuple[str, str], namespace: str = "test-ns") -> Gateway:
    conditions = [{"type": t, "status": s} for t, s in conds]
    return Gateway.from_wire(b.gateway(name, namespace, conditions=conditions))


def parent(name: str, conditions: list[dict[str, Any]], **ref: Any) -> dict[str, Any]:
    return {"parentRef": {**GW, "name": name, "namespace": "test-ns", **ref}, "conditions": conditions}


def accepted(
    status: str = "True", reason: str = "Accepted", message: str = "", gen: int = 0
) -> dict[str, Any]:
    return {
        "type": "Accepted",
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": gen,
    }


def resolved(status: str = "True", reason: str = "ResolvedRefs", gen: int = 0) -> dict[str, Any]:
    return {
        "type": "ResolvedRefs",
        "status": status,
        "reason": reason,
        "message": "",
        "observedGeneration": gen,
    }


READY = [accepted(), resolved()]


def route(
    name: str = "r",
    refs: list[dict[str, Any]] | None = None,
    parents: list[dict[str, Any]] | None = None,
    generation: int | None = None,
) -> HTTPRoute:
    refs = [{**GW, "name": "gw", "namespace": "test-ns"}] if refs is None else refs
    data = b.http_route(
        name, "test-ns", parent_refs=refs, status_parents=parents, generation=generation, rv=None
    )
    return HTTPRoute.from_wire(data)


# --- R-GW-3 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conds", "ready"),
    [
        ([("Programmed", "True")], True),
        ([("Programmed", "False")], False),
        ([("Programmed", "Unknown")], False),
        ([], False),
        ([("Accepted", "True")], False),
        ([("Accepted", "True"), ("Programmed", "True")], True),
        ([("Programmed", "False"), ("Programmed", "True")], False),
    ],
    ids=[
        "programmed",
        "not-programmed",
        "unknown",
        "no-conditions",
        "only-accepted",
        "after-accepted",
        "first-wins",
    ],
)
def test_r_gw_3_gateway_ready_iff_first_programmed_is_true(conds, ready):
    assert gateways_and_routes.is_gateway_ready(gateway("gw", *conds)) is ready


def test_r_gw_3_gateway_without_status_is_not_ready():
    assert not gateways_and_routes.is_gateway_ready(Gateway.from_wire({"metadata": {"name": "gw"}}))


# --- R-GW-1, R-GW-2, R-GW-4 ------------------------------------------------------------------------


def test_r_gw_1_stopped_service_marks_gateways_stopped():
    conds = with_old("GatewaysReady")
    gateways_and_routes.evaluate_gateways(conds, service(WITH_GATEWAY_REFS, stopped=True), [gateway("gw")])
    assert row(conds, "GatewaysReady") == ("False", "Stopped", "Service is stopped")


@pytest.mark.parametrize(
    "router",
    [None, {"route": {"http": {}}}, {"gateway": {}}, {"gateway": {"refs": []}}],
    ids=["no-router", "no-gateway", "gateway-without-refs", "empty-refs"],
)
def test_r_gw_2_no_gateway_refs_unsets_gateways_ready(router):
    conds = with_old("GatewaysReady")
    gateways_and_routes.evaluate_gateways(conds, service(router), [gateway("gw", ("Programmed", "False"))])
    assert row(conds, "GatewaysReady") is None


@pytest.mark.parametrize(
    "gateways",
    [[gateway("gw", ("Programmed", "True"))], []],
    ids=["all-programmed", "no-resolved-gateways-q24"],
)
def test_r_gw_4_gateways_ready_true(gateways):
    conds = with_old("GatewaysReady")
    gateways_and_routes.evaluate_gateways(conds, service(WITH_GATEWAY_REFS), gateways)
    assert row(conds, "GatewaysReady") == ("True", "", "")


def test_r_gw_4_not_ready_gateways_listed_in_resolved_order():
    gateways = [
        gateway("b", ("Programmed", "False"), namespace="ns"),
        gateway("ready", ("Programmed", "True"), namespace="ns"),
        gateway("a", namespace="ns"),
    ]
    conds = with_old("GatewaysReady")
    gateways_and_routes.evaluate_gateways(conds, service(WITH_GATEWAY_REFS), gateways)
    assert row(conds, "GatewaysReady") == (
        "False",
        "GatewaysNotReady",
        "The following Gateways are not ready: [ns/b ns/a]",
    )


# --- R-HR-4 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("refs", "parents", "ready"),
    [
        ([], [parent("gw", READY)], False),
        (None, [parent("gw", READY)], True),
        (None, [parent("gw", KUADRANT), parent("gw", READY)], True),
        (None, [parent("gw", KUADRANT)], False),
        (None, [], False),
        (None, [parent("gw", [accepted("False", "NotAccepted")])], False),
        (None, [parent("gw", [accepted()])], False),
        (None, [parent("gw", [accepted(), resolved("False", "InvalidKind")])], False),
        (None, [parent("gw", READY), parent("old-gw", [accepted("False", "NoMatchingParent")])], False),
        (None, [parent("gw", [resolved()])], False),
    ],
    ids=[
        "no-parent-refs",
        "accepted-and-resolved",
        "kuadrant-plus-gateway-entry-edge-44",
        "kuadrant-entry-only",
        "empty-status-parents",
        "not-accepted",
        "no-resolved-refs",
        "resolved-refs-false",
        "stale-parent-not-in-spec-blocks-q26",
        "resolved-without-accepted",
    ],
)
def test_r_hr_4_route_readiness(refs, parents, ready):
    assert gateways_and_routes.is_http_route_ready(route(refs=refs, parents=parents)) is ready


def test_r_hr_4_route_without_status_is_not_ready():
    assert not gateways_and_routes.is_http_route_ready(route())


@pytest.mark.parametrize(
    ("parents", "ready"),
    [
        ([parent("gw-a", READY), parent("gw-b", READY)], True),
        ([parent("gw-a", READY)], False),
        ([parent("gw-a", READY), parent("gw-b", KUADRANT)], False),
    ],
    ids=["both-answered", "only-gw-a", "gw-b-only-kuadrant"],
)
def test_r_hr_4_every_spec_parent_needs_a_gateway_entry_edge_49(parents, ready):
    refs = [{**GW, "name": "gw-a", "namespace": "test-ns"}, {**GW, "name": "gw-b", "namespace": "test-ns"}]
    assert gateways_and_routes.is_http_route_ready(route(refs=refs, parents=parents)) is ready


@pytest.mark.parametrize(
    ("spec_ref", "status_ref", "ready"),
    [
        ({"name": "gw"}, {**GW, "name": "gw", "namespace": "test-ns"}, True),
        ({"name": "gw", "sectionName": "http"}, {"name": "gw", "sectionName": "https"}, False),
        ({"name": "gw", "sectionName": ""}, {"name": "gw"}, True),
        ({"name": "gw", "port": 80}, {"name": "gw"}, False),
        ({"name": "gw", "namespace": "other"}, {"name": "gw"}, False),
        ({"name": "gw", "kind": "Service"}, {"name": "gw"}, False),
        ({"name": "gw", "group": ""}, {"name": "gw"}, False),
        ({"name": "gw"}, {"name": "gw2"}, False),
    ],
    ids=[
        "defaults-applied",
        "section-differs",
        "empty-section-is-default",
        "port-differs",
        "namespace-differs",
        "kind-differs",
        "explicit-empty-group-differs",
        "name-differs",
    ],
)
def test_r_hr_4_parent_ref_matching_applies_gateway_api_defaults(spec_ref, status_ref, ready):
    status = [{"parentRef": status_ref, "conditions": READY}]
    assert gateways_and_routes.is_http_route_ready(route(refs=[spec_ref], parents=status)) is ready


@pytest.mark.parametrize(
    ("accepted_gen", "resolved_gen", "ready"),
    [(0, 0, True), (3, 3, True), (2, 3, False), (3, 2, False), (4, 4, True)],
    ids=["unset-is-current", "current", "accepted-stale", "resolved-stale", "newer-than-route"],
)
def test_r_hr_4_stale_conditions_are_not_ready(accepted_gen, resolved_gen, ready):
    parents = [parent("gw", [accepted(gen=accepted_gen), resolved(gen=resolved_gen)])]
    assert gateways_and_routes.is_http_route_ready(route(parents=parents, generation=3)) is ready


# --- R-HR-5 ----------------------------------------------------------------------------------------


def diag(parents: list[dict[str, Any]], generation: int | None = None) -> tuple[str, str, str, str] | None:
    found = gateways_and_routes.find_non_ready_condition(route(parents=parents, generation=generation))
    return None if found is None else (found.type, found.status, found.reason or "", found.message or "")


@pytest.mark.parametrize(
    ("parents", "expected"),
    [
        (
            [
                parent("gw", KUADRANT),
                parent("gw", [accepted("False", "NotAccepted", "Route was not accepted")]),
            ],
            ("Accepted", "False", "NotAccepted", "Route was not accepted"),
        ),
        (
            [parent("gw", [accepted()])],
            (
                "ResolvedRefs",
                "Unknown",
                "ConditionMissing",
                "ResolvedRefs condition not yet reported by gateway controller",
            ),
        ),
        (
            [parent("gw", [accepted(), resolved("False", "BackendNotFound")])],
            ("ResolvedRefs", "False", "BackendNotFound", ""),
        ),
        (
            [parent("gw", READY), parent("gw2", [accepted("Unknown", "Pending")])],
            ("Accepted", "Unknown", "Pending", ""),
        ),
        ([parent("gw", READY)], None),
        ([parent("gw", KUADRANT)], None),
        ([], None),
    ],
    ids=[
        "skips-policy-entry",
        "synthesized-missing-resolved-refs",
        "resolved-refs-false",
        "later-entry",
        "all-ready",
        "only-policy-entries",
        "no-entries",
    ],
)
def test_r_hr_5_first_non_ready_gateway_condition(parents, expected):
    assert diag(parents) == expected


def test_r_hr_5_stale_accepted_true_is_the_diagnostic():
    assert diag([parent("gw", [accepted(gen=1), resolved()])], generation=2) == (
        "Accepted",
        "True",
        "Accepted",
        "",
    )


def test_r_hr_5_synthesized_condition_is_a_fresh_copy():
    first = gateways_and_routes.find_non_ready_condition(route(parents=[parent("gw", [accepted()])]))
    assert first is not None
    first.message = "changed"
    assert gateways_and_routes.MISSING_RESOLVED_REFS.message == (
        "ResolvedRefs condition not yet reported by gateway controller"
    )


# --- R-HR-1, R-HR-2, R-HR-3, R-HR-6 ----------------------------------------------------------------


def test_r_hr_1_stopped_service_marks_routes_stopped():
    conds = with_old("HTTPRoutesReady")
    gateways_and_routes.evaluate_http_routes(
        conds, service(WITH_ROUTE_REFS, stopped=True), [route(parents=[])]
    )
    assert row(conds, "HTTPRoutesReady") == ("False", "Stopped", "Service is stopped")


@pytest.mark.parametrize("router", [None, {}, {"route": {}}], ids=["no-router", "no-route", "no-http"])
def test_r_hr_2_no_route_settings_unsets_routes_ready(router):
    conds = with_old("HTTPRoutesReady")
    gateways_and_routes.evaluate_http_routes(conds, service(router), [route(parents=[])])
    assert row(conds, "HTTPRoutesReady") is None


@pytest.mark.parametrize(
    "routes",
    [
        [],
        [
            route("a", parents=[parent("gw", READY)]),
            route("b", parents=[parent("gw", KUADRANT), parent("gw", READY)]),
        ],
    ],
    ids=["empty-route-set", "all-ready"],
)
def test_r_hr_3_and_r_hr_6_routes_ready_true(routes):
    conds = with_old("HTTPRoutesReady")
    gateways_and_routes.evaluate_http_routes(conds, service({"route": {"http": {}}}), routes)
    assert row(conds, "HTTPRoutesReady") == ("True", "", "")


def test_r_hr_3_fetch_error_marks_routes_and_returns_the_pass_error():
    conds = with_old("HTTPRoutesReady")
    error = gateways_and_routes.mark_http_route_fetch_error(
        conds, "failed to get HTTPRoute svc/r: etcdserver: timeout"
    )
    assert row(conds, "HTTPRoutesReady") == (
        "False",
        "HTTPRouteFetchError",
        "Failed to fetch referenced HTTPRoutes: failed to get HTTPRoute svc/r: etcdserver: timeout",
    )
    assert (
        error == "failed to fetch referenced HTTPRoutes: failed to get HTTPRoute svc/r: etcdserver: timeout"
    )


def routes_ready_message(*routes: HTTPRoute) -> str:
    conds = with_old("HTTPRoutesReady")
    gateways_and_routes.evaluate_http_routes(conds, service(WITH_ROUTE_REFS), list(routes))
    found = row(conds, "HTTPRoutesReady")
    assert found is not None and found[:2] == ("False", "HTTPRoutesNotReady")
    return found[2]


def test_r_hr_6_rejected_route_message_edge_45():
    rejected = route(
        "not-ready-route",
        parents=[parent("gw", [accepted("False", "NotAccepted", "Route was not accepted")])],
    )
    assert routes_ready_message(rejected) == (
        'The following HTTPRoutes are not ready: [test-ns/not-ready-route: "False" '
        '(reason "NotAccepted", message "Route was not accepted")]'
    )


def test_r_hr_6_no_matching_parent_reason_is_reported_edge_47():
    rejected = route(parents=[parent("gw", [accepted("False", "NoMatchingParent", "no listener matched")])])
    assert routes_ready_message(rejected) == (
        'The following HTTPRoutes are not ready: [test-ns/r: "False" '
        '(reason "NoMatchingParent", message "no listener matched")]'
    )


def test_r_hr_6_missing_resolved_refs_message_edge_48():
    waiting = route("accepted-no-resolved-route", parents=[parent("gw", [accepted()])])
    assert routes_ready_message(waiting) == (
        'The following HTTPRoutes are not ready: [test-ns/accepted-no-resolved-route: "Unknown" '
        '(reason "ConditionMissing", '
        'message "ResolvedRefs condition not yet reported by gateway controller")]'
    )


def test_r_hr_6_policy_only_status_is_dumped_as_sorted_compact_json_edge_46_p11():
    kuadrant_only = route("k", parents=[parent("gw", KUADRANT)])
    assert routes_ready_message(kuadrant_only) == (
        "The following HTTPRoutes are not ready: [test-ns/k: "
        '{"parents":[{"conditions":[{"reason":"Accepted","status":"True","type":"kuadrant.io/AuthPolicyAffected"}],'
        '"parentRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw","namespace":"test-ns"}}]}]'
    )


def test_r_hr_6_route_without_parent_refs_or_status_dumps_an_empty_status():
    assert (
        routes_ready_message(route("bare", refs=[]))
        == "The following HTTPRoutes are not ready: [test-ns/bare: {}]"
    )


def test_r_hr_6_items_follow_route_set_order_and_skip_ready_routes():
    message = routes_ready_message(
        route("z", parents=[parent("gw", [accepted("False", "NotAccepted", "no")])]),
        route("ok", parents=[parent("gw", READY)]),
        route("a", parents=[parent("gw", [accepted(), resolved("False", "RefNotPermitted")])]),
    )
    assert message == (
        'The following HTTPRoutes are not ready: [test-ns/z: "False" (reason "NotAccepted", message "no") '
        'test-ns/a: "False" (reason "RefNotPermitted", message "")]'
    )


def test_r_hr_6_condition_text_is_go_quoted():
    odd = route(parents=[parent("gw", [accepted("False", 'Bad"Reason', 'line1\nline2 "q" \\ é')])])
    assert routes_ready_message(odd) == (
        'The following HTTPRoutes are not ready: [test-ns/r: "False" '
        '(reason "Bad\\"Reason", message "line1\\nline2 \\"q\\" \\\\ é")]'
    )


def test_evaluators_do_not_mutate_the_routes():
    given = route(parents=[parent("gw", [accepted()])])
    before = given.model_dump()
    routes_ready_message(given)
    assert given.model_dump() == before
    assert isinstance(gateways_and_routes.find_non_ready_condition(given), Condition)
