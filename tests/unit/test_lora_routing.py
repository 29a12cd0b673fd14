"""The LoRA model-routing strategy of KServe #6174 (``router_lora_strategy.go``; cases ported from
``router_lora_strategy_test.go``, ``config_test.go`` and the envtest ``lora_routing_strategy_test.go``), and
decision P13's per-rule match limit."""

from __future__ import annotations

import re
from typing import Any

import pytest

from llmisvc_core.httproute.lora_routing import (
    STRATEGY_ANNOTATION,
    LoRARoutingPreconditionError,
    apply_lora_model_routing,
    apply_regex_matches,
    regex_header_value,
)
from llmisvc_core.models.gateway_api import HTTPRouteMatch, HTTPRouteRule
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.config import ConfigError, Environment, RouterConfig, load_router_config
from tests import builders as b
from tests.builders import plans
from tests.unit.test_config_merge import PRESETS, _world

HEADER = "X-Gateway-Model-Name"
BASE = "publishers/ns/models/base-model"
PATTERN = "^publishers/ns/models/(base-model|adapter-a|adapter-b)$"


def _match(value: str = BASE, *, path: str | None = "/v1/completions", name: str = HEADER, **h: Any) -> Any:
    wire: dict[str, Any] = {"headers": [{"name": name, "value": value, **h}]}
    if path is not None:
        wire["path"] = {"type": "Exact", "value": path}
    return HTTPRouteMatch.from_wire(wire)


def _rule(*matches: HTTPRouteMatch, name: str | None = None) -> HTTPRouteRule:
    return HTTPRouteRule(name=name, matches=list(matches))


def _svc(adapters: list[str | None] | None = None, *, plain: bool = False, **annotations: str) -> Any:
    """A service with the adapters ``[adapter-b, adapter-a]`` unless ``adapters`` (or ``plain``: no LoRA)."""
    if adapters is None and not plain:
        adapters = ["adapter-b", "adapter-a"]
    model: dict[str, Any] = {"name": "base-model"}
    if adapters is not None:
        model["lora"] = {"adapters": [{"name": a} if a is not None else {} for a in adapters]}
    spec: dict[str, Any] = {"model": model}
    if annotations:
        spec["annotations"] = {STRATEGY_ANNOTATION: annotations["strategy"]}
    return LLMInferenceService.from_wire({"metadata": {"name": "svc", "namespace": "ns"}, "spec": spec})


def _headers(rules: list[HTTPRouteRule]) -> list[tuple[str | None, str]]:
    return [(h.type, h.value) for r in rules for m in r.matches or [] for h in m.headers or []]


# --- loraRegexHeaderValue ------------------------------------------------------------------------------


def test_lora_regex_6174_pattern_is_sorted_deduplicated_and_anchored() -> None:
    """#6174 ``TestLoraRegexHeaderValue``: sorted, de-duplicated alternatives, the base model once."""
    assert regex_header_value("ns", "base", ["b-adapter", "a-adapter"]) == (
        "^publishers/ns/models/(base|a-adapter|b-adapter)$"
    )
    assert regex_header_value("ns", "base", ["a", "a", "base"]) == "^publishers/ns/models/(base|a)$"


def test_lora_regex_6174_metacharacters_match_literally() -> None:
    """#6174: Go's QuoteMeta escaping; a dot matches only a dot, ``|`` in a name never splits it."""
    names = ["a|b", "c(d)", "e[f]", "g{h}", "i*j?k", "l^m$n", "o\\p"]
    compiled = re.compile(regex_header_value("ns.prod", "org/base.v1+fp16", names))
    for name in ["org/base.v1+fp16", *names]:
        assert compiled.fullmatch(f"publishers/ns.prod/models/{name}")
    for miss in ["publishers/nsXprod/models/org/base.v1+fp16", "publishers/ns.prod/models/a"]:
        assert not compiled.search(miss)
    # Only RE2's metacharacters are escaped, as Go does: '-' and '/' stay as they are.
    assert regex_header_value("my-ns", "m", ["x-y"]) == "^publishers/my-ns/models/(m|x-y)$"


@pytest.mark.parametrize("code", range(0x20, 0x7F))
def test_lora_regex_6174_every_printable_ascii_adapter_matches_itself_only(code: int) -> None:
    """#6174 ``TestLoraRegexEscapesEveryPrintableASCII``."""
    name = f"a{chr(code)}z"
    compiled = re.compile(regex_header_value("ns", "base", [name]))
    assert compiled.search(f"publishers/ns/models/{name}")
    assert not compiled.search(f"publishers/ns/models/{name}x")
    if name != "abz":
        assert not compiled.search("publishers/ns/models/abz")


# --- applyLoRARegexMatches -------------------------------------------------------------------------------


def test_lora_regex_6174_rewrites_every_recognised_match_in_place() -> None:
    """#6174 ``TestApplyLoRARegexMatches``: no copies; path-only rules and other headers untouched; the
    author's spelling of the header name kept; an unset type counts as Exact."""
    rules = [
        _rule(_match(), _match(path="/v1/completions/", name="x-gateway-model-name")),
        HTTPRouteRule.from_wire({"matches": [{"path": {"type": "PathPrefix", "value": "/ns/svc"}}]}),
        _rule(_match(path=None, type="Exact")),
        _rule(_match("unrelated", name="X-Custom", type="Exact")),
    ]
    out = apply_regex_matches(rules, "ns", "base-model", ["adapter-b", "adapter-a"], HEADER)
    assert _headers(out) == [
        ("RegularExpression", PATTERN),
        ("RegularExpression", PATTERN),
        ("RegularExpression", PATTERN),
        ("Exact", "unrelated"),
    ]
    assert (out[0].matches or [])[1].headers[0].name == "x-gateway-model-name"  # type: ignore[index]
    assert out[1].to_wire() == rules[1].to_wire()
    assert _headers(rules)[0] == (None, BASE)


@pytest.mark.parametrize(
    ("match", "detail"),
    [
        (
            _match("publishers/ns/models/other"),
            "has an unrecognized X-Gateway-Model-Name match "
            '(type Exact, value "publishers/ns/models/other"); '
            'expected an Exact match on the base model identity "publishers/ns/models/base-model"',
        ),
        (
            _match("^publishers/ns/models/.*$", name="x-gateway-model-name", type="RegularExpression"),
            "has an unrecognized x-gateway-model-name match (type RegularExpression, "
            'value "^publishers/ns/models/.*$"); expected an Exact match on the base model identity '
            '"publishers/ns/models/base-model"',
        ),
        (
            HTTPRouteMatch.from_wire(
                {
                    "headers": [
                        {"name": HEADER, "value": BASE},
                        {"name": "x-gateway-model-name", "value": BASE},
                    ]
                }
            ),
            "carries multiple case-equivalent X-Gateway-Model-Name headers; "
            "Gateway API only evaluates the first",
        ),
    ],
    ids=["other-model", "handcrafted-regex", "case-equivalent-duplicates"],
)
def test_lora_regex_6174_unrecognised_model_match_fails_without_partial_rewrite(
    match: HTTPRouteMatch, detail: str
) -> None:
    """#6174: a model-header match of another shape fails the whole rewrite, with KServe's message."""
    rules = [_rule(_match(), match, name="v1-model-routing")]
    with pytest.raises(LoRARoutingPreconditionError) as caught:
        apply_regex_matches(rules, "ns", "base-model", ["adapter-a"], HEADER)
    assert str(caught.value) == (
        f'precondition not met: LoRA routing strategy "regex" cannot be applied: rule "v1-model-routing" '
        f"match 1 {detail}"
    )
    assert _headers(rules)[0] == (None, BASE)


@pytest.mark.parametrize(
    ("adapters", "header"), [([], HEADER), (["a"], "")], ids=["no-adapters", "no-header"]
)
def test_lora_regex_6174_no_op(adapters: list[str], header: str) -> None:
    rules = [_rule(_match())]
    assert _headers(apply_regex_matches(rules, "ns", "base-model", adapters, header)) == [(None, BASE)]


# --- applyLoRAModelRouting: the strategy gate -------------------------------------------------------------


def _gate(strategy: str, svc: LLMInferenceService, header: str = HEADER) -> list[HTTPRouteRule]:
    config = RouterConfig(lora_model_routing_strategy=strategy, model_based_routing_header_name=header)
    return apply_lora_model_routing([_rule(_match())], svc, config)


@pytest.mark.parametrize(
    ("strategy", "svc", "header", "expected"),
    [
        ("regex", _svc(), HEADER, [("RegularExpression", PATTERN)]),
        (
            "exact",
            _svc(),
            HEADER,
            [(None, BASE), (None, BASE[:-10] + "adapter-a"), (None, BASE[:-10] + "adapter-b")],
        ),
        (
            "",
            _svc(),
            HEADER,
            [(None, BASE), (None, BASE[:-10] + "adapter-a"), (None, BASE[:-10] + "adapter-b")],
        ),
        ("bogus", _svc(plain=True), HEADER, [(None, BASE)]),
        ("bogus", _svc([None, ""]), HEADER, [(None, BASE)]),
        ("regex", _svc(), "", [(None, BASE)]),
        ("exact", _svc(strategy="regex"), HEADER, [("RegularExpression", PATTERN)]),
        ("exact", _svc(strategy=" Regex "), HEADER, [("RegularExpression", PATTERN)]),
        (
            "regex",
            _svc(strategy="exact"),
            HEADER,
            [(None, BASE), (None, BASE[:-10] + "adapter-a"), (None, BASE[:-10] + "adapter-b")],
        ),
        ("regex", _svc(strategy=""), HEADER, [("RegularExpression", PATTERN)]),
    ],
    ids=[
        "regex-collapses",
        "exact-copies-in-name-order",
        "zero-value-is-exact",
        "unsupported-ignored-without-lora",
        "unsupported-ignored-without-named-adapter",
        "unconfigured-header-disables-expansion",
        "annotation-overrides-cluster",
        "annotation-trimmed-case-insensitive",
        "annotation-pins-exact",
        "empty-annotation-defers",
    ],
)
def test_lora_strategy_6174_gate(strategy: str, svc: LLMInferenceService, header: str, expected: Any) -> None:
    """#6174 ``TestApplyLoRAModelRouting``: which strategy runs, and that it is read only when there is
    an adapter to route and a model-routing match to route it through."""
    assert _headers(_gate(strategy, svc, header)) == expected


def test_lora_strategy_6174_unsupported_strategy_is_ignored_on_a_path_only_route() -> None:
    rules = [HTTPRouteRule.from_wire({"matches": [{"path": {"type": "PathPrefix", "value": "/ns/svc"}}]})]
    out = apply_lora_model_routing(rules, _svc(), RouterConfig(lora_model_routing_strategy="bogus"))
    assert [r.to_wire() for r in out] == [r.to_wire() for r in rules]


@pytest.mark.parametrize(
    ("strategy", "svc", "source"),
    [
        ("exact", _svc(strategy="Bogus"), f"annotation {STRATEGY_ANNOTATION}"),
        ("bogus", _svc(), "the inferenceservice-config ConfigMap"),
    ],
    ids=["annotation", "configmap"],
)
def test_lora_strategy_6174_unsupported_value_names_where_it_came_from(
    strategy: str, svc: LLMInferenceService, source: str
) -> None:
    with pytest.raises(LoRARoutingPreconditionError) as caught:
        _gate(strategy, svc)
    assert str(caught.value) == (
        f'precondition not met: unsupported loraModelRoutingStrategy "bogus" from {source}: '
        'supported values are "exact" and "regex"'
    )


# --- the ingress config (NewIngressConfig) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "exact"),
        ("", "exact"),
        ("exact", "exact"),
        ("Exact", "exact"),
        ("REGEX", "regex"),
        (" RegEx ", "regex"),
    ],
)
def test_lora_strategy_6174_ingress_key_is_defaulted_and_lower_cased(
    value: str | None, expected: str
) -> None:
    """#6174 ``TestLoadConfigLoRAModelRoutingStrategy``."""
    ingress = (
        '{"ingressGateway": "x"' + ("" if value is None else f', "loraModelRoutingStrategy": "{value}"') + "}"
    )
    config = load_router_config({"ingress": ingress}, Environment())
    assert config.lora_model_routing_strategy == expected


def test_lora_strategy_6174_unsupported_ingress_value_fails_the_config() -> None:
    ingress = '{"ingressGateway": "x", "loraModelRoutingStrategy": "Unsupported"}'
    with pytest.raises(ConfigError) as caught:
        load_router_config({"ingress": ingress}, Environment())
    assert str(caught.value) == (
        "failed to convert InferenceServiceConfigMap to IngressConfig: invalid ingress config - "
        'loraModelRoutingStrategy must be "exact" or "regex", got "Unsupported"'
    )


# --- one pass -------------------------------------------------------------------------------------------


def _adapters(n: int) -> list[dict[str, str]]:
    return [{"name": f"adapter-{i}"} for i in range(n)]


def _service(adapters: int, strategy: str | None = None, *, stopped: bool = False) -> dict[str, Any]:
    svc = b.service(
        router=PRESETS, model={"name": "base", "lora": {"adapters": _adapters(adapters)}}, stopped=stopped
    )
    if strategy is not None:
        svc["spec"]["annotations"] = {STRATEGY_ANNOTATION: strategy}
    return svc


def test_lora_strategy_6174_a_bypassed_annotation_is_routing_precondition_not_met_and_nothing_is_sent() -> (
    None
):
    """#6174 envtest "should treat an unsupported strategy that bypassed admission as a precondition
    failure, not a retry": HTTPRoutesReady False with reason RoutingPreconditionNotMet; no route write."""
    plan = plans.run(_service(1, "unsupported"), *_world())
    assert plans.applied(plan, "HTTPRoute") == []
    cond = plans.condition(plan, "HTTPRoutesReady")
    assert cond is not None and cond["status"] == "False"
    assert cond["reason"] == "RoutingPreconditionNotMet"
    assert cond["message"] == (
        "Failed to reconcile HTTPRoute: precondition not met: "
        'unsupported loraModelRoutingStrategy "unsupported" '
        f'from annotation {STRATEGY_ANNOTATION}: supported values are "exact" and "regex"'
    )
    assert plan.outcome.value == "failed"


def test_lora_strategy_6174_a_stopped_service_is_cleaned_up_whatever_its_strategy() -> None:
    """P6 kept: the managed route's deletion needs only its name, so a bad strategy never blocks a stop."""
    plan = plans.run(_service(1, "unsupported", stopped=True), *_world())
    cond = plans.condition(plan, "HTTPRoutesReady")
    assert cond is None or cond["reason"] != "RoutingPreconditionNotMet"


def test_lora_strategy_6174_regex_keeps_the_preset_route_at_its_size_past_the_per_rule_limit() -> None:
    """#6174: with regex, 100 adapters leave the 12-rule preset route at 19 matches, sent as one route."""
    (route,) = plans.applied(plans.run(_service(100, "regex"), *_world()), "HTTPRoute")
    rules = route["spec"]["rules"]
    assert sum(len(r["matches"]) for r in rules) == 19
    (model_routing,) = [r for r in rules if r["name"] == "v1-model-routing"]
    header = model_routing["matches"][0]["headers"][0]
    assert header["type"] == "RegularExpression"
    assert header["value"].startswith("^publishers/ns/models/(base|adapter-0|adapter-1|adapter-10|")


def test_p13_per_rule_match_limit_is_checked_before_sending() -> None:
    """Decision P13 extended to Gateway API's 64 matches per rule (``HTTPRouteRule.matches`` maxItems): with
    the exact strategy and the preset of aaac4e294, v1-model-routing has 8 + 8n matches, so 8 adapters
    (72) are refused by the API server; the route is not sent and the message names the rule and the
    regex strategy. Seven adapters (64) fit."""
    plan = plans.run(_service(8), *_world())
    assert plans.applied(plan, "HTTPRoute") == []
    cond = plans.condition(plan, "HTTPRoutesReady")
    assert cond is not None and cond["reason"] == "HTTPRouteReconcileError"
    assert cond["message"].startswith(
        "Failed to reconcile HTTPRoute: HTTPRoute ns/svc-kserve-route would have 72 matches in rule 4 "
        "(v1-model-routing), more than the 64 per rule Gateway API allows; "
    )
    assert f"annotation {STRATEGY_ANNOTATION}: regex" in cond["message"]
    plan = plans.run(_service(7), *_world())
    assert len(plans.applied(plan, "HTTPRoute")) == 1
