"""Typed (pydantic) objects for the URL discovery and addressing rules (spec 3.7.3-3.7.8, cases 1-42, 84).

Defaults follow the preamble of spec section 5: route ``test-ns/route`` with one parentRef to
``test-ns/gw``, Gateway class ``istio``, an ``HTTP`` listener on port 80, no Services, URL scheme ``""``
and no model-routing header.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmisvc_core.models.core_objects import Service, ServicePort, ServiceSpec
from llmisvc_core.models.gateway_api import (
    Gateway,
    GatewayClass,
    GatewaySpec,
    GatewayStatus,
    GatewayStatusAddress,
    HTTPBackendRef,
    HTTPHeaderMatch,
    HTTPPathMatch,
    HTTPRoute,
    HTTPRouteMatch,
    HTTPRouteRule,
    HTTPRouteSpec,
    Listener,
    ParentReference,
)
from llmisvc_core.models.kube import GATEWAY_GROUP, ObjectMeta
from llmisvc_core.urls.discovery import DiscoveredURL, ResolvedGateway, discover_urls
from llmisvc_core.world.config import Environment, RouterConfig

HEADER = "X-Gateway-Model-Name"
POOL = "InferencePool"


def listener(
    name: str = "listener", protocol: str = "HTTP", port: int = 80, hostname: str | None = None
) -> Listener:
    return Listener(name=name, protocol=protocol, port=port, hostname=hostname)


def https(name: str = "listener", port: int = 443, hostname: str | None = None) -> Listener:
    return listener(name, "HTTPS", port, hostname)


def gateway(
    name: str = "gw",
    namespace: str = "test-ns",
    listeners: Sequence[Listener] | None = None,
    addresses: Sequence[str | tuple[str, str]] = (),
) -> Gateway:
    """``addresses`` items are values, or (type, value) pairs for typed addresses."""
    status_addresses = [
        GatewayStatusAddress(type=a[0], value=a[1]) if isinstance(a, tuple) else GatewayStatusAddress(value=a)
        for a in addresses
    ]
    return Gateway(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=GatewaySpec(
            gateway_class_name="istio", listeners=list(listeners) if listeners is not None else [listener()]
        ),
        status=GatewayStatus(addresses=status_addresses or None),
    )


def parent(
    name: str = "gw", namespace: str | None = "test-ns", section: str | None = None
) -> ParentReference:
    return ParentReference(
        group=GATEWAY_GROUP, kind="Gateway", name=name, namespace=namespace, section_name=section
    )


def match(
    path: str | None = None, *, type_: str | None = None, headers: Sequence[str] = ()
) -> HTTPRouteMatch:
    """A match on ``path`` (unset when None) and on the named headers (value irrelevant)."""
    return HTTPRouteMatch(
        path=HTTPPathMatch(type=type_, value=path) if path is not None else None,
        headers=[HTTPHeaderMatch(type="Exact", name=h, value="publishers/ns/models/m") for h in headers]
        or None,
    )


def rule(*matches: HTTPRouteMatch, kind: str | None = "Service") -> HTTPRouteRule:
    """A rule with one backend of ``kind`` (``None`` leaves the kind unset, i.e. Service)."""
    return HTTPRouteRule(
        matches=list(matches) or None, backend_refs=[HTTPBackendRef(kind=kind, name="backend")]
    )


def route(
    name: str = "route",
    namespace: str = "test-ns",
    parents: Sequence[ParentReference] | None = None,
    hostnames: Sequence[str] | None = None,
    rules: Sequence[HTTPRouteRule] | None = None,
) -> HTTPRoute:
    return HTTPRoute(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=HTTPRouteSpec(
            parent_refs=list(parents) if parents is not None else [parent()],
            hostnames=list(hostnames) if hostnames is not None else None,
            rules=list(rules) if rules is not None else None,
        ),
    )


def service(name: str, namespace: str, ports: Sequence[int] = ()) -> Service:
    return Service(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=ServiceSpec(ports=[ServicePort(port=p) for p in ports] or None),
    )


def resolve(http_route: HTTPRoute, gateways: Sequence[Gateway]) -> list[ResolvedGateway]:
    """What the reads of R-DISC-1 produce: the Gateway behind each parentRef, in parentRef order."""
    by_key = {(g.namespace, g.name): g for g in gateways}
    return [
        ResolvedGateway(
            gateway=by_key[(p.gateway_namespace(http_route.namespace), p.name)],
            gateway_class=GatewayClass(metadata=ObjectMeta(name="istio")),
            parent_ref=p,
        )
        for p in http_route.spec.parent_refs or []
    ]


def discover(
    http_route: HTTPRoute,
    gateways: Sequence[Gateway],
    services: Sequence[Service] = (),
    *,
    url_scheme: str = "",
    header: str = "",
    env: Environment | None = None,
) -> list[DiscoveredURL]:
    """Discovery for one route; ``services`` are backing Services keyed by the Gateway they serve."""
    resolved = resolve(http_route, gateways)
    backing = {(s.namespace, gw): s for s, gw in _backing_pairs(services, gateways)}
    config = RouterConfig(url_scheme=url_scheme, model_based_routing_header_name=header)
    return discover_urls(resolved, http_route, backing, config, env or Environment())


def urls(
    http_route: HTTPRoute,
    gateways: Sequence[Gateway],
    services: Sequence[Service] = (),
    *,
    url_scheme: str = "",
    header: str = "",
) -> list[str]:
    return [d.url for d in discover(http_route, gateways, services, url_scheme=url_scheme, header=header)]


def _backing_pairs(services: Sequence[Service], gateways: Sequence[Gateway]) -> list[tuple[Service, str]]:
    """A backing Service belongs to the Gateway whose namespace it shares (one per namespace in tests)."""
    pairs = []
    for svc in services:
        pairs += [(svc, g.name) for g in gateways if g.namespace == svc.namespace]
    return pairs
