"""Reference validation (spec 3.2, Go: ``validateRouterReferences``): do the Gateways and HTTPRoutes that a
service names exist?

Missing references are a user's mistake, not a transient failure: the result names every missing object
so the condition message tells the user what to create or fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmisvc_core.models.gateway_api import HTTPRoute
from llmisvc_core.models.kube import GATEWAY, HTTPROUTE
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions
from llmisvc_core.world.snapshot import PassWorld

REFS_INVALID = "RefsInvalid"


@dataclass(frozen=True)
class InvalidReferences:
    """The first failing check: which condition it marks and the message (also the pass's error text)."""

    condition: str
    message: str


def validate_references(world: PassWorld, svc: LLMInferenceService) -> InvalidReferences | None:
    """Run R-VAL-1..6 in order; the first failing check ends validation."""
    checks = (
        (conditions.GATEWAYS_READY, _missing_gateway_refs),
        (conditions.HTTPROUTES_READY, _missing_route_refs),
        (conditions.HTTPROUTES_READY, _missing_managed_route_parents),
        (conditions.HTTPROUTES_READY, _invalid_referenced_route_targets),
    )
    for condition, check in checks:
        message = check(world, svc)
        if message is not None:
            return InvalidReferences(condition, message)
    return None


def apply_validation(
    conds: Conditions, world: PassWorld, svc: LLMInferenceService
) -> InvalidReferences | None:
    """Validate and write the outcome to the conditions (R-VAL-2/4 unset what passed, failures are False)."""
    invalid = validate_references(world, svc)
    if invalid is None or invalid.condition != conditions.GATEWAYS_READY:
        conds.unset(conditions.GATEWAYS_READY)
    if invalid is None:
        conds.unset(conditions.HTTPROUTES_READY)
    if invalid is not None:
        conds.mark_false(invalid.condition, REFS_INVALID, invalid.message)
    return invalid


def _missing_gateway_refs(world: PassWorld, svc: LLMInferenceService) -> str | None:
    if svc.spec.router is None or svc.spec.router.gateway is None:
        return None
    missing = []
    for ref in svc.spec.router.gateway.refs or []:
        namespace = ref.namespace or svc.namespace
        if world.get(GATEWAY, namespace, ref.name) is None:
            missing.append(f"Gateway {namespace}/{ref.name} does not exist")
    return "; ".join(missing) or None


def _missing_route_refs(world: PassWorld, svc: LLMInferenceService) -> str | None:
    http = svc.route_settings()
    if http is None:
        return None
    missing = [
        f"HTTPRoute {svc.namespace}/{ref.name} does not exist"
        for ref in http.refs or []
        if world.get(HTTPROUTE, svc.namespace, ref.name) is None
    ]
    return "; ".join(missing) or None


def _missing_managed_route_parents(world: PassWorld, svc: LLMInferenceService) -> str | None:
    http = svc.route_settings()
    if http is None or http.spec is None:
        return None
    missing = []
    for parent in http.spec.parent_refs or []:
        namespace = parent.gateway_namespace(svc.namespace)
        if world.get(GATEWAY, namespace, parent.name) is None:
            missing.append(f"Managed HTTPRoute references non-existent Gateway {namespace}/{parent.name}")
    return "; ".join(missing) or None


def _invalid_referenced_route_targets(world: PassWorld, svc: LLMInferenceService) -> str | None:
    problems = []
    for route in referenced_routes(world, svc):
        where = f"HTTPRoute {route.namespace}/{route.name}"
        if not route.spec.parent_refs:
            problems.append(f"{where} has no parent gateway references")
            continue
        for parent in route.spec.parent_refs:
            namespace = parent.gateway_namespace(route.namespace)
            if world.get(GATEWAY, namespace, parent.name) is None:
                problems.append(f"{where} references non-existent Gateway {namespace}/{parent.name}")
    if not problems:
        return None
    return "HTTPRoute target validation failed: " + "; ".join(problems)


def referenced_routes(world: PassWorld, svc: LLMInferenceService) -> list[HTTPRoute]:
    """The HTTPRoutes named in ``route.http.refs``, in refs order; missing ones are skipped (R-RT-3)."""
    http = svc.route_settings()
    if http is None:
        return []
    found = (world.read(HTTPRoute, HTTPROUTE, svc.namespace, ref.name) for ref in http.refs or [])
    return [route for route in found if route is not None]
