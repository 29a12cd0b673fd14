"""URL discovery for a route (spec 3.7.3): the URLs a route is reachable on through its Gateways.

The caller has already read the Gateways, GatewayClasses (3.7.2) and each Gateway's backing Service
(3.7.4); this module only decides. For every resolved Gateway it picks the listeners, derives the
hosts (route hostnames, else the listener hostname, else the Gateway's addresses), the ports and the
base paths, and renders the URLs exactly as KServe's Go code does. Error texts are KServe's, because
they end up in events and in the pass's error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from llmisvc_core.errors import StepFailedError
from llmisvc_core.gocompat import gourl
from llmisvc_core.gocompat.gofmt import quote
from llmisvc_core.httproute.model_routing import is_model_routing_match
from llmisvc_core.models.core_objects import Service
from llmisvc_core.models.gateway_api import (
    Gateway,
    GatewayClass,
    HTTPRoute,
    HTTPRouteMatch,
    HTTPRouteRule,
    Listener,
    ParentReference,
)
from llmisvc_core.models.kube import GATEWAY_GROUP
from llmisvc_core.models.llmisvc import ObjectReference
from llmisvc_core.world.config import Environment, RouterConfig

_SCHEMES = {"HTTP": "http", "HTTPS": "https", "TLS": "https"}
_DEFAULT_PORTS = {"http": 80, "https": 443}
_DEFAULT_BACKEND_KIND = "Service"


@dataclass(frozen=True)
class ResolvedGateway:
    """R-DISC-1: one per route parentRef (so a gateway can appear several times)."""

    gateway: Gateway
    gateway_class: GatewayClass
    parent_ref: ParentReference


@dataclass(frozen=True)
class DiscoveredURL:
    """A URL in Go's ``String()`` form and the Gateway that produced it (R-DISC-3)."""

    url: str
    origin: ObjectReference


class DiscoveryError(StepFailedError):
    """Discovery failed; ``str(err)`` is KServe's error text."""


class NoURLsDiscoveredError(DiscoveryError):
    """R-DISC-9: the route's Gateways expose nothing yet; the status updater tolerates this one."""

    def __init__(self, gateway_namespace: str, gateway_name: str) -> None:
        super().__init__(
            f"no URLs discovered for Gateway {gateway_namespace}/{gateway_name} "
            "(no external addresses and no backing service found)"
        )
        self.gateway_namespace = gateway_namespace
        self.gateway_name = gateway_name


# --- listeners ------------------------------------------------------------------------------------


def listener_scheme(protocol: str) -> str:
    """The URL scheme of a listener protocol: ``http``, ``https`` (HTTPS and TLS) or ``""`` (not HTTP)."""
    return _SCHEMES.get(protocol, "")


def select_listeners(gateway: Gateway, parent_ref: ParentReference, url_scheme: str) -> list[Listener]:
    """R-DISC-2: the parentRef's named listener, else every HTTP-capable one, preferred scheme first."""
    listeners = gateway.spec.listeners or []
    where = _gateway_key(gateway)
    section = parent_ref.section_name
    if section is not None:
        # A named section is taken whatever its protocol; a non-HTTP one fails later, per URL kind.
        for listener in listeners:
            if listener.name == section:
                return [listener]
        raise DiscoveryError(f"listener {quote(section)} not found in gateway {where}")
    capable = [listener for listener in listeners if listener_scheme(listener.protocol)]
    if not capable:
        raise DiscoveryError(f"no HTTP-capable listener found in gateway {where}")
    # sorted() is stable, so listeners of equal precedence keep their spec order.
    return sorted(capable, key=lambda listener: _precedence(listener_scheme(listener.protocol), url_scheme))


def _precedence(scheme: str, preferred: str) -> int:
    if scheme == preferred:
        return 0
    return 1 if scheme == "https" else 2


# --- hosts and URLs -------------------------------------------------------------------------------


def hostnames_for_listener(
    route: HTTPRoute, listener: Listener, gateway: Gateway, wildcard_label: str
) -> list[str]:
    """R-DISC-7: route hostnames (minus ``""`` and ``*``), else the listener's, else the addresses."""
    # Only the bare "*" is dropped: "*.example.com" on the route is used verbatim (quirk Q10).
    hostnames = [h for h in route.spec.hostnames or [] if h not in ("", "*")]
    if hostnames:
        return hostnames
    if listener.hostname:
        if listener.hostname.startswith("*."):
            return [f"{wildcard_label}.{listener.hostname[2:]}"]
        return [listener.hostname]
    addresses = gateway.status.addresses if gateway.status is not None else None
    return [address.value for address in addresses or [] if address.value]


def combine_into_urls(hostnames: list[str], scheme: str, port: int, path: str) -> list[str]:
    """R-DISC-8: one URL per hostname (sorted); the port is shown unless it is the scheme's default."""
    default_port = _DEFAULT_PORTS.get(scheme)
    # An unknown (empty) scheme never shows a port; Go's parser then rejects the URL anyway.
    shown_port = port if default_port is not None and port != default_port else 0
    urls = []
    for host in sorted(hostnames):
        raw = f"{scheme}://{_join_host_port(host, shown_port)}{path}"
        try:
            urls.append(str(gourl.parse(raw)))
        except gourl.GoURLError as err:
            raise DiscoveryError(f"failed to parse URL {raw}: {err}") from err
    return urls


def _join_host_port(host: str, port: int) -> str:
    """Go's ``net.JoinHostPort`` plus brackets for a bare IPv6 literal (any host with a colon)."""
    bracketed = f"[{host}]" if ":" in host else host
    return f"{bracketed}:{port}" if port else bracketed


# --- paths ----------------------------------------------------------------------------------------


@dataclass
class _PathBucket:
    """Candidate paths of one access method, Service-backed rules apart from the others."""

    service: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)

    def add(self, path: str, service_backed: bool) -> None:
        (self.service if service_backed else self.other).append(path)

    def shallowest(self) -> str:
        candidates = self.service or self.other
        return min(candidates, key=_path_depth) if candidates else ""


#: Header-less paths under this prefix are the publisher-qualified model paths (KServe #5822): a base path
#: of their own, stable across model versions. KServe reserves the prefix for its own model-level rules.
PUBLISHER_PATH_PREFIX = "/publishers/"


def extract_route_paths(route: HTTPRoute, header_name: str) -> list[str]:
    """R-DISC-11: the path-based, publisher and model-routing base paths (1 to 3), ``["/"]`` if none.

    Three access methods, each with its own bucket (KServe ``extractRoutePaths`` since #5822): a
    header-less match is publisher-qualified when its path starts with ``/publishers/``, path-based
    otherwise; a match on the model header is model routing. Keeping them apart stops the shallow ``/``
    of model routing, or a publisher path, from hiding the others.
    """
    path_based, publisher, model_routing = _PathBucket(), _PathBucket(), _PathBucket()
    for rule in route.spec.rules or []:
        service_backed = _has_service_backend(rule)
        for match in rule.matches or []:
            path = _match_path(match)
            if not match.headers:
                bucket = publisher if path.startswith(PUBLISHER_PATH_PREFIX) else path_based
                bucket.add(path, service_backed)
            elif is_model_routing_match(match, header_name):
                model_routing.add(path, service_backed)
            # Matches on other headers are the user's own rules and are never advertised.
    buckets = (path_based, publisher, model_routing)
    winners = [p for p in (bucket.shallowest() for bucket in buckets) if p]
    if not winners:
        return ["/"]
    winners.sort(key=_path_depth)
    return [p for i, p in enumerate(winners) if i == 0 or p != winners[i - 1]]


def _path_depth(path: str) -> tuple[int, int]:
    # Go compares byte lengths.
    return path.count("/"), len(path.encode())


def _match_path(match: HTTPRouteMatch) -> str:
    if match.path is None or match.path.value is None:
        return "/"
    return match.path.value


def _has_service_backend(rule: HTTPRouteRule) -> bool:
    # An unset kind means Service; an explicitly empty one does not (Go dereferences the pointer).
    return any(
        (ref.kind if ref.kind is not None else _DEFAULT_BACKEND_KIND) == _DEFAULT_BACKEND_KIND
        for ref in rule.backend_refs or []
    )


# --- discovery ------------------------------------------------------------------------------------


def discover_urls(
    resolved: list[ResolvedGateway],
    route: HTTPRoute,
    backing_services: Mapping[tuple[str, str], Service | None],
    config: RouterConfig,
    env: Environment,
) -> list[DiscoveredURL]:
    """R-DISC-2..10: the URLs of ``route`` in gateway, path, external-then-internal order.

    Within one resolved gateway (one parentRef) a URL appears once; the same URL through two parentRefs,
    or from two routes, is kept twice, as in KServe (what is left of quirk Q9).

    ``backing_services`` maps a Gateway's (namespace, name) to its backing Service (3.7.4); a missing
    key or ``None`` means the Gateway has none.
    """
    urls: list[DiscoveredURL] = []
    for item in resolved:
        backing = backing_services.get((item.gateway.namespace, item.gateway.name))
        urls += _discover_for_gateway(item, route, backing, config, env)
    if not urls and resolved:
        first = resolved[0].gateway
        raise NoURLsDiscoveredError(first.namespace, first.name)
    return urls


def _discover_for_gateway(
    item: ResolvedGateway, route: HTTPRoute, backing: Service | None, config: RouterConfig, env: Environment
) -> list[DiscoveredURL]:
    gateway = item.gateway
    try:
        listeners = select_listeners(gateway, item.parent_ref, config.url_scheme)
    except DiscoveryError as err:
        raise DiscoveryError(
            f"failed to select listeners for gateway {_gateway_key(gateway)}: {err}"
        ) from err
    has_addresses = gateway.status is not None and bool(gateway.status.addresses)
    found: list[str] = []
    seen: set[str] = set()
    for path in extract_route_paths(route, config.model_based_routing_header_name):
        if has_addresses:
            # One URL per gateway (KServe #6021): listeners sharing a port build the same URL whenever the
            # host does not depend on the listener (route hostnames pinned, or the gateway's addresses).
            for url in _external_urls(route, gateway, listeners, path, env.wildcard_label):
                if url not in seen:
                    seen.add(url)
                    found.append(url)
        if backing is not None:
            for url in _internal_urls(gateway, backing, listeners, path, env.cluster_domain):
                if url not in seen:
                    seen.add(url)
                    found.append(url)
    # One origin object per URL: addresses built from them must not share mutable state.
    return [DiscoveredURL(url=url, origin=gateway_origin(gateway)) for url in found]


def _external_urls(
    route: HTTPRoute, gateway: Gateway, listeners: list[Listener], path: str, wildcard_label: str
) -> Iterator[str]:
    where = _gateway_key(gateway)
    for listener in listeners:
        scheme = listener_scheme(listener.protocol)
        if not scheme:
            raise DiscoveryError(
                f"failed to resolve scheme for gateway {where} listener {listener.name}: listener "
                f"{quote(listener.name)} uses unsupported protocol {listener.protocol} for HTTP routing"
            )
        hostnames = hostnames_for_listener(route, listener, gateway, wildcard_label)
        try:
            yield from combine_into_urls(hostnames, scheme, listener.port, path)
        except DiscoveryError as err:
            raise DiscoveryError(f"failed to combine URLs for Gateway {where}: {err}") from err


def _internal_urls(
    gateway: Gateway, backing: Service, listeners: list[Listener], path: str, cluster_domain: str
) -> Iterator[str]:
    where = _gateway_key(gateway)
    # A Service read from the Gateway's namespace lives there even if a fixture omits the field.
    host = f"{backing.name}.{backing.namespace or gateway.namespace}.svc.{cluster_domain}"
    for listener in listeners:
        if not listener_matches_service_ports(listener, backing):
            continue
        try:
            # A non-HTTP listener gives an empty scheme, and Go's URL parser rejects the result.
            yield from combine_into_urls([host], listener_scheme(listener.protocol), listener.port, path)
        except DiscoveryError as err:
            raise DiscoveryError(
                f"failed to build internal URL for Gateway {where} listener {listener.name}: {err}"
            ) from err


def listener_matches_service_ports(listener: Listener, service: Service) -> bool:
    """R-SVC-3: the listener's port is one of the Service's ports, or the Service declares none."""
    ports = service.spec.ports or []
    return not ports or any(port.port == listener.port for port in ports)


def gateway_origin(gateway: Gateway) -> ObjectReference:
    """R-DISC-3: the reference to the Gateway recorded as the origin of its URLs."""
    return ObjectReference(
        group=GATEWAY_GROUP, kind="Gateway", name=gateway.name, namespace=gateway.namespace
    )


# --- resolved gateways ----------------------------------------------------------------------------


def resolved_gateway_keys(resolved: list[ResolvedGateway]) -> list[tuple[str, str]]:
    """3.8.1 ``gatewayKeys``: (parentRef namespace or the Gateway's, parentRef name), in order."""
    return [
        (item.parent_ref.gateway_namespace(item.gateway.namespace), item.parent_ref.name) for item in resolved
    ]


def dedupe_resolved(resolved: list[ResolvedGateway]) -> list[ResolvedGateway]:
    """R-ST-10: one entry per Gateway namespace/name, the first one (and its parentRef) kept, in order."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for item in resolved:
        key = (item.gateway.namespace, item.gateway.name)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def _gateway_key(gateway: Gateway) -> str:
    return f"{gateway.namespace}/{gateway.name}"
