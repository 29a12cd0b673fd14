"""The expected managed HTTPRoute (spec 3.4, Go: ``expectedHTTPRoute``).

The route step builds the managed route when the service has a route spec (a deletion needs only the
name, so a LoRA strategy that cannot be applied never blocks one). Its spec is the merged
``route.http.spec``; model-based routing
(:mod:`llmisvc_core.httproute.model_routing`) then either routes the LoRA adapters through the model-header
matches (by the strategy of :mod:`llmisvc_core.httproute.lora_routing`) or strips those matches, and
finally the default pool backendRefs get their InferencePool API group
(:mod:`llmisvc_core.httproute.migration`). Order: R-EXP-11.
"""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.httproute import lora_routing, migration
from llmisvc_core.httproute.model_routing import strip_model_based_routing_rules
from llmisvc_core.models.gateway_api import HTTPRoute, HTTPRouteRule
from llmisvc_core.models.kube import ObjectMeta
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.config import RouterConfig


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
            name=naming.route_name(svc.name),
            namespace=svc.namespace,
            labels=naming.router_labels(svc.name, svc.routing_group()),
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
    if rules is None:
        return rules
    # KServe #6174: the adapters are routed by the service's strategy (exact copies or one regex); raises
    # LoRARoutingPreconditionError when the strategy cannot be applied.
    return lora_routing.apply_lora_model_routing(rules, svc, config)


def _is_migration_applicable(svc: LLMInferenceService) -> bool:
    """R-EXP-7 applies to a scheduler with a managed pool; a template is not required (quirk Q32)."""
    return svc.scheduler() is not None and not svc.pool_has_ref()
