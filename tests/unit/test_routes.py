"""The expected managed HTTPRoute and model-based routing: R-EXP-1 … R-EXP-8, R-EXP-11 (edge cases 58, 59,
64, 74-77, 83)."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core import naming
from llmisvc_core.httproute.managed import expected_http_route
from llmisvc_core.httproute.model_routing import (
    expand_lora_adapter_matches,
    is_model_based_routing_enabled,
    is_model_routing_match,
    strip_model_based_routing_rules,
)
from llmisvc_core.merge import presets
from llmisvc_core.models.gateway_api import Gateway, HTTPRoute, HTTPRouteMatch, HTTPRouteRule
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world import derivative
from llmisvc_core.world.config import ModelRoutingMode, RouterConfig

HEADER = "X-Gateway-Model-Name"
V1 = "inference.networking.k8s.io"
V1ALPHA2 = "inference.networking.x-k8s.io"
MIGRATED = "serving.kserve.io/inference-pool-migrated"
MBR = "serving.kserve.io/model-based-routing-enabled"
CONFIG = RouterConfig()


def _svc(router: dict[str, Any] | None = None, **spec: Any) -> LLMInferenceService:
    wire_spec = {"router": router, **spec}
    return LLMInferenceService.from_wire(
        {"metadata": {"name": "svc", "namespace": "ns", "uid": "uid-1"}, "spec": wire_spec}
    )


def _match(
    path: str | None = None, header: str | None = None, value: str = "publishers/ns/models/m"
) -> HTTPRouteMatch:
    wire: dict[str, Any] = {}
    if path is not None:
        wire["path"] = {"type": "Exact", "value": path}
    if header is not None:
        wire["headers"] = [{"type": "Exact", "name": header, "value": value}]
    return HTTPRouteMatch.from_wire(wire)


def _rules(*match_lists: list[HTTPRouteMatch]) -> list[HTTPRouteRule]:
    return [HTTPRouteRule(matches=matches or None) for matches in match_lists]


def _wire(rules: list[HTTPRouteRule] | None) -> list[dict[str, Any]] | None:
    return None if rules is None else [r.to_wire() for r in rules]


# --- R-EXP-8 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("match", "header_name", "expected"),
    [
        (_match("/v1", HEADER), HEADER, True),
        (_match(None, HEADER), HEADER, True),
        (
            HTTPRouteMatch.from_wire({"headers": [{"name": "a", "value": "1"}, {"name": HEADER}]}),
            HEADER,
            True,
        ),
        (_match("/v1", "x-gateway-model-name"), HEADER, False),
        (_match("/v1", "X-Custom"), HEADER, False),
        (_match("/v1"), HEADER, False),
        (_match("/v1", HEADER), "", False),
    ],
    ids=[
        "path-and-header",
        "header-only",
        "any-header-entry",
        "q28-case-sensitive",
        "other-header",
        "no-header",
        "empty-config",
    ],
)
def test_r_exp_8_model_routing_match(match: HTTPRouteMatch, header_name: str, expected: bool) -> None:
    assert is_model_routing_match(match, header_name) is expected


# --- R-EXP-3 / R-EXP-4 -------------------------------------------------------------------------------


def _gateway(opt_out: str | None = None) -> Gateway:
    annotations = {MBR: opt_out} if opt_out is not None else None
    return Gateway.from_wire({"metadata": {"name": "gw", "namespace": "ns", "annotations": annotations}})


ENABLED_SVC = _svc(annotations={MBR: "true"})


@pytest.mark.parametrize(
    ("svc", "config", "gateways", "expected"),
    [
        (ENABLED_SVC, CONFIG, [], True),
        (ENABLED_SVC, RouterConfig(model_based_routing_header_name=""), [], False),
        (_svc(), CONFIG, [], False),
        (_svc(annotations={MBR: "false"}), CONFIG, [], False),
        (_svc(annotations={MBR: "True"}), CONFIG, [], False),
        (ENABLED_SVC, RouterConfig(model_based_routing_mode=ModelRoutingMode.DISABLED), [], False),
        (
            ENABLED_SVC,
            RouterConfig(model_based_routing_mode=ModelRoutingMode.FORCED),
            [_gateway("false")],
            True,
        ),
        (
            _svc(annotations={MBR: "false"}),
            RouterConfig(model_based_routing_mode=ModelRoutingMode.FORCED),
            [],
            False,
        ),
        (ENABLED_SVC, CONFIG, [_gateway(), _gateway("false")], False),
        (ENABLED_SVC, CONFIG, [_gateway("true"), _gateway("FALSE")], True),
        (ENABLED_SVC, CONFIG, None, True),
    ],
    ids=[
        "enabled-mode-no-referenced-gateways-q11",
        "empty-header-name",
        "service-annotation-missing",
        "edge-75-service-annotation-false",
        "service-annotation-not-exactly-true",
        "mode-disabled",
        "edge-75-forced-ignores-gateway-opt-out",
        "forced-still-needs-service-annotation",
        "edge-75-enabled-gateway-opt-out",
        "opt-out-is-exactly-false",
        "gateway-collection-failed-means-enabled",
    ],
)
def test_r_exp_3_model_based_routing_decision(
    svc: LLMInferenceService, config: RouterConfig, gateways: list[Gateway] | None, expected: bool
) -> None:
    assert is_model_based_routing_enabled(svc, config, gateways) is expected


def test_r_exp_3_reads_spec_annotations_not_metadata() -> None:
    svc = LLMInferenceService.from_wire(
        {"metadata": {"name": "svc", "namespace": "ns", "annotations": {MBR: "true"}}}
    )

    assert not is_model_based_routing_enabled(svc, CONFIG, [])


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("FORCED", "forced"),
        ("Disabled", "disabled"),
        ("ENABLED", "enabled"),
        ("unknown", "enabled"),
        ("", "enabled"),
    ],
    ids=["forced-upper", "disabled-mixed", "enabled-upper", "unknown", "empty"],
)
def test_edge_76_mode_parsing(text: str, mode: str) -> None:
    assert ModelRoutingMode.parse(text) == mode


# --- R-EXP-5 -----------------------------------------------------------------------------------------


def _match_summary(rule: HTTPRouteRule) -> list[tuple[str | None, str | None]]:
    summary = []
    for m in rule.matches or []:
        value = next((h.value for h in m.headers or [] if h.name == HEADER), None)
        summary.append((m.path.value if m.path else None, value))
    return summary


def test_r_exp_5_edge_77_lora_copies_grouped_by_match_then_adapter() -> None:
    rules = _rules([_match("/v1/completions", HEADER), _match("/v1/completions/", HEADER)])

    expanded = expand_lora_adapter_matches(rules, "ns", ["adapter-a", "adapter-b"], HEADER)

    assert _match_summary(expanded[0]) == [
        ("/v1/completions", "publishers/ns/models/m"),
        ("/v1/completions/", "publishers/ns/models/m"),
        ("/v1/completions", "publishers/ns/models/adapter-a"),
        ("/v1/completions", "publishers/ns/models/adapter-b"),
        ("/v1/completions/", "publishers/ns/models/adapter-a"),
        ("/v1/completions/", "publishers/ns/models/adapter-b"),
    ]
    assert len(rules[0].matches or []) == 2


def test_r_exp_5_lora_copies_in_adapter_name_order() -> None:
    """KServe #5822 (commit bacf590e3, config_merge.go ``expandLoRAAdapterMatches``; ported from the case
    "adapter order is stable regardless of input order" of config_merge_lora_test.go): copies follow the
    adapter names sorted, not the spec's order; names compare as bytes, so upper case sorts first."""
    rules = _rules([_match("/v1/completions", HEADER)])

    expanded = expand_lora_adapter_matches(rules, "ns", ["zeta", "Beta", "alpha"], HEADER)

    assert [value for _, value in _match_summary(expanded[0])] == [
        "publishers/ns/models/m",
        "publishers/ns/models/Beta",
        "publishers/ns/models/alpha",
        "publishers/ns/models/zeta",
    ]


@pytest.mark.parametrize(
    ("adapters", "header_name"), [([], HEADER), (["adapter-a"], "")], ids=["no-adapters", "empty-header-name"]
)
def test_r_exp_5_edge_77_no_op(adapters: list[str], header_name: str) -> None:
    rules = _rules([_match("/v1/completions", HEADER)])

    assert _wire(expand_lora_adapter_matches(rules, "ns", adapters, header_name)) == _wire(rules)


def test_r_exp_5_edge_77_only_model_routing_matches_are_copied() -> None:
    rules = _rules(
        [_match("/ns/svc")],
        [_match(None, HEADER)],
        [_match("/custom", "X-Custom"), _match("/v1", HEADER)],
    )

    expanded = expand_lora_adapter_matches(rules, "ns", ["a"], HEADER)

    assert _wire(expanded[:1]) == _wire(rules[:1])
    assert _match_summary(expanded[1]) == [(None, "publishers/ns/models/m"), (None, "publishers/ns/models/a")]
    assert _match_summary(expanded[2]) == [
        ("/custom", None),
        ("/v1", "publishers/ns/models/m"),
        ("/v1", "publishers/ns/models/a"),
    ]


def test_r_exp_5_every_model_header_entry_gets_the_adapter() -> None:
    match = HTTPRouteMatch.from_wire(
        {
            "headers": [
                {"name": HEADER, "value": "x"},
                {"name": "other", "value": "keep"},
                {"name": HEADER, "value": "y"},
            ]
        }
    )

    expanded = expand_lora_adapter_matches(_rules([match]), "ns", ["a"], HEADER)

    assert [h.value for h in (expanded[0].matches or [])[1].headers or []] == [
        "publishers/ns/models/a",
        "keep",
        "publishers/ns/models/a",
    ]


# --- R-EXP-6 -----------------------------------------------------------------------------------------


def test_r_exp_6_edge_76_strip() -> None:
    rules = _rules(
        [_match("/v1", HEADER), _match("/v1/", HEADER)],
        [_match("/ns/svc")],
        [_match("/ns/svc/v1"), _match("/v1", HEADER)],
        [_match("/custom", "X-Custom")],
    )

    stripped = strip_model_based_routing_rules(rules, HEADER)

    assert _wire(stripped) == _wire(
        _rules([_match("/ns/svc")], [_match("/ns/svc/v1")], [_match("/custom", "X-Custom")])
    )
    assert len(rules) == 4


def test_r_exp_6_edge_76_empty_header_name_keeps_rules() -> None:
    rules = _rules([_match("/v1", HEADER)], [])

    assert _wire(strip_model_based_routing_rules(rules, "")) == _wire(rules)
    assert strip_model_based_routing_rules(None, "") is None


def test_r_exp_6_q12_edge_83_rule_without_matches_is_dropped() -> None:
    rules = [HTTPRouteRule(backend_refs=None), HTTPRouteRule(matches=[_match("/ns/svc")])]

    assert _wire(strip_model_based_routing_rules(rules, HEADER)) == _wire(
        [HTTPRouteRule(matches=[_match("/ns/svc")])]
    )


@pytest.mark.parametrize(
    "rules", [None, [], _rules([_match("/v1", HEADER)])], ids=["absent", "empty", "only-model-routing"]
)
def test_r_exp_6_nothing_left_is_none(rules: list[HTTPRouteRule] | None) -> None:
    assert strip_model_based_routing_rules(rules, HEADER) is None


# --- R-EXP-1 / R-EXP-2 -------------------------------------------------------------------------------


def test_r_exp_1_metadata() -> None:
    route = expected_http_route(_svc({"route": {}}), CONFIG, model_routing_enabled=True, current_route=None)

    assert route.to_wire()["metadata"] == {
        "name": "svc-kserve-route",
        "namespace": "ns",
        "labels": {
            "app.kubernetes.io/component": "llminferenceservice-router",
            "app.kubernetes.io/name": "svc",
            "app.kubernetes.io/part-of": "llminferenceservice",
        },
        "ownerReferences": [
            {
                "apiVersion": "serving.kserve.io/v1alpha2",
                "kind": "LLMInferenceService",
                "name": "svc",
                "uid": "uid-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert route.api_version == "gateway.networking.k8s.io/v1"
    assert route.kind == "HTTPRoute"


def test_r_exp_1_long_name_is_shortened() -> None:
    svc = LLMInferenceService.from_wire(
        {
            "metadata": {
                "name": "facebook-opt-125m-single-simulated-with-a-very-long-name-x",
                "namespace": "ns",
            }
        }
    )

    assert naming.route_name(svc.name) == "facebook-opt-125m-f72b7401af87bbe17e98c81391d543ec-kserve-route"


@pytest.mark.parametrize(
    "router",
    [None, {"route": {}}, {"route": {"http": {"refs": [{"name": "my-custom-route"}]}}}],
    ids=["edge-64-no-router", "route-without-http", "edge-63-route-refs"],
)
def test_r_exp_2_no_route_spec_gives_an_empty_spec(router: dict[str, Any] | None) -> None:
    route = expected_http_route(_svc(router), CONFIG, model_routing_enabled=True, current_route=None)

    assert route.to_wire()["spec"] == {}
    assert route.name == "svc-kserve-route"


def _pool_backend(group: str = V1) -> dict[str, Any]:
    return {"group": group, "kind": "InferencePool", "name": "svc-inference-pool", "port": 8000}


def _user_spec() -> dict[str, Any]:
    return {
        "parentRefs": [{"name": "gw"}],
        "hostnames": ["a.example.com"],
        "rules": [
            {
                "matches": [
                    {"path": {"type": "Exact", "value": "/v1"}, "headers": [{"name": HEADER, "value": "m"}]}
                ],
                "backendRefs": [_pool_backend()],
                "timeouts": {"request": "0s"},
            },
            {
                "matches": [{"path": {"type": "PathPrefix", "value": "/ns/svc"}}],
                "backendRefs": [_pool_backend()],
            },
        ],
    }


def test_r_exp_2_spec_is_a_deep_copy() -> None:
    svc = _svc({"route": {"http": {"spec": _user_spec()}}})

    route = expected_http_route(svc, CONFIG, model_routing_enabled=True, current_route=None)
    route.spec.rules[0].matches = None  # type: ignore[index]

    assert route.spec.hostnames == ["a.example.com"]
    assert svc.spec.router.route.http.spec.rules[0].matches is not None  # type: ignore[union-attr,index]


@pytest.mark.parametrize(
    ("enabled", "paths"),
    [(True, ["/v1", "/ns/svc"]), (False, ["/ns/svc"])],
    ids=["r-exp-5-enabled-keeps", "r-exp-6-disabled-strips"],
)
def test_r_exp_5_6_model_routing_applied_to_the_spec(enabled: bool, paths: list[str]) -> None:
    svc = _svc({"route": {"http": {"spec": _user_spec()}}})

    route = expected_http_route(svc, CONFIG, model_routing_enabled=enabled, current_route=None)

    assert [m.path.value for r in route.spec.rules or [] for m in r.matches or [] if m.path] == paths
    assert route.to_wire()["spec"]["rules"][-1]["backendRefs"] == [_pool_backend()]


def test_r_exp_5_lora_expansion_needs_lora_and_enabled() -> None:
    adapters = {"lora": {"adapters": [{"name": "a"}, {}, {"name": "b"}]}}
    svc = _svc({"route": {"http": {"spec": _user_spec()}}}, model={"name": "m", **adapters})

    enabled = expected_http_route(svc, CONFIG, model_routing_enabled=True, current_route=None)
    disabled = expected_http_route(svc, CONFIG, model_routing_enabled=False, current_route=None)

    values = [h.value for m in (enabled.spec.rules or [])[0].matches or [] for h in m.headers or []]
    assert values == ["m", "publishers/ns/models/a", "publishers/ns/models/b"]
    assert [len(r.matches or []) for r in disabled.spec.rules or []] == [1]


# --- R-EXP-7 via expected_http_route -----------------------------------------------------------------


def _live(
    annotations: dict[str, str] | None = None, status: dict[str, Any] | None = None, group: str = V1ALPHA2
) -> HTTPRoute:
    return HTTPRoute.from_wire(
        {
            "metadata": {"name": "svc-kserve-route", "namespace": "ns", "annotations": annotations},
            "spec": {"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [_pool_backend(group)]}]},
            "status": status,
        }
    )


def _invalid_kind_status() -> dict[str, Any]:
    conditions = [
        {"type": "Accepted", "status": "True", "reason": "Accepted"},
        {
            "type": "ResolvedRefs",
            "status": "False",
            "reason": "InvalidKind",
            "message": "Group is invalid: inference.networking.x-k8s.io",
        },
    ]
    return {"parents": [{"parentRef": {"name": "gw"}, "controllerName": "c", "conditions": conditions}]}


@pytest.mark.parametrize(
    ("current", "group", "annotations"),
    [
        (None, V1ALPHA2, None),
        (_live(), V1ALPHA2, None),
        (_live(annotations={MIGRATED: "v1"}), V1, {MIGRATED: "v1"}),
        (_live(status=_invalid_kind_status()), V1, {MIGRATED: "v1"}),
        (_live(annotations={MIGRATED: "v1"}, status=_invalid_kind_status(), group=V1), V1, {MIGRATED: "v1"}),
    ],
    ids=[
        "edge-56-fresh-route-starts-on-v1alpha2",
        "live-route-without-signal-stays",
        "edge-58-third-party-annotation-locks-v1",
        "edge-59-invalid-kind-switches-to-v1",
        "edge-59-lock-holds-on-later-passes",
    ],
)
def test_r_exp_7_migration_of_default_pool_backends(
    current: HTTPRoute | None, group: str, annotations: dict[str, str] | None
) -> None:
    svc = _svc({"route": {"http": {"spec": _user_spec()}}, "scheduler": {}})

    route = expected_http_route(svc, CONFIG, model_routing_enabled=True, current_route=current)

    assert [b.group for r in route.spec.rules or [] for b in r.backend_refs or []] == [group, group]
    assert route.metadata.annotations == annotations


@pytest.mark.parametrize(
    "scheduler",
    [None, {"pool": {"ref": {"name": "svc-inference-pool"}}}],
    ids=["no-scheduler", "external-pool-ref"],
)
def test_r_exp_7_not_applicable_keeps_groups(scheduler: dict[str, Any] | None) -> None:
    svc = _svc({"route": {"http": {"spec": _user_spec()}}, "scheduler": scheduler})

    route = expected_http_route(
        svc, CONFIG, model_routing_enabled=True, current_route=_live(annotations={MIGRATED: "v1"})
    )

    assert route.to_wire()["spec"]["rules"][1]["backendRefs"] == [_pool_backend(V1)]
    assert route.metadata.annotations is None


def test_r_exp_7_q32_scheduler_without_template_still_migrates() -> None:
    svc = _svc({"route": {"http": {"spec": _user_spec()}}, "scheduler": {"pool": {"spec": {}}}})

    route = expected_http_route(svc, CONFIG, model_routing_enabled=True, current_route=None)

    assert route.to_wire()["spec"]["rules"][1]["backendRefs"] == [_pool_backend(V1ALPHA2)]


def test_r_exp_7_applies_without_route_spec() -> None:
    route = expected_http_route(
        _svc({"scheduler": {}}),
        CONFIG,
        model_routing_enabled=True,
        current_route=_live(annotations={MIGRATED: "v1"}),
    )

    assert route.metadata.annotations == {MIGRATED: "v1"}
    assert route.to_wire()["spec"] == {}


def test_r_exp_11_svc_is_not_mutated() -> None:
    svc = _svc(
        {"route": {"http": {"spec": _user_spec()}}, "scheduler": {}},
        model={"lora": {"adapters": [{"name": "a"}]}},
    )
    before = svc.to_wire()

    expected_http_route(
        svc, CONFIG, model_routing_enabled=True, current_route=_live(annotations={MIGRATED: "v1"})
    )
    expected_http_route(svc, CONFIG, model_routing_enabled=False, current_route=None)

    assert svc.to_wire() == before


# --- Edge case 74: presets + model-based routing -----------------------------------------------------


def _preset_svc(**spec: Any) -> LLMInferenceService:
    svc = _svc({"route": {}, "gateway": {}, "scheduler": {}}, model={"name": "facebook/opt-125m"}, **spec)
    return presets.apply_router_presets(svc, CONFIG)


def _header_matches(route: HTTPRoute) -> list[str]:
    return [
        h.value
        for r in route.spec.rules or []
        for m in r.matches or []
        for h in m.headers or []
        if h.name == HEADER
    ]


def test_edge_74_enabled_keeps_model_header_matches() -> None:
    svc = _preset_svc(annotations={MBR: "true"})
    enabled = is_model_based_routing_enabled(svc, CONFIG, [])

    route = expected_http_route(svc, CONFIG, model_routing_enabled=enabled, current_route=None)

    assert enabled
    assert _header_matches(route) == ["publishers/ns/models/facebook/opt-125m"] * 9


def test_edge_74_switching_to_disabled_removes_them_from_the_live_route() -> None:
    svc = _preset_svc(annotations={MBR: "true"})
    disabled_config = RouterConfig(model_based_routing_mode=ModelRoutingMode.DISABLED)
    live = derivative.http_route_with_defaults(
        expected_http_route(svc, CONFIG, model_routing_enabled=True, current_route=None)
    ).to_wire()

    enabled = is_model_based_routing_enabled(svc, disabled_config, [])
    route = expected_http_route(svc, disabled_config, model_routing_enabled=enabled, current_route=None)
    expected = derivative.http_route_with_defaults(route).to_wire()

    assert _header_matches(route) == []
    assert [r.name for r in route.spec.rules or []] == [
        "v1-completions-path",
        "v1-chat-completions-path",
        "v1-responses-path",
        "v1-messages-path",
        "v1-completions-publisher-path",
        "v1-chat-completions-publisher-path",
        "v1-responses-publisher-path",
        "v1-messages-publisher-path",
        "v1-publisher-path-catch-all",
        "v1-catch-all-path",
    ]
    assert not derivative.semantically_equal(expected, live)
