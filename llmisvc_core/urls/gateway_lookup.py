"""Finding the Gateways behind routes and services (spec 3.7.2, 3.7.4 and R-EXP-4).

These functions read through the pass's world; a missing object becomes the same error text KServe
produces from the API server's NotFound answer.
"""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.checks.references import referenced_routes
from llmisvc_core.gocompat import gofmt
from llmisvc_core.models.core_objects import Service
from llmisvc_core.models.gateway_api import Gateway, GatewayClass, HTTPRoute
from llmisvc_core.models.kube import GATEWAY, GATEWAYCLASS, SERVICE, not_found
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.urls.discovery import DiscoveryError, ResolvedGateway
from llmisvc_core.world.snapshot import PassWorld


def discover_gateways(world: PassWorld, route: HTTPRoute) -> list[ResolvedGateway]:
    """R-DISC-1: one resolved gateway per parentRef, every parentRef read as a Gateway (quirk Q27)."""
    resolved = []
    for parent in route.spec.parent_refs or []:
        namespace = parent.gateway_namespace(route.namespace)
        gateway = world.read(Gateway, GATEWAY, namespace, parent.name)
        if gateway is None:
            raise DiscoveryError(
                f"failed to get Gateway {namespace}/{parent.name} for route {route.namespace}/{route.name}: "
                + not_found(GATEWAY, parent.name)
            )
        class_name = gateway.spec.gateway_class_name
        gateway_class = world.read(GatewayClass, GATEWAYCLASS, "", class_name)
        if gateway_class is None:
            raise DiscoveryError(
                f"failed to get GatewayClass {gofmt.quote(class_name)} for gateway "
                f"{namespace}/{parent.name}: {not_found(GATEWAYCLASS, class_name)}"
            )
        resolved.append(ResolvedGateway(gateway=gateway, gateway_class=gateway_class, parent_ref=parent))
    return resolved


def find_backing_service(world: PassWorld, gateway: Gateway) -> Service | None:
    """R-SVC-1/2: the Service labelled for the gateway (first by name), else the one named like it."""
    labelled = world.list(Service, SERVICE, gateway.namespace, {naming.GATEWAY_NAME_LABEL: gateway.name})
    if labelled:
        return min(labelled, key=lambda s: s.name)
    return world.read(Service, SERVICE, gateway.namespace, gateway.name)


def backing_services(
    world: PassWorld, resolved: list[ResolvedGateway]
) -> dict[tuple[str, str], Service | None]:
    return {(r.gateway.namespace, r.gateway.name): find_backing_service(world, r.gateway) for r in resolved}


def collect_referenced_gateways(world: PassWorld, svc: LLMInferenceService) -> list[Gateway] | None:
    """R-EXP-4: the gateways of the referenced routes and of ``gateway.refs``; None if one is unreadable."""
    if not svc.gateway_has_refs():
        return []
    found: dict[tuple[str, str], Gateway] = {}
    for route in referenced_routes(world, svc):
        try:
            resolved = discover_gateways(world, route)
        except DiscoveryError:
            return None
        found.update({(r.gateway.namespace, r.gateway.name): r.gateway for r in resolved})
    router = svc.spec.router
    refs = router.gateway.refs if router is not None and router.gateway is not None else None
    for ref in refs or []:
        gateway = world.read(Gateway, GATEWAY, ref.namespace or svc.namespace, ref.name)
        if gateway is None:
            return None
        found[(gateway.namespace, gateway.name)] = gateway
    return list(found.values())
