"""The managed HTTPRoute and the referenced routes (spec 3.6, Go: ``reconcileHTTPRoutes``)."""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.checks.references import referenced_routes
from llmisvc_core.httproute import collisions, lora_routing, managed, model_routing, routing_group
from llmisvc_core.models.gateway_api import HTTPRoute
from llmisvc_core.models.kube import HTTPROUTE, POOL_V1, POOL_V1_GROUP, POOL_V1ALPHA2, POOL_V1ALPHA2_GROUP
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.urls.discovery import ResolvedGateway
from llmisvc_core.urls.gateway_lookup import collect_referenced_gateways
from llmisvc_core.urls.status import RoutingError, update_routing_status
from llmisvc_core.world import derivative, writes
from llmisvc_core.world.conditions import Conditions
from llmisvc_core.world.config import Environment, RouterConfig
from llmisvc_core.world.snapshot import PassWorld, Wire


def build_expected_route(world: PassWorld, svc: LLMInferenceService, config: RouterConfig) -> HTTPRoute:
    """R-EXP-*: the managed route this pass wants, given the live one (for the migration decision)."""
    current = world.read(HTTPRoute, HTTPROUTE, svc.namespace, naming.route_name(svc.name))
    enabled = svc.http_has_spec() and model_routing.is_model_based_routing_enabled(
        svc, config, collect_referenced_gateways(world, svc)
    )
    groups = frozenset(
        group
        for type_, group in ((POOL_V1, POOL_V1_GROUP), (POOL_V1ALPHA2, POOL_V1ALPHA2_GROUP))
        if world.is_installed(type_)
    )
    return managed.expected_http_route(
        svc, config, model_routing_enabled=enabled, current_route=current, installed_pool_groups=groups
    )


#: Gateway API's CEL rule on HTTPRoute: at most 128 matches across all rules of a route.
MAX_ROUTE_MATCHES = 128
#: Gateway API's ``maxItems`` on ``HTTPRouteRule.matches``: at most 64 matches in one rule.
MAX_RULE_MATCHES = 64


def _check_match_limit(route: HTTPRoute) -> None:
    """A product decision beyond KServe (P13): a route the API server would refuse for its match count, in
    total or in one rule, is not sent; the step fails with a message saying why (with the exact LoRA
    strategy each adapter adds a copy of every model-routing match)."""
    rules = route.spec.rules or []
    count = sum(len(rule.matches or []) or 1 for rule in rules)
    if count > MAX_ROUTE_MATCHES:
        raise RoutingError(
            f"HTTPRoute {route.namespace}/{route.name} would have {count} matches across its rules, "
            f"more than the {MAX_ROUTE_MATCHES} Gateway API allows; each LoRA adapter adds a copy of every "
            "model-routing match: use fewer adapters or a route spec with fewer matches"
        )
    for index, rule in enumerate(rules):
        in_rule = len(rule.matches or [])
        if in_rule > MAX_RULE_MATCHES:
            named = f" ({rule.name})" if rule.name else ""
            raise RoutingError(
                f"HTTPRoute {route.namespace}/{route.name} would have {in_rule} matches in rule "
                f"{index}{named}, more than the {MAX_RULE_MATCHES} per rule Gateway API allows; each LoRA "
                "adapter adds a copy of every model-routing match: use fewer adapters, the regex LoRA "
                f"routing strategy (annotation {lora_routing.STRATEGY_ANNOTATION}: regex, or "
                "loraModelRoutingStrategy: regex in the ingress config) or a route spec with fewer matches"
            )


def reconcile_http_routes(
    conds: Conditions, world: PassWorld, svc: LLMInferenceService, config: RouterConfig, env: Environment
) -> list[ResolvedGateway]:
    """R-RT-1..7: delete, create or update the managed route, then write the routing status; with a
    route spec, the ``ModelNameCollision`` Warning when another service claims one of its model names."""
    # Deleting needs only the name: a LoRA strategy that cannot be applied never blocks a clean-up (P6).
    name = naming.route_name(svc.name)
    if svc.is_stopped() or svc.spec.router is None or svc.spec.router.route is None:
        routing_group.clear(conds, svc)
        resolved = update_routing_status(conds, world, svc, config, env, [])
        writes.delete(world, svc, HTTPROUTE, svc.namespace, name)
        return resolved
    group = svc.routing_group()
    membership = routing_group.membership(world, svc, group) if group is not None else None
    if membership is None:
        routing_group.clear(conds, svc)
    found = referenced_routes(world, svc)
    if svc.http_has_refs():
        writes.delete(world, svc, HTTPROUTE, svc.namespace, name)
    if svc.http_has_spec():
        # KServe checks before the route write, with or without model-based routing: the publisher
        # paths carry the model names either way.
        collisions.check(world, svc)
        expected = build_expected_route(world, svc, config)
        if membership is not None:
            routing_group.rewrite_rules(expected, svc, membership.matching)
        _check_match_limit(expected)
        try:
            stored = writes.reconcile(
                world, svc, HTTPROUTE, expected, defaults=_with_defaults, equal=derivative.http_route_equal
            )
        except writes.WriteError as err:
            raise writes.WriteError(
                f"failed to reconcile HTTPRoute {expected.namespace}/{expected.name}: {err}"
            ) from err
        found.append(HTTPRoute.model_validate(stored))
    if membership is not None:
        # KServe writes the group status after the route, so it describes the route as written.
        routing_group.apply_status(conds, svc, membership)
    return update_routing_status(conds, world, svc, config, env, found)


def _with_defaults(route: Wire) -> Wire:
    return derivative.http_route_with_defaults(HTTPRoute.model_validate(route)).to_wire()
