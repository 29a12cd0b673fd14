"""DeepDerivative (Appendix B), route semantic equality (R-CRUD-3) and local server defaults (R-CRUD-4)."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.models.gateway_api import HTTPRoute
from llmisvc_core.world.derivative import deep_derivative, http_route_with_defaults, semantically_equal


@pytest.mark.parametrize(
    ("expected", "current", "result"),
    [
        (None, {"a": 1}, True),
        ("", "anything", True),
        ([], [1, 2], True),
        ({}, {"a": "b"}, True),
        ("a", "a", True),
        ("a", "b", False),
        ("a", None, False),
        ([1, 2], [1, 2, 3], True),
        ([1, 2, 3], [1, 2], False),
        ([1, 3], [1, 2, 3], False),
        (["a"], None, False),
        ({"a": "1"}, {"a": "1", "b": "2"}, True),
        ({"a": "1", "b": "2"}, {"a": "1"}, False),
        ({"a": ""}, {}, False),
        ({"a": ""}, {"b": "x"}, False),
        ({"a": ""}, {"a": "x"}, True),
        ({"a": None}, {}, True),
        ({"a": []}, {}, True),
        ({"a": {}}, {}, True),
        (0, 8080, False),
        (0, 0, True),
        (8080, 8080, True),
        (False, True, False),
        (False, False, True),
        (True, 1, False),
        (1, True, False),
        (
            {"rules": [{"backendRefs": [{"group": "x"}]}]},
            {"rules": [{"backendRefs": [{"group": "y"}]}]},
            False,
        ),
        (
            {"rules": [{"backendRefs": [{"name": "p"}]}]},
            {"rules": [{"backendRefs": [{"name": "p", "w": 1}]}]},
            True,
        ),
        ({"a": "1"}, ["a"], False),
        ([{"a": "1"}], {"a": "1"}, False),
    ],
    ids=[
        "null-ignored",
        "empty-string-ignored",
        "empty-list-ignored",
        "empty-map-ignored",
        "string-equal",
        "string-differs",
        "string-vs-absent",
        "list-prefix-equal",
        "list-longer-than-live",
        "list-item-differs",
        "list-vs-absent",
        "map-subset",
        "map-key-missing",
        "map-key-with-empty-value-must-exist",
        "map-key-with-empty-value-missing-among-others",
        "map-key-with-empty-value-present",
        "map-null-value-ignored",
        "map-empty-list-value-ignored",
        "map-empty-map-value-ignored",
        "zero-number-not-ignored",
        "zero-equals-zero",
        "number-equal",
        "false-not-ignored",
        "false-equals-false",
        "bool-is-not-number",
        "number-is-not-bool",
        "nested-value-differs",
        "nested-extra-live-field",
        "map-vs-list",
        "list-vs-map",
    ],
)
def test_appendix_b_deep_derivative(expected: Any, current: Any, result: bool) -> None:
    assert deep_derivative(expected, current) is result


def _route_wire(
    rules: list[dict[str, Any]],
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "r", "namespace": "ns"}
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": {"parentRefs": [{"name": "gw"}], "rules": rules}}


def _rule(path: str, group: str = "inference.networking.k8s.io", header: str | None = None) -> dict[str, Any]:
    match: dict[str, Any] = {"path": {"type": "PathPrefix", "value": path}}
    if header is not None:
        match["headers"] = [{"type": "Exact", "name": "X-Gateway-Model-Name", "value": header}]
    return {"matches": [match], "backendRefs": [{"group": group, "kind": "InferencePool", "name": "p"}]}


LABELS = {"app.kubernetes.io/name": "svc"}


@pytest.mark.parametrize(
    ("expected", "current", "result"),
    [
        (
            _route_wire([_rule("/a")], labels=LABELS),
            _route_wire([_rule("/a")], labels={**LABELS, "team": "x"}, annotations={"other": "y"}),
            True,
        ),
        (
            _route_wire([_rule("/a")], labels=LABELS),
            _route_wire([_rule("/a")], labels={"app.kubernetes.io/name": "other"}),
            False,
        ),
        (
            _route_wire([_rule("/a")], annotations={"serving.kserve.io/inference-pool-migrated": "v1"}),
            _route_wire([_rule("/a")]),
            False,
        ),
        (_route_wire([_rule("/a")]), _route_wire([_rule("/a"), _rule("/b")]), True),
        (
            _route_wire([_rule("/a", group="inference.networking.k8s.io")]),
            _route_wire([_rule("/a", group="inference.networking.x-k8s.io")]),
            False,
        ),
        (_route_wire([_rule("/a"), _rule("/b")]), _route_wire([_rule("/a")]), False),
        (_route_wire([_rule("/", header="m-1")]), _route_wire([_rule("/", header="m-2")]), False),
    ],
    ids=[
        "extra-live-labels-and-annotations-ignored",
        "changed-label-value-differs",
        "missing-annotation-differs",
        "edge-82-removed-trailing-rule-is-equal",
        "backend-group-differs",
        "added-rule-differs",
        "changed-header-value-differs",
    ],
)
def test_r_crud_3_semantic_equality(expected: dict[str, Any], current: dict[str, Any], result: bool) -> None:
    assert semantically_equal(expected, current) is result


def test_r_crud_3_missing_spec_and_metadata_are_ignored() -> None:
    assert semantically_equal({}, _route_wire([_rule("/a")], labels=LABELS))


def _route(spec: dict[str, Any]) -> HTTPRoute:
    return HTTPRoute.from_wire({"metadata": {"name": "r", "namespace": "ns"}, "spec": spec})


def test_r_crud_4_defaults_fill_every_unset_field() -> None:
    route = _route(
        {
            "parentRefs": [{"name": "gw"}],
            "rules": [
                {
                    "matches": [
                        {
                            "headers": [{"name": "h", "value": "v"}],
                            "queryParams": [{"name": "q", "value": "1"}],
                        }
                    ],
                    "backendRefs": [{"name": "svc"}],
                },
                {"backendRefs": [{"name": "svc"}]},
                {"matches": [{"path": {"value": "/x"}}, {"path": {"type": "Exact"}}]},
            ],
        }
    )

    defaulted = http_route_with_defaults(route).to_wire()["spec"]

    assert defaulted == {
        "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}],
        "rules": [
            {
                "matches": [
                    {
                        "path": {"type": "PathPrefix", "value": "/"},
                        "headers": [{"type": "Exact", "name": "h", "value": "v"}],
                        "queryParams": [{"name": "q", "value": "1", "type": "Exact"}],
                    }
                ],
                "backendRefs": [{"group": "", "kind": "Service", "name": "svc", "weight": 1}],
            },
            {
                "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                "backendRefs": [{"group": "", "kind": "Service", "name": "svc", "weight": 1}],
            },
            {
                "matches": [
                    {"path": {"type": "PathPrefix", "value": "/x"}},
                    {"path": {"type": "Exact", "value": "/"}},
                ]
            },
        ],
    }


def test_r_crud_4_defaults_keep_explicit_values() -> None:
    spec = {
        "parentRefs": [{"group": "", "kind": "Service", "name": "mesh"}],
        "rules": [
            {
                "matches": [
                    {
                        "path": {"type": "RegularExpression", "value": "/v[0-9]"},
                        "headers": [{"type": "RegularExpression", "name": "h", "value": "v"}],
                    }
                ],
                "backendRefs": [
                    {
                        "group": "inference.networking.k8s.io",
                        "kind": "InferencePool",
                        "name": "p",
                        "weight": 0,
                    }
                ],
            }
        ],
    }

    assert http_route_with_defaults(_route(spec)).to_wire()["spec"] == spec


@pytest.mark.parametrize("rules", [None, []], ids=["absent", "empty"])
def test_r_crud_4_absent_rules_default_to_one_catch_all_rule(rules: list[Any] | None) -> None:
    route = _route({"parentRefs": [{"name": "gw"}], "rules": rules})

    defaulted = http_route_with_defaults(route)

    assert defaulted.to_wire()["spec"]["rules"] == [
        {"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}
    ]


def test_r_crud_4_defaults_return_a_copy() -> None:
    route = _route({"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "svc"}]}]})
    before = route.to_wire()

    http_route_with_defaults(route)

    assert route.to_wire() == before


def test_r_crud_4_defaulted_route_equals_the_live_route_it_produced() -> None:
    """A defaulted expected route compared to the server's copy of itself never asks for an update."""
    route = _route({"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "svc"}]}]})
    live = http_route_with_defaults(route).to_wire()

    assert semantically_equal(http_route_with_defaults(route).to_wire(), live)
    assert not semantically_equal(
        http_route_with_defaults(route).to_wire(),
        {**live, "spec": {**live["spec"], "rules": [{"backendRefs": [{"name": "svc"}]}]}},
    )
