"""InferencePool API-group migration of the managed route: R-EXP-7, R-EXP-9, R-EXP-10 (edge cases 54, 55)."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.httproute.migration import apply_pool_group, should_use_v1, support_status
from llmisvc_core.models.gateway_api import HTTPBackendRef, HTTPRoute
from llmisvc_core.models.llmisvc import LLMInferenceService, is_default_pool_backend_ref

V1 = "inference.networking.k8s.io"
V1ALPHA2 = "inference.networking.x-k8s.io"
MIGRATED = "serving.kserve.io/inference-pool-migrated"
GATEWAY_PARENT = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "name": "test-gateway",
    "namespace": "test-ns",
}


def _cond(type_: str, status: str, reason: str) -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": "", "lastTransitionTime": "t"}


GATEWAY_OK = [_cond("Accepted", "True", "Accepted"), _cond("ResolvedRefs", "True", "ResolvedRefs")]
GATEWAY_INVALID_KIND = [_cond("Accepted", "True", "Accepted"), _cond("ResolvedRefs", "False", "InvalidKind")]
GATEWAY_NOT_FOUND = [_cond("Accepted", "True", "Accepted"), _cond("ResolvedRefs", "False", "BackendNotFound")]
GATEWAY_UNKNOWN = [_cond("Accepted", "True", "Accepted"), _cond("ResolvedRefs", "Unknown", "Pending")]
KUADRANT = [_cond("kuadrant.io/AuthPolicyAffected", "True", "Accepted")]


def _parent(
    conditions: list[dict[str, Any]], name: str = "test-gateway", controller: str = "gw/ctrl"
) -> dict[str, Any]:
    return {
        "parentRef": {**GATEWAY_PARENT, "name": name},
        "controllerName": controller,
        "conditions": conditions,
    }


def _route(
    backends: list[dict[str, Any]],
    parents: list[dict[str, Any]] | None = None,
    parent_refs: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
) -> HTTPRoute:
    wire: dict[str, Any] = {
        "metadata": {"name": "svc-kserve-route", "namespace": "test-ns", "annotations": annotations},
        "spec": {
            "parentRefs": [GATEWAY_PARENT] if parent_refs is None else parent_refs,
            "rules": [{"backendRefs": backends}],
        },
    }
    if parents is not None:
        wire["status"] = {"parents": parents}
    return HTTPRoute.from_wire(wire)


def _pool(
    group: str | None, name: str = "svc-inference-pool", kind: str | None = "InferencePool"
) -> dict[str, Any]:
    return {"group": group, "kind": kind, "name": name, "port": 8000}


SERVICE_BACKEND = {"kind": "Service", "name": "my-service"}


@pytest.mark.parametrize(
    ("route", "group", "expected"),
    [
        (None, V1, "Unknown"),
        (_route([SERVICE_BACKEND], [_parent(GATEWAY_OK)]), V1, "Unknown"),
        (_route([_pool(V1ALPHA2)], [_parent(GATEWAY_OK)]), V1, "Unknown"),
        (_route([_pool(V1)], [_parent(GATEWAY_OK)]), V1, "True"),
        (_route([_pool(V1)], [_parent(GATEWAY_INVALID_KIND)]), V1, "False"),
        (_route([_pool(V1)], [_parent(GATEWAY_NOT_FOUND)]), V1, "True"),
        (_route([_pool(V1)], [_parent(GATEWAY_UNKNOWN)]), V1, "True"),
        (_route([_pool(V1)]), V1, "Unknown"),
        (_route([_pool(V1)], []), V1, "Unknown"),
        (_route([_pool(V1ALPHA2)], [_parent(GATEWAY_OK)]), V1ALPHA2, "True"),
        (_route([_pool(V1ALPHA2)], [_parent(GATEWAY_INVALID_KIND)]), V1ALPHA2, "False"),
        (_route([_pool(V1ALPHA2)], [_parent(GATEWAY_NOT_FOUND)]), V1ALPHA2, "True"),
        (_route([_pool(V1)], [_parent(GATEWAY_OK)]), V1ALPHA2, "Unknown"),
        (_route([_pool(None)], [_parent(GATEWAY_OK)]), V1, "Unknown"),
        (_route([_pool(V1, kind=None)], [_parent(GATEWAY_OK)]), V1, "Unknown"),
        (_route([_pool(V1, name="any-pool")], [_parent(GATEWAY_INVALID_KIND)]), V1, "False"),
        (_route([_pool(V1), _pool(V1ALPHA2)], [_parent(GATEWAY_INVALID_KIND)]), V1, "False"),
        (_route([_pool(V1), _pool(V1ALPHA2)], [_parent(GATEWAY_INVALID_KIND)]), V1ALPHA2, "False"),
    ],
    ids=[
        "edge-54-nil-route",
        "edge-54-service-backend-only",
        "edge-54-v1alpha2-backend-asked-about-v1",
        "edge-54-v1-resolved",
        "edge-54-v1-invalid-kind",
        "edge-54-v1-backend-not-found-counts-as-supported",
        "resolved-refs-unknown-counts-as-supported",
        "edge-54-v1-without-status",
        "empty-status-parents",
        "edge-54-v1alpha2-resolved",
        "edge-54-v1alpha2-invalid-kind",
        "edge-54-v1alpha2-backend-not-found",
        "v1-backend-asked-about-v1alpha2",
        "unset-group-does-not-count",
        "unset-kind-does-not-count",
        "any-pool-name-counts",
        "q18-both-groups-same-answer-v1",
        "q18-both-groups-same-answer-v1alpha2",
    ],
)
def test_r_exp_9_support_status(route: HTTPRoute | None, group: str, expected: str) -> None:
    assert support_status(route, group) == expected


@pytest.mark.parametrize(
    ("parents", "parent_refs", "expected"),
    [
        ([_parent(GATEWAY_OK), _parent(KUADRANT, controller="kuadrant")], None, "True"),
        ([_parent(KUADRANT, controller="kuadrant"), _parent(GATEWAY_INVALID_KIND)], None, "False"),
        ([_parent(GATEWAY_INVALID_KIND, name="other-gateway"), _parent(GATEWAY_OK)], None, "True"),
        ([_parent(KUADRANT, controller="kuadrant")], None, "Unknown"),
        ([_parent(GATEWAY_OK, name="other-gateway")], None, "Unknown"),
        ([_parent(GATEWAY_INVALID_KIND, name="other-gateway")], [], "False"),
        ([_parent(GATEWAY_INVALID_KIND), _parent(GATEWAY_OK)], None, "True"),
        (
            [{"parentRef": {"name": "test-gateway"}, "conditions": GATEWAY_OK}],
            [{"name": "test-gateway"}],
            "True",
        ),
        (
            [{"parentRef": {"name": "test-gateway", "sectionName": "http"}, "conditions": GATEWAY_OK}],
            [{"name": "test-gateway"}],
            "Unknown",
        ),
        (
            [
                {
                    "parentRef": {"name": "test-gateway", "namespace": "test-ns", "port": 0},
                    "conditions": GATEWAY_OK,
                }
            ],
            [{"name": "test-gateway", "sectionName": ""}],
            "True",
        ),
    ],
    ids=[
        "edge-55-kuadrant-and-gateway-resolved",
        "edge-55-kuadrant-and-gateway-invalid-kind",
        "edge-55-invalid-kind-for-parent-not-in-spec-ignored",
        "edge-55-only-kuadrant",
        "only-a-parent-not-in-spec",
        "no-spec-parents-nothing-skipped",
        "first-non-invalid-kind-entry-wins",
        "unset-parent-fields-default-to-gateway-in-route-namespace",
        "section-name-must-match",
        "empty-section-and-zero-port-equal-unset",
    ],
)
def test_r_exp_9_status_entries_are_matched_to_spec_parents(
    parents: list[dict[str, Any]], parent_refs: list[dict[str, Any]] | None, expected: str
) -> None:
    assert support_status(_route([_pool(V1)], parents, parent_refs=parent_refs), V1) == expected


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (None, False),
        (_route([_pool(V1ALPHA2)], annotations={MIGRATED: "v1"}), True),
        (_route([_pool(V1ALPHA2)], [_parent(GATEWAY_OK)], annotations={MIGRATED: "v2"}), False),
        (_route([_pool(V1)], [_parent(GATEWAY_OK)]), True),
        (_route([_pool(V1ALPHA2)], [_parent(GATEWAY_INVALID_KIND)]), True),
        (_route([_pool(V1ALPHA2)], [_parent(GATEWAY_OK)]), False),
        (_route([_pool(V1ALPHA2)]), False),
        (_route([_pool(V1)], [_parent(GATEWAY_INVALID_KIND)]), False),
        (_route([SERVICE_BACKEND], [_parent(GATEWAY_OK)]), False),
    ],
    ids=[
        "absent-route-starts-on-v1alpha2",
        "annotation-locks-v1",
        "other-annotation-value-is-no-lock",
        "v1-supported",
        "v1alpha2-rejected",
        "v1alpha2-accepted-stays",
        "no-status-stays-v1alpha2",
        "v1-rejected-and-v1alpha2-unknown-stays-v1alpha2",
        "no-pool-backend-stays-v1alpha2",
    ],
)
def test_r_exp_7_decision_table(current: HTTPRoute | None, expected: bool) -> None:
    assert should_use_v1(current) is expected


SVC = LLMInferenceService.from_wire({"metadata": {"name": "svc", "namespace": "test-ns", "uid": "u"}})


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ({"group": V1, "kind": "InferencePool", "name": "svc-inference-pool"}, True),
        ({"group": V1ALPHA2, "kind": "InferencePool", "name": "svc-inference-pool"}, True),
        ({"kind": "InferencePool", "name": "svc-inference-pool", "namespace": "elsewhere"}, True),
        ({"group": V1, "name": "svc-inference-pool"}, False),
        ({"group": V1, "kind": "Service", "name": "svc-inference-pool"}, False),
        ({"group": V1, "kind": "InferencePool", "name": "other-pool"}, False),
    ],
    ids=["v1-group", "v1alpha2-group", "any-group-and-namespace", "unset-kind", "service-kind", "other-name"],
)
def test_r_exp_10_default_pool_backend_ref(ref: dict[str, Any], expected: bool) -> None:
    assert is_default_pool_backend_ref(HTTPBackendRef.from_wire(ref), SVC) is expected


def _backends(route: HTTPRoute) -> Any:
    return route.to_wire()["spec"]["rules"][0]["backendRefs"]


@pytest.mark.parametrize(
    ("use_v1", "group", "annotations"),
    [
        (True, V1, {"keep": "me", MIGRATED: "v1"}),
        (False, V1ALPHA2, {"keep": "me"}),
    ],
    ids=["v1-adds-annotation", "v1alpha2-adds-nothing"],
)
def test_r_exp_7_apply_pool_group(use_v1: bool, group: str, annotations: dict[str, str]) -> None:
    route = _route(
        [_pool(V1), _pool(V1ALPHA2, name="other-pool"), SERVICE_BACKEND], annotations={"keep": "me"}
    )
    before = route.to_wire()

    result = apply_pool_group(route, SVC, use_v1)

    assert _backends(result) == [
        {"group": group, "kind": "InferencePool", "name": "svc-inference-pool", "port": 8000},
        {"group": V1ALPHA2, "kind": "InferencePool", "name": "other-pool", "port": 8000},
        SERVICE_BACKEND,
    ]
    assert result.metadata.annotations == annotations
    assert route.to_wire() == before


def test_r_exp_7_apply_pool_group_creates_annotations_when_none() -> None:
    result = apply_pool_group(_route([_pool(None)]), SVC, True)

    assert result.metadata.annotations == {MIGRATED: "v1"}
    assert _backends(result)[0]["group"] == V1
