"""Routing groups (traffic splitting), the tables of KServe's tests at ``aaac4e294`` as data.

Upstream: ``pkg/controller/v1alpha2/llmisvc/router_group_test.go`` (``TestFilterEligibleMembers``,
``TestIsGroupRoute``, ``TestUpdateGroupStatus``, ``TestRewriteRulesForGroup``, ``TestIsExpectedBackendRef``,
``TestResolveMemberBackendRef``), ``router_group_routing_test.go`` (``TestIsPerParticipantRule``) and the
scenarios of ``controller_int_router_group_test.go``; PRs #5798, #5812, #5820, #5847, #5943.
"""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.httproute import routing_group as rg
from llmisvc_core.models.gateway_api import HTTPBackendRef, HTTPRoute, HTTPRouteRule
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.conditions import Conditions
from llmisvc_core.world.derivative import http_route_equal
from llmisvc_core.world.snapshot import PassWorld
from tests import builders as b
from tests.builders import Wire, plans

GROUP = "llama-70b"
V1ALPHA2 = "inference.networking.x-k8s.io"
V1 = "inference.networking.k8s.io"


def member(
    name: str,
    *,
    group: str | None = GROUP,
    weight: int | None = 1,
    model: str = "llama-70b",
    routable: bool = True,
    stopped: bool = False,
    deleting: bool = False,
    workloads: Wire | None = None,
    **router: Any,
) -> Wire:
    """A grouped service as upstream's ``memberSvc``/``routableMember`` build it."""
    parents = [{"name": "gw", "namespace": "ns"}]
    route: Wire = {"http": {"spec": {"parentRefs": parents, "rules": [_rule("/v1", name)]}}}
    if group is not None:
        route["group"] = group
    if weight is not None:
        route["weight"] = weight
    status: Wire = {}
    if routable:
        status["conditions"] = [{"type": "RouterReady", "status": "True"}]
        status["workloads"] = workloads or {
            "primary": {"kind": "Deployment", "name": name, "readyReplicas": 1}
        }
    svc = b.service(
        name, uid=f"uid-{name}", router={"route": route, **router}, status=status, model={"name": model}
    )
    if stopped:
        b.stopped(svc)
    if deleting:
        svc["metadata"]["deletionTimestamp"] = b.NOW
    return svc


def _rule(path: str, owner: str) -> Wire:
    backend = {"name": f"{owner}-kserve-workload-svc", "port": 8000}
    return {"matches": [{"path": {"type": "PathPrefix", "value": path}}], "backendRefs": [backend]}


def _svc(wire: Wire) -> LLMInferenceService:
    return LLMInferenceService.model_validate(wire)


# --- TestFilterEligibleMembers ---------------------------------------------------------------------


def _without_ready_replicas(svc: Wire, **workloads: Wire) -> Wire:
    svc["status"]["workloads"].update(workloads)
    return svc


ELIGIBILITY = [
    pytest.param(
        [member("v1", deleting=True), member("v2")], "self", ["v2"], id="excludes_terminating_members"
    ),
    pytest.param(
        [member("v1"), member("v2", routable=False)], "self", ["v1"], id="excludes_peer_without_router_ready"
    ),
    pytest.param(
        [member("v1"), member("v2", workloads={"primary": {"name": "v2", "readyReplicas": 0}})],
        "self",
        ["v1"],
        id="excludes_peer_with_zero_available_replicas",
    ),
    pytest.param(
        [member("self", routable=False)], "self", ["self"], id="self_always_included_regardless_of_status"
    ),
    pytest.param(
        [
            member("v1"),
            _without_ready_replicas(member("v2"), prefill={"name": "v2-prefill", "readyReplicas": 0}),
        ],
        "self",
        ["v1"],
        id="excludes_peer_with_zero_prefill_replicas",
    ),
    pytest.param(
        [member("v1"), _without_ready_replicas(member("v2"), scheduler={"name": "v2-scheduler"})],
        "self",
        ["v1"],
        id="excludes_peer_with_nil_scheduler_replicas",
    ),
    pytest.param(
        [member("v1"), member("v2", routable=False, stopped=True)],
        "self",
        ["v1", "v2"],
        id="includes_force_stopped_peer_for_group_status_visibility",
    ),
    pytest.param([member("v1"), member("v2")], "v1", ["v1", "v2"], id="includes_routable_peers"),
    pytest.param(
        [member("v1"), b.service("v2", status={"conditions": [{"type": "RouterReady", "status": "True"}]})],
        "self",
        ["v1"],
        id="excludes_peer_without_a_primary_workload",
    ),
]


@pytest.mark.parametrize(("members", "self_name", "expected"), ELIGIBILITY)
def test_filter_eligible_members(members: list[Wire], self_name: str, expected: list[str]) -> None:
    eligible = rg.eligible_members([_svc(m) for m in members], self_name)
    assert [m.name for m in eligible] == expected


# --- TestResolveMemberBackendRef -------------------------------------------------------------------

BACKENDS = [
    pytest.param(
        b.service("v1", router={"scheduler": {"pool": {"ref": {"name": "my-custom-pool"}}}}),
        {"group": V1ALPHA2, "kind": "InferencePool", "name": "my-custom-pool", "port": 8000},
        id="custom_pool_ref_from_spec_uses_well_known_api_group",
    ),
    pytest.param(
        b.service(
            "v1",
            status={
                "router": {
                    "scheduler": {
                        "inferencePool": {"group": V1, "kind": "InferencePool", "name": "v1-inference-pool"}
                    }
                }
            },
        ),
        {"group": V1, "kind": "InferencePool", "name": "v1-inference-pool", "port": 8000},
        id="managed_pool_from_status_uses_pools_own_api_group",
    ),
    pytest.param(
        b.service("my-svc"),
        {"kind": "Service", "name": "my-svc-kserve-workload-svc", "port": 8000},
        id="workload_service_fallback",
    ),
    pytest.param(
        b.service(""),
        {"kind": "Service", "name": "-kserve-workload-svc", "port": 8000},
        id="empty_name_still_resolves_via_workload_service",
    ),
]


@pytest.mark.parametrize(("svc", "expected"), BACKENDS)
def test_resolve_member_backend_ref(svc: Wire, expected: Wire) -> None:
    assert rg.member_backend_ref(_svc(svc)) == expected


# --- TestIsExpectedBackendRef ----------------------------------------------------------------------

PLAIN = b.service("my-svc")
WITH_POOL_REF = b.service("my-svc", router={"scheduler": {"pool": {"ref": {"name": "custom-pool"}}}})
EXPECTED_BACKENDS = [
    pytest.param(
        PLAIN,
        {"kind": "InferencePool", "name": "my-svc-inference-pool"},
        True,
        id="default_inference_pool_matches",
    ),
    pytest.param(
        PLAIN, {"kind": "Service", "name": "my-svc-kserve-workload-svc"}, True, id="workload_service_matches"
    ),
    pytest.param(
        WITH_POOL_REF, {"kind": "InferencePool", "name": "custom-pool"}, True, id="custom_pool_ref_matches"
    ),
    pytest.param(
        PLAIN,
        {"kind": "InferencePool", "name": "user-custom-pool"},
        False,
        id="user_inference_pool_does_not_match",
    ),
    pytest.param(
        PLAIN, {"kind": "Service", "name": "user-custom-svc"}, False, id="user_service_does_not_match"
    ),
    pytest.param(PLAIN, {"name": "my-svc-kserve-workload-svc"}, True, id="a_kind_less_ref_is_a_service"),
]


@pytest.mark.parametrize(("svc", "ref", "expected"), EXPECTED_BACKENDS)
def test_is_expected_backend_ref(svc: Wire, ref: Wire, expected: bool) -> None:
    assert rg.is_expected_backend_ref(HTTPBackendRef.model_validate(ref), _svc(svc)) is expected


# --- TestIsPerParticipantRule ----------------------------------------------------------------------

PREFIX = "/default/my-svc"
PER_PARTICIPANT = [
    pytest.param([{"path": {"value": PREFIX}}], True, id="exact_prefix_match"),
    pytest.param([{"path": {"value": PREFIX + "/v1/completions"}}], True, id="prefix_with_trailing_path"),
    pytest.param([{"path": {"value": "/v1/chat/completions"}}], False, id="non_matching_path"),
    pytest.param([{"path": {}}], False, id="nil_path_value"),
    pytest.param([], False, id="empty_matches"),
    pytest.param(
        [{"path": {"value": "/default/my-svc-v2"}}], False, id="partial_name_collision_segment_boundary_guard"
    ),
    pytest.param(
        [{"headers": [{"name": "x-model", "value": "test"}]}], False, id="header_only_match_no_path"
    ),
]


@pytest.mark.parametrize(("matches", "expected"), PER_PARTICIPANT)
def test_is_per_participant_rule(matches: list[Wire], expected: bool) -> None:
    rule = HTTPRouteRule.model_validate({"matches": matches})
    assert rg.is_per_participant_rule(rule, PREFIX) is expected


# --- TestRewriteRulesForGroup ----------------------------------------------------------------------


def _member(name: str, weight: int, stopped: bool = False) -> rg.Member:
    return rg.Member(name, ("m",), weight, stopped, {"name": f"{name}-pool"})


def _route(*rules: Wire) -> HTTPRoute:
    return HTTPRoute.model_validate({"metadata": {"name": "r"}, "spec": {"rules": list(rules)}})


MANAGED_POOL = {"backendRefs": [{"kind": "InferencePool", "name": "my-svc-inference-pool"}]}


def test_rewrite_rules_replaces_controller_managed_backend_refs_with_group_members() -> None:
    route = _route(MANAGED_POOL)
    rg.rewrite_rules(route, _svc(PLAIN), (_member("v1", 9), _member("v2", 1)))
    refs = route.to_wire()["spec"]["rules"][0]["backendRefs"]
    assert refs == [{"name": "v1-pool", "weight": 9}, {"name": "v2-pool", "weight": 1}]


def test_rewrite_rules_skips_rules_with_only_custom_backend_refs() -> None:
    route = _route(MANAGED_POOL, {"backendRefs": [{"kind": "Service", "name": "user-custom-svc"}]})
    rg.rewrite_rules(route, _svc(PLAIN), (_member("v1", 5),))
    rules = route.to_wire()["spec"]["rules"]
    assert rules[0]["backendRefs"] == [{"name": "v1-pool", "weight": 5}]
    assert rules[1]["backendRefs"] == [{"kind": "Service", "name": "user-custom-svc"}]


def test_rewrite_rules_leaves_stopped_members_out_of_the_backends() -> None:
    """``rewriteRulesForGroup``: a weight 0 backend still leaks traffic on some gateways (#5847)."""
    route = _route(MANAGED_POOL)
    rg.rewrite_rules(route, _svc(PLAIN), (_member("v1", 5), _member("v2", 3, stopped=True)))
    assert route.to_wire()["spec"]["rules"][0]["backendRefs"] == [{"name": "v1-pool", "weight": 5}]


def test_rewrite_rules_keeps_per_participant_rules() -> None:
    own = {"matches": [{"path": {"value": "/ns/my-svc/v1"}}], **MANAGED_POOL}
    route = _route(own)
    rg.rewrite_rules(route, _svc(PLAIN), (_member("v1", 5),))
    assert route.to_wire()["spec"]["rules"][0]["backendRefs"] == MANAGED_POOL["backendRefs"]


# --- TestUpdateGroupStatus, applyGroupStatus -------------------------------------------------------


def _membership(matching: tuple[rg.Member, ...], divergent: tuple[rg.Member, ...] = ()) -> rg.Membership:
    return rg.Membership("llama-70b", matching, divergent)


def test_update_group_status_populates_group_status_from_resolved_members() -> None:
    svc = _svc(member("self"))
    rg.apply_status(Conditions(svc.status, b.NOW), svc, _membership((_member("v1", 9), _member("v2", 1))))
    assert svc.status.router is not None and svc.status.router.group is not None
    assert svc.status.router.group.to_wire() == {
        "name": "llama-70b",
        "members": [
            {"name": "v1", "weight": 9, "backendRef": {"name": "v1-pool"}},
            {"name": "v2", "weight": 1, "backendRef": {"name": "v2-pool"}},
        ],
    }


def test_update_group_status_creates_router_status_if_nil() -> None:
    svc = _svc(b.service("self"))
    assert svc.status.router is None
    rg.apply_status(Conditions(svc.status, b.NOW), svc, _membership((_member("v1", 1),)))
    assert svc.status.router is not None and svc.status.router.group is not None


def test_group_status_weight_zero_is_written_and_stopped_only_when_true() -> None:
    svc = _svc(b.service("self"))
    rg.apply_status(
        Conditions(svc.status, b.NOW), svc, _membership((_member("a", 0), _member("b", 2, stopped=True)))
    )
    members = svc.status.to_wire()["router"]["group"]["members"]
    assert members[0] == {"name": "a", "weight": 0, "backendRef": {"name": "a-pool"}}
    assert members[1]["stopped"] is True


def test_member_divergence_message_lists_each_divergent_model_set_once_sorted() -> None:
    divergent = (
        rg.Member("x", ("b", "b-lora"), 1, False, {}),
        rg.Member("y", ("a",), 1, False, {}),
        rg.Member("z", ("a",), 1, False, {}),
    )
    assert rg.divergence_message(divergent) == "group has members with different model sets: a, b+b-lora"


# --- the pass: route, status and conditions --------------------------------------------------------


def _plan(svc: Wire, *peers: Wire) -> Any:
    return plans.run(svc, *peers, b.gateway_class(), b.gateway())


def _route_of(plan: Any, name: str) -> Wire:
    return plans.applied(plan, "HTTPRoute", f"{name}-kserve-route")[0]


def test_grouped_route_carries_the_routing_group_label() -> None:
    """``RouterLabels`` (#5798)."""
    route = _route_of(_plan(member("self")), "self")
    assert route["metadata"]["labels"]["serving.kserve.io/routing-group"] == GROUP


def test_shared_rules_get_the_weighted_backends_of_every_routable_member_sorted_by_name() -> None:
    """controller_int_router_group_test.go "should form a group with weighted backendRefs"."""
    plan = _plan(member("v2", weight=1), member("v1", weight=9))
    refs = _route_of(plan, "v2")["spec"]["rules"][0]["backendRefs"]
    assert [(r["name"], r["weight"]) for r in refs] == [
        ("v1-kserve-workload-svc", 9),
        ("v2-kserve-workload-svc", 1),
    ]
    group = plan.status["router"]["group"]
    assert [(m["name"], m["weight"]) for m in group["members"]] == [("v1", 9), ("v2", 1)]
    assert plans.condition(plan, "GroupReady") == {
        "type": "GroupReady",
        "status": "True",
        "severity": "Info",
        "lastTransitionTime": b.NOW,
    }
    assert plans.condition(plan, "GroupDegraded") is None


def test_peers_of_another_namespace_or_group_are_not_members() -> None:
    other_ns = member("v1")
    other_ns["metadata"]["namespace"] = "elsewhere"
    plan = _plan(member("self"), other_ns, member("v3", group="other"), member("v4", group=None, weight=None))
    assert [m["name"] for m in plan.status["router"]["group"]["members"]] == ["self"]


def test_a_peer_whose_readiness_flips_leaves_and_rejoins_the_backends() -> None:
    ready = _route_of(_plan(member("self"), member("peer")), "self")
    not_ready = _route_of(_plan(member("self"), member("peer", routable=False)), "self")
    assert len(ready["spec"]["rules"][0]["backendRefs"]) == 2
    assert [r["name"] for r in not_ready["spec"]["rules"][0]["backendRefs"]] == ["self-kserve-workload-svc"]


def test_divergent_members_are_reported_not_routed_and_do_not_block_ready() -> None:
    """ "should form independent sub-groups with GroupReady=True and GroupDegraded without blocking Ready"."""
    plan = _plan(member("self"), member("other", model="mistral"))
    assert [m["name"] for m in plan.status["router"]["group"]["members"]] == ["self"]
    degraded = plans.condition(plan, "GroupDegraded")
    assert degraded is not None
    assert (degraded["status"], degraded["reason"], degraded["message"]) == (
        "True",
        "MemberDivergence",
        "group has members with different model sets: mistral",
    )
    assert plans.condition(plan, "RouterReady") == plans.condition(_plan(member("self")), "RouterReady")


def test_peer_model_names_come_from_status_addresses_before_spec() -> None:
    peer = member("peer", model="spec-name")
    peer["status"]["addresses"] = [{"url": "http://x", "models": [{"name": "llama-70b"}]}]
    plan = _plan(member("self"), peer)
    assert [m["name"] for m in plan.status["router"]["group"]["members"]] == ["peer", "self"]


def test_a_stopped_peer_stays_in_status_when_its_spec_names_this_model() -> None:
    """ "should preserve stopped member in group status when model names diverge from runtime"."""
    plan = _plan(member("self"), member("paused", stopped=True, routable=False, weight=4))
    members = plan.status["router"]["group"]["members"]
    assert members[0] == {
        "name": "paused",
        "weight": 4,
        "stopped": True,
        "backendRef": {"kind": "Service", "name": "paused-kserve-workload-svc", "port": 8000},
    }
    refs = _route_of(plan, "self")["spec"]["rules"][0]["backendRefs"]
    assert [r["name"] for r in refs] == ["self-kserve-workload-svc"]


def test_a_member_being_deleted_is_dropped_from_the_live_route() -> None:
    """ "should update remaining member's HTTPRoute when a group member is deleted": grouped rules compare
    exactly, so the departed backend is removed (DeepDerivative alone would keep it, Q4)."""
    live = _route_of(_plan(member("self"), member("gone")), "self")
    again = _plan(member("self"), live, member("gone", deleting=True))
    refs = _route_of(again, "self")["spec"]["rules"][0]["backendRefs"]
    assert [r["name"] for r in refs] == ["self-kserve-workload-svc"]
    assert not plans.applied(_plan(member("self"), live, member("gone")), "HTTPRoute")


def test_leaving_the_group_removes_the_label_and_the_group_status() -> None:
    """ "should remove routing-group label and update peer when a member leaves the group"."""
    grouped = _plan(member("self"))
    live = _route_of(grouped, "self")
    left = member("self", group=None, weight=None)
    left["status"]["router"] = grouped.status["router"]
    left["status"]["conditions"] = grouped.status["conditions"]
    plan = _plan(left, live)
    route = _route_of(plan, "self")
    assert "serving.kserve.io/routing-group" not in route["metadata"]["labels"]
    assert "group" not in plan.status["router"]
    assert plans.condition(plan, "GroupReady") is None


def test_a_stopped_grouped_service_clears_its_group_conditions() -> None:
    grouped = _plan(member("self", model="x"), member("other"))
    stopped = b.stopped(member("self"))
    stopped["status"]["conditions"] = grouped.status["conditions"]
    plan = _plan(stopped)
    assert plans.condition(plan, "GroupReady") is None and plans.condition(plan, "GroupDegraded") is None


def test_ungrouped_plan_has_no_group_fields() -> None:
    plan = _plan(member("solo", group=None, weight=None))
    assert "group" not in plan.status["router"]
    assert "serving.kserve.io/routing-group" not in _route_of(plan, "solo")["metadata"]["labels"]


# --- TestIsGroupRoute and the stale label (semanticHTTPRouteIsEqual) -------------------------------


def _wire_route(labels: dict[str, str] | None, refs: list[Wire]) -> Wire:
    meta: Wire = {"name": "r"} | ({"labels": labels} if labels is not None else {})
    return {"metadata": meta, "spec": {"rules": [{"backendRefs": refs}]}}


A, B = {"name": "a", "weight": 1}, {"name": "b", "weight": 1}
G = {"serving.kserve.io/routing-group": "g"}
EQUALITY = [
    pytest.param(None, None, [A], [A, B], True, id="no_labels_trailing_backend_is_derivative"),
    pytest.param(
        {"other": "label"},
        {"other": "label"},
        [A],
        [A, B],
        True,
        id="no_group_label_trailing_backend_is_derivative",
    ),
    pytest.param(G, G, [A], [A, B], False, id="has_group_label_rules_compare_exactly"),
    pytest.param(G, G | {"x": "y"}, [A], [A], True, id="grouped_extra_live_labels_are_fine"),
    pytest.param({}, G, [A], [A], False, id="stale_routing_group_label_forces_an_update"),
]


@pytest.mark.parametrize(("expected_labels", "live_labels", "expected_refs", "live_refs", "equal"), EQUALITY)
def test_is_group_route_and_stale_controller_labels(
    expected_labels: dict[str, str] | None,
    live_labels: dict[str, str] | None,
    expected_refs: list[Wire],
    live_refs: list[Wire],
    equal: bool,
) -> None:
    expected = _wire_route(expected_labels, expected_refs)
    assert http_route_equal(expected, _wire_route(live_labels, live_refs)) is equal


def test_membership_reads_peers_as_stored_and_skips_unreadable_ones() -> None:
    broken = member("broken")
    broken["spec"]["model"] = "not-an-object"
    world = PassWorld(plans.snapshot(member("self"), broken, member("peer")))
    found = rg.group_members(world, "ns", GROUP)
    assert sorted(m.name for m in found) == ["peer", "self"]
