"""The expected managed HTTPRoute (spec 3.4, Go: ``expectedHTTPRoute``) and model-based routing.

The managed route is built on every pass, even when it is only going to be deleted (its name and
namespace are what the deletion needs). Its spec is the merged ``route.http.spec``; model-based routing
then either expands the model-header matches for each LoRA adapter or strips them, and finally the default
pool backendRefs get their InferencePool API group (:mod:`router_core.httproute.migration`). Order: R-EXP-11.
"""

from __future__ import annotations

from router_core import naming
from router_core.httproute import migration
from router_core.models.gateway_api import Gateway, HTTPRoute, HTTPRouteMatch, HTTPRouteRule
from router_core.models.kube import ObjectMeta
from router_core.models.llmisvc import MODEL_BASED_ROUTING_ANNOTATION, LLMInferenceService
from router_core.urls.discovery import is_model_routing_match
from router_core.world.config import ModelRoutingMode, RouterConfig

ENABLED_VALUE = "true"
GATEWAY_OPT_OUT_VALUE = "false"


def is_model_based_routing_enabled(
    svc: LLMInferenceService, config: RouterConfig, referenced_gateways: list[Gateway] | None
) -> bool:
    """R-EXP-3: whether the managed route keeps (and expands) its model-header matches.

    ``referenced_gateways`` is the R-EXP-4 collection made by the caller; ``None`` means that collection
    failed, which KServe treats as "enabled". The collection is empty for a service without
    ``gateway.refs``, so such a service is never opted out by a gateway annotation (quirk Q11).
    """
    if not config.model_based_routing_header_name:
        return False
    if (svc.spec.annotations or {}).get(MODEL_BASED_ROUTING_ANNOTATION) != ENABLED_VALUE:
        return False
    if config.model_based_routing_mode is ModelRoutingMode.DISABLED:
        return False
    if config.model_based_routing_mode is ModelRoutingMode.FORCED or referenced_gateways is None:
        return True
    return not any(_is_opted_out(gateway) for gateway in referenced_gateways)


def _is_opted_out(gateway: Gateway) -> bool:
    return (gateway.metadata.annotations or {}).get(MODEL_BASED_ROUTING_ANNOTATION) == GATEWAY_OPT_OUT_VALUE


def expand_lora_adapter_matches(
    rules: list[HTTPRouteRule], namespace: str, adapters: list[str], header_name: str
) -> list[HTTPRouteRule]:
    """R-EXP-5: after each rule's own matches, one copy of every model-header match per adapter.

    Copies are grouped by original match, then by adapter (``[m0, m1]`` with adapters ``[a, b]`` gives
    ``[m0, m1, m0@a, m0@b, m1@a, m1@b]``); in a copy every header named ``header_name`` carries
    ``publishers/<namespace>/models/<adapter>``. Matches within a rule are OR'd, so adapter requests reach
    the same backend as the base model.
    """
    result = [rule.model_copy(deep=True) for rule in rules]
    if not header_name or not adapters:
        return result
    for rule in result:
        copies = [
            _with_model_header(match, header_name, naming.publisher_model(namespace, adapter))
            for match in rule.matches or []
            if is_model_routing_match(match, header_name)
            for adapter in adapters
        ]
        if copies:
            rule.matches = [*(rule.matches or []), *copies]
    return result


def _with_model_header(match: HTTPRouteMatch, header_name: str, value: str) -> HTTPRouteMatch:
    copy = match.model_copy(deep=True)
    for header in copy.headers or []:
        if header.name == header_name:
            header.value = value
    return copy


def strip_model_based_routing_rules(
    rules: list[HTTPRouteRule] | None, header_name: str
) -> list[HTTPRouteRule] | None:
    """R-EXP-6: drop the model-header matches, and every rule left without a match.

    A rule that had no matches at all is dropped too (quirk Q12), although the API server would have
    given it a catch-all ``PathPrefix /`` match. With an empty header name the rules are kept as they
    are. When nothing remains the result is ``None`` (the list is omitted, as Go's nil slice).
    """
    if not header_name:
        return None if rules is None else [rule.model_copy(deep=True) for rule in rules]
    kept_rules: list[HTTPRouteRule] = []
    for rule in rules or []:
        kept = [m for m in rule.matches or [] if not is_model_routing_match(m, header_name)]
        if kept:
            kept_rules.append(
                rule.model_copy(deep=True, update={"matches": [m.model_copy(deep=True) for m in kept]})
            )
    return kept_rules or None


def managed_route_name(svc: LLMInferenceService) -> str:
    """R-EXP-1: ``<name>-kserve-route`` (shortened by ChildName past 63 characters)."""
    return naming.child_name(svc.name, naming.ROUTE_SUFFIX)


def expected_http_route(
    svc: LLMInferenceService,
    config: RouterConfig,
    *,
    model_routing_enabled: bool,
    current_route: HTTPRoute | None,
    installed_pool_groups: frozenset[str] | None = None,
) -> HTTPRoute:
    """The managed HTTPRoute the service asks for (R-EXP-1, 2, 5/6, 7, 11), before server defaults.

    ``model_routing_enabled`` is :func:`is_model_based_routing_enabled` (only consulted when the service has
    a route spec); ``current_route`` is the live managed route, ``None`` when absent or unreadable;
    ``installed_pool_groups`` the InferencePool API groups served (``None``: both).
    """
    route = HTTPRoute(
        metadata=ObjectMeta(
            name=managed_route_name(svc),
            namespace=svc.namespace,
            labels=naming.router_labels(svc.name),
            owner_references=[svc.controller_reference()],
        )
    )
    http = svc.route_settings()
    if http is not None and http.spec is not None:
        route.spec = http.spec.model_copy(deep=True)
        route.spec.rules = _apply_model_routing(svc, config, route.spec.rules, model_routing_enabled)
    if not _is_migration_applicable(svc):
        return route
    return migration.apply_pool_group(
        route, svc, migration.should_use_v1(current_route, installed_pool_groups)
    )


def _apply_model_routing(
    svc: LLMInferenceService, config: RouterConfig, rules: list[HTTPRouteRule] | None, enabled: bool
) -> list[HTTPRouteRule] | None:
    header = config.model_based_routing_header_name
    if not enabled:
        return strip_model_based_routing_rules(rules, header)
    model = svc.spec.model
    if rules is None or model is None or model.lora is None:
        return rules
    # KServe skips only adapters whose name is unset; an empty name is skipped here as well (it would
    # produce the header value "publishers/<ns>/models/", which names no model).
    return expand_lora_adapter_matches(rules, svc.namespace, svc.lora_adapter_names(), header)


def _is_migration_applicable(svc: LLMInferenceService) -> bool:
    """R-EXP-7 applies to a scheduler with a managed pool; a template is not required (quirk Q32)."""
    return svc.scheduler() is not None and not svc.pool_has_ref()
