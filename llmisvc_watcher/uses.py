"""What one LLMInferenceService uses, by kind, and the reverse index from a used object to its users.
Pure: no I/O.

:func:`service_uses` answers, for one service, which Gateways, HTTPRoutes and InferencePools its routing
depends on (the rules of :mod:`llmisvc_watcher.mapping`); :class:`UsersIndex` keeps the answer inverted, so an
event on a Gateway, route or pool finds the services it affects without walking them all. A new kind of
trigger (for instance a config object that services name) is a new entry of :data:`USE_RULES` and a new
``kind`` in the index; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from llmisvc_core.models import kube
from llmisvc_core.models.gateway_api import ParentReference
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.config import RouterConfig
from llmisvc_watcher.model import Wire

Key = tuple[str, str]  # (namespace, name)

# The kinds of the index. Pools are one kind: either group's pool of that name is the same dependency.
GATEWAY = "Gateway"
HTTPROUTE = "HTTPRoute"
POOL = "InferencePool"
#: Routes a service's spec names in ``route.http.refs``: their parentRefs are part of its Gateways, so a
#: change of such a route changes what the service uses.
SPEC_ROUTE = "HTTPRoute named in the spec"


@dataclass(frozen=True)
class ServiceView:
    """What the rules read of one service: its namespace, the stored object (for the status the router
    wrote) and the spec with the router presets applied (None when it does not parse)."""

    namespace: str
    wire: Wire
    merged: LLMInferenceService | None


Uses = dict[str, frozenset[Key]]
UseRule = Callable[[ServiceView, RouterConfig, Mapping[Key, Wire]], Iterable[Key]]


def gateways_used(view: ServiceView, config: RouterConfig, routes: Mapping[Key, Wire]) -> set[Key]:
    """Gateways its status lists, its spec names (refs, the managed route's parentRefs, or the default
    ingress gateway), or that are parents of an HTTPRoute it names."""
    namespace = view.namespace
    used = {(g.namespace or namespace, g.name) for g in observed_gateways(view.wire)}
    svc = view.merged
    router = svc.router if svc is not None else None
    if svc is None or router is None:
        return used
    if router.gateway is not None:
        used |= {(r.namespace or namespace, r.name) for r in router.gateway.refs or []}
        if not router.gateway.has_refs():
            used.add((config.ingress_gateway_namespace, config.ingress_gateway_name))
    http = svc.route_settings()
    if http is not None and http.spec is not None:
        used |= set(gateway_parents(http.spec.parent_refs, namespace))
    for route_key in referenced_routes(view, config, routes):
        route = routes.get(route_key)
        if route is not None:
            parents = (route.get("spec") or {}).get("parentRefs") or []
            used |= set(gateway_parents(parent_refs(parents), route_key[0]))
    return used


def routes_used(view: ServiceView, config: RouterConfig, routes: Mapping[Key, Wire]) -> set[Key]:
    """HTTPRoutes its status lists or its spec names."""
    used = {
        (r.namespace or view.namespace, r.name)
        for g in observed_gateways(view.wire)
        for r in g.http_routes or []
    }
    return used | set(referenced_routes(view, config, routes))


def pools_used(view: ServiceView, config: RouterConfig, routes: Mapping[Key, Wire]) -> list[Key]:
    """The InferencePool its ``scheduler.pool.ref`` names, in its own namespace."""
    scheduler = view.merged.scheduler() if view.merged is not None else None
    pool = scheduler.pool if scheduler is not None else None
    ref = pool.ref if pool is not None and pool.has_ref() else None
    return [(view.namespace, ref.name)] if ref is not None and ref.name else []


def referenced_routes(view: ServiceView, config: RouterConfig, routes: Mapping[Key, Wire]) -> list[Key]:
    http = view.merged.route_settings() if view.merged is not None else None
    refs = http.refs if http is not None else None
    return [(view.namespace, ref.name) for ref in refs or [] if ref.name]


USE_RULES: dict[str, UseRule] = {
    GATEWAY: gateways_used,
    HTTPROUTE: routes_used,
    POOL: pools_used,
    SPEC_ROUTE: referenced_routes,
}


def service_uses(view: ServiceView, config: RouterConfig, routes: Mapping[Key, Wire]) -> Uses:
    return {kind: frozenset(rule(view, config, routes)) for kind, rule in USE_RULES.items()}


class UsersIndex:
    """``(kind, used object) -> services``, kept in step with each service's :data:`Uses`."""

    def __init__(self) -> None:
        self._uses: dict[Key, Uses] = {}
        self._users: dict[tuple[str, Key], set[Key]] = {}

    def put(self, service: Key, uses: Uses) -> None:
        """Record what ``service`` uses now; only the entries that changed are touched."""
        old = self._uses.get(service, {})
        for kind in old.keys() | uses.keys():
            before, after = old.get(kind, frozenset()), uses.get(kind, frozenset())
            for used in before - after:
                self._drop(kind, used, service)
            for used in after - before:
                self._users.setdefault((kind, used), set()).add(service)
        self._uses[service] = uses

    def remove(self, service: Key) -> None:
        self.put(service, {})
        del self._uses[service]

    def users(self, kind: str, used: Key) -> set[Key]:
        return set(self._users.get((kind, used), ()))

    def uses(self, service: Key) -> Uses:
        return self._uses.get(service, {})

    def _drop(self, kind: str, used: Key, service: Key) -> None:
        users = self._users[(kind, used)]
        users.discard(service)
        if not users:
            del self._users[(kind, used)]  # an index of what is used now, not of everything ever used


# --- reading the wire loosely ----------------------------------------------------------------------


@dataclass(frozen=True)
class Observed:
    namespace: str
    name: str
    http_routes: list[Observed]


def observed_gateways(wire: Wire) -> Iterator[Observed]:
    """``status.router.gateways[]``, read loosely: a malformed status must not hide the rest."""
    router = ((wire.get("status") or {}).get("router")) or {}
    for item in router.get("gateways") or []:
        if isinstance(item, dict) and item.get("name"):
            routes = [
                Observed(str(r.get("namespace") or ""), str(r["name"]), [])
                for r in item.get("httpRoutes") or []
                if isinstance(r, dict) and r.get("name")
            ]
            yield Observed(str(item.get("namespace") or ""), str(item["name"]), routes)


def parent_refs(raw: Iterable[object]) -> list[ParentReference]:
    refs = []
    for item in raw:
        try:
            refs.append(ParentReference.model_validate(item))
        except ValidationError:
            continue
    return refs


def gateway_parents(refs: list[ParentReference] | None, namespace: str) -> Iterator[Key]:
    for ref in refs or []:
        if (ref.kind or "Gateway") == "Gateway" and (ref.group or kube.GATEWAY_GROUP) == kube.GATEWAY_GROUP:
            yield ref.gateway_namespace(namespace), ref.name
