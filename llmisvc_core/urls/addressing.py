"""What the service advertises from its discovered URLs: classification, addresses, ``status.url``, gateways.

Spec 3.7.5 to 3.7.8. A URL is *internal* when its host is a private IP in Go's narrow sense or a
cluster/local hostname, *cluster-local* when it ends with the cluster domain, and *model-routing* when
its path is the root (reachable only with the model header). URLs are the strings discovery produced;
they are read back with Go's URL semantics (:mod:`llmisvc_core.gocompat.gourl`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network

from llmisvc_core import naming
from llmisvc_core.gocompat import gourl
from llmisvc_core.models.gateway_api import HTTPRoute
from llmisvc_core.models.kube import GATEWAY_GROUP
from llmisvc_core.models.llmisvc import (
    AddressModel,
    LLMInferenceService,
    ObjectReference,
    ObservedGateway,
    SourcedAddress,
)
from llmisvc_core.urls.discovery import DiscoveredURL

# Go's net.IP.IsPrivate (Appendix D); Python's is_private also covers loopback, link-local, CGNAT and
# documentation ranges, which KServe treats as external (quirk Q19).
_PRIVATE_V4 = (ip_network("10.0.0.0/8"), ip_network("172.16.0.0/12"), ip_network("192.168.0.0/16"))
_PRIVATE_V6 = ip_network("fc00::/7")
_LOCAL_SUFFIXES = (".local", ".localhost", ".internal")
_MODEL_ROUTING_SUFFIX = "-model-routing"


# --- classification (R-CLS-*) ---------------------------------------------------------------------


def is_internal(url: str, cluster_domain: str) -> bool:
    """R-CLS-2: a private IP (Go's ranges only) or a cluster/local hostname."""
    host = gourl.parse(url).hostname()
    return _is_private_ip(host) or _is_internal_hostname(host.lower(), cluster_domain)


def is_cluster_local(url: str, cluster_domain: str) -> bool:
    """R-CLS-4: the host ends with the cluster domain (a plain suffix, as in Go)."""
    return gourl.parse(url).hostname().lower().endswith(cluster_domain)


def is_model_routing_url(url: str) -> bool:
    """R-CLS-5: the (unescaped) path is the root or empty."""
    return gourl.parse(url).path in ("/", "")


def external_urls(urls: list[DiscoveredURL], cluster_domain: str) -> list[DiscoveredURL]:
    """R-CLS-3: the URLs that are not internal, in input order."""
    return [d for d in urls if not is_internal(d.url, cluster_domain)]


def internal_urls(urls: list[DiscoveredURL], cluster_domain: str) -> list[DiscoveredURL]:
    """The internal URLs, in input order (Go: ``FilterInternalURLs``)."""
    return [d for d in urls if is_internal(d.url, cluster_domain)]


def _is_private_ip(host: str) -> bool:
    # Go's ParseIP rejects zoned IPv6 literals, which Python accepts.
    if "%" in host:
        return False
    try:
        ip = ip_address(host)
    except ValueError:
        return False
    if isinstance(ip, IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if isinstance(ip, IPv4Address):
        return any(ip in network for network in _PRIVATE_V4)
    return ip in _PRIVATE_V6


def _is_internal_hostname(host: str, cluster_domain: str) -> bool:
    # The cluster domain is a plain suffix with no leading dot, exactly as KServe compares it.
    return host.endswith((cluster_domain, *_LOCAL_SUFFIXES)) or host == "localhost"


# --- addresses (R-ADDR-*) -------------------------------------------------------------------------


def sourced_address(
    discovered: DiscoveredURL, svc: LLMInferenceService, cluster_domain: str
) -> SourcedAddress:
    """R-ADDR-1..3: the ``status.addresses`` entry of one discovered URL."""
    model_routing = is_model_routing_url(discovered.url)
    name = address_type(discovered.url, cluster_domain)
    if model_routing:
        name += _MODEL_ROUTING_SUFFIX
    return SourcedAddress(
        name=name,
        url=discovered.url,
        origin=discovered.origin.model_copy(deep=True),
        models=[AddressModel(name=model) for model in address_models(svc, model_routing)],
    )


def address_type(url: str, cluster_domain: str) -> str:
    """R-ADDR-1 without the model-routing suffix: gateway-internal, internal or gateway-external."""
    if is_cluster_local(url, cluster_domain):
        return "gateway-internal"
    if is_internal(url, cluster_domain):
        return "internal"
    return "gateway-external"


def address_models(svc: LLMInferenceService, model_routing: bool) -> list[str]:
    """R-ADDR-3: publisher names only behind the model header; publisher and bare names on paths."""
    names = [svc.model_name(), *svc.lora_adapter_names()]
    published = [naming.publisher_model(svc.namespace, name) for name in names]
    if model_routing:
        return published
    return [entry for pair in zip(published, names, strict=True) for entry in pair]


# --- status.url (R-URL-*) -------------------------------------------------------------------------


def prefer_path_based_url(urls: list[DiscoveredURL], namespace: str, name: str, preferred_scheme: str) -> str:
    """R-URL-1: the first URL under ``/<ns>/<name>`` (with the preferred scheme if given), else the first."""
    prefix = f"/{namespace}/{name}"
    first_match: str | None = None
    for discovered in urls:
        parsed = gourl.parse(discovered.url)
        # A plain string prefix: /ns/name-2 also matches service "name" (quirk Q20).
        if not parsed.path.startswith(prefix):
            continue
        if preferred_scheme and parsed.scheme == preferred_scheme:
            return discovered.url
        if first_match is None:
            first_match = discovered.url
    return first_match if first_match is not None else urls[0].url


# --- status.router.gateways (R-OBS-*) -------------------------------------------------------------


@dataclass
class _GatewayAccumulator:
    namespace: str
    name: str
    listeners: list[str] = field(default_factory=list)
    routes: list[ObjectReference] = field(default_factory=list)

    def add_route(self, route: HTTPRoute) -> None:
        # Routes are told apart by name only (quirk Q21): all of them live in the service namespace.
        if all(existing.name != route.name for existing in self.routes):
            self.routes.append(
                ObjectReference(
                    group=GATEWAY_GROUP, kind="HTTPRoute", name=route.name, namespace=route.namespace
                )
            )

    def observed(self) -> ObservedGateway:
        listeners = sorted(set(self.listeners)) or None
        return ObservedGateway(
            group=GATEWAY_GROUP,
            kind="Gateway",
            name=self.name,
            namespace=self.namespace,
            listeners=listeners,
            http_routes=sorted(self.routes, key=lambda ref: ref.name),
        )


def build_observed_gateways(routes: list[HTTPRoute]) -> list[ObservedGateway] | None:
    """R-OBS-1..4: one entry per parent Gateway, ordered by ``namespace/name``; None without routes."""
    if not routes:
        return None
    gateways: dict[str, _GatewayAccumulator] = {}
    for route in routes:
        for parent in route.spec.parent_refs or []:
            namespace = parent.gateway_namespace(route.namespace)
            key = f"{namespace}/{parent.name}"
            entry = gateways.setdefault(key, _GatewayAccumulator(namespace, parent.name))
            if parent.section_name is not None:
                entry.listeners.append(parent.section_name)
            entry.add_route(route)
    return [gateways[key].observed() for key in sorted(gateways)]
