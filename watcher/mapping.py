"""Which LLMInferenceServices an event affects (spec 1.8, re-evaluation triggers). Pure: no I/O.

:class:`WatchedWorld` is the little the watcher remembers to answer that question — the services it
has seen, the HTTPRoutes (a referenced route's parentRefs tie a Gateway to a service) and the router
config — and :func:`affected_services` applies the rules:

* the LLMInferenceService itself;
* an owned object (label ``app.kubernetes.io/part-of=llminferenceservice`` and a controller owner
  reference of kind LLMInferenceService) -> its owner;
* a Gateway -> services whose status lists it, whose merged spec names it in ``gateway.refs`` or in the
  managed route's parentRefs (how the default ingress gateway is used), or that use it through the
  parentRefs of an HTTPRoute they reference;
* an HTTPRoute -> services whose status lists it or whose ``route.http.refs`` names it;
* an InferencePool (either group) -> services of its namespace whose ``scheduler.pool.ref`` names it;
* a CRD of the Gateway API, Inference Extension or KServe groups, or a change of the ingress settings
  in ``inferenceservice-config`` -> every service.

A change of a service that only touches the status fields the router writes itself is not a trigger:
it is the echo of a pass that already ran. Signalling a service that turns out not to care costs one
idle pass; missing one leaves it stale until
the resync, so every rule errs on the side of signalling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from pydantic import ValidationError

from router_core import kube, status_merge
from router_core.config import (
    CONFIGMAP_NAME,
    INGRESS_KEY,
    ConfigError,
    Environment,
    RouterConfig,
    load_router_config,
)
from router_core.gateway_api import ParentReference
from router_core.llmisvc import LLMInferenceService
from router_core.presets import apply_router_presets
from watcher.model import DELETED, MODIFIED, Affected, WatchEvent, Wire

PART_OF_LABEL = "app.kubernetes.io/part-of"
PART_OF_VALUE = "llminferenceservice"
#: A CRD of these groups appearing, changing its served versions or going away affects every service.
ROUTING_CRD_GROUPS = frozenset(
    {kube.GATEWAY_GROUP, kube.POOL_V1_GROUP, kube.POOL_V1ALPHA2_GROUP, kube.SERVING_GROUP}
)

Key = tuple[str, str]  # (namespace, name)


def router_config(configmap: Wire | None, env: Environment) -> RouterConfig:
    """The config of ``inferenceservice-config``; an unusable one maps like the defaults (the pass fails
    on it and reports it; fixing it is itself a change that signals every service)."""
    if configmap is None:
        return load_router_config(None, env)
    try:
        return load_router_config(dict(configmap.get("data") or {}), env)
    except ConfigError:
        return load_router_config(None, env)


@dataclass
class WatchedWorld:
    env: Environment
    config: RouterConfig
    services: dict[Key, Wire] = field(default_factory=dict)
    routes: dict[Key, Wire] = field(default_factory=dict)
    _merged: dict[Key, LLMInferenceService | None] = field(default_factory=dict, repr=False)

    @classmethod
    def empty(cls, env: Environment) -> WatchedWorld:
        return cls(env=env, config=router_config(None, env))

    def apply(self, event: WatchEvent) -> None:
        """Remember what the event says (after :func:`affected_services` looked at the world before it)."""
        key = (event.namespace, event.name)
        gone = event.type == DELETED
        if event.resource == kube.LLMISVC:
            _put(self.services, key, None if gone else event.obj)
            self._merged.pop(key, None)
        elif event.resource == kube.HTTPROUTE:
            _put(self.routes, key, None if gone else event.obj)
        elif is_router_configmap(event, self.env):
            self.config = router_config(None if gone else event.obj, self.env)
            self._merged.clear()

    def merged(self, key: Key) -> LLMInferenceService | None:
        """The service with the router presets applied (None if its spec does not parse)."""
        if key not in self._merged:
            self._merged[key] = _merge(self.services[key], self.config)
        return self._merged[key]

    def service_keys(self) -> list[Key]:
        return sorted(self.services)


def only_router_status_changed(before: Wire, after: Wire) -> bool:
    """Nothing changed but what a router status write may change (``status_merge.is_router_write``: its
    conditions, URL, addresses, router status, observedGeneration, and the conditions it initialises when
    missing); a change by anyone else still triggers a pass."""
    if _without_status(before) != _without_status(after):
        return False
    return status_merge.is_router_write(dict(before.get("status") or {}), dict(after.get("status") or {}))


def _without_status(svc: Wire) -> Wire:
    meta = {
        k: v for k, v in (svc.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")
    }
    return {**{k: v for k, v in svc.items() if k != "status"}, "metadata": meta}


def _put(index: dict[Key, Wire], key: Key, obj: Wire | None) -> None:
    if obj is None:
        index.pop(key, None)
    else:
        index[key] = obj


def _merge(wire: Wire, config: RouterConfig) -> LLMInferenceService | None:
    try:
        return apply_router_presets(LLMInferenceService.from_wire(wire), config)
    except ValidationError:
        return None


def is_router_configmap(event: WatchEvent, env: Environment) -> bool:
    return (
        event.resource == kube.CONFIGMAP
        and event.name == CONFIGMAP_NAME
        and event.namespace == env.kserve_namespace
    )


# --- the rules -------------------------------------------------------------------------------------


def affected_services(event: WatchEvent, world: WatchedWorld) -> list[Affected]:
    """The services ``event`` may change the routing of, each once, in a stable order."""
    if event.resource == kube.LLMISVC:
        previous = world.services.get((event.namespace, event.name))
        if (
            event.type == MODIFIED
            and previous is not None
            and only_router_status_changed(previous, event.obj)
        ):
            return []  # the router's own status write: the pass that made it already saw this world
        return [Affected(event.namespace, event.name, event.describe())]
    if event.initial:
        return []  # the world as it was at start-up: every service's first pass reads it anyway
    keys: list[Key] = [*owner_of(event.obj)]
    rule = _RULES.get(event.resource)
    if rule is not None:
        keys += rule(event, world)
    if event.resource == kube.CRD and crd_changes_routing(event):
        keys += world.service_keys()
    if is_router_configmap(event, world.env) and ingress_changed(event):
        keys += world.service_keys()
    reason = event.describe()
    return [Affected(ns, name, reason) for ns, name in dict.fromkeys(keys)]


def owner_of(obj: Wire) -> list[Key]:
    """The LLMInferenceService that controls a managed object (its label and controller reference)."""
    meta = obj.get("metadata") or {}
    if (meta.get("labels") or {}).get(PART_OF_LABEL) != PART_OF_VALUE:
        return []
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == kube.LLMISVC.kind and ref.get("name"):
            return [(str(meta.get("namespace") or ""), str(ref["name"]))]
    return []


def gateway_users(event: WatchEvent, world: WatchedWorld) -> list[Key]:
    gateway = (event.namespace, event.name)
    return [key for key in world.service_keys() if gateway in _gateways_used(key, world)]


def route_users(event: WatchEvent, world: WatchedWorld) -> list[Key]:
    route = (event.namespace, event.name)
    return [key for key in world.service_keys() if route in _routes_used(key, world)]


def pool_users(event: WatchEvent, world: WatchedWorld) -> list[Key]:
    users = []
    for key in world.service_keys():
        svc = world.merged(key)
        scheduler = svc.scheduler() if svc is not None else None
        pool = scheduler.pool if scheduler is not None else None
        ref = pool.ref if pool is not None and pool.has_ref() else None
        if key[0] == event.namespace and ref is not None and ref.name == event.name:
            users.append(key)
    return users


def crd_changes_routing(event: WatchEvent) -> bool:
    """A routing CRD appeared, went away, or changed which versions it serves."""
    if str((event.obj.get("spec") or {}).get("group") or "") not in ROUTING_CRD_GROUPS:
        return False
    if event.type != MODIFIED or event.old is None:
        return True
    return _served_versions(event.obj) != _served_versions(event.old)


def ingress_changed(event: WatchEvent) -> bool:
    """Only the ``ingress`` key matters to the router; other keys of the ConfigMap change nothing."""
    if event.type != MODIFIED or event.old is None:
        return True
    return _ingress(event.obj) != _ingress(event.old)


_Rule = Callable[[WatchEvent, WatchedWorld], list[Key]]
_RULES: dict[kube.ResourceType, _Rule] = {
    kube.GATEWAY: gateway_users,
    kube.HTTPROUTE: route_users,
    kube.POOL_V1: pool_users,
    kube.POOL_V1ALPHA2: pool_users,
}


# --- what one service uses -------------------------------------------------------------------------


def _gateways_used(key: Key, world: WatchedWorld) -> set[Key]:
    namespace = key[0]
    used = {(g.namespace or namespace, g.name) for g in _observed_gateways(world.services[key])}
    svc = world.merged(key)
    router = svc.router if svc is not None else None
    if svc is None or router is None:
        return used
    if router.gateway is not None:
        used |= {(r.namespace or namespace, r.name) for r in router.gateway.refs or []}
        if not router.gateway.has_refs():
            used.add((world.config.ingress_gateway_namespace, world.config.ingress_gateway_name))
    http = svc.route_settings()
    if http is not None and http.spec is not None:
        used |= set(_gateway_parents(http.spec.parent_refs, namespace))
    for route_key in _referenced_routes(svc):
        route = world.routes.get(route_key)
        if route is not None:
            parents = (route.get("spec") or {}).get("parentRefs") or []
            used |= set(_gateway_parents(_parent_refs(parents), route_key[0]))
    return used


def _routes_used(key: Key, world: WatchedWorld) -> set[Key]:
    namespace = key[0]
    used = {
        (r.namespace or namespace, r.name)
        for g in _observed_gateways(world.services[key])
        for r in g.http_routes or []
    }
    svc = world.merged(key)
    if svc is not None:
        used |= set(_referenced_routes(svc))
    return used


def _referenced_routes(svc: LLMInferenceService) -> list[Key]:
    http = svc.route_settings()
    refs = http.refs if http is not None else None
    return [(svc.namespace, ref.name) for ref in refs or [] if ref.name]


def _observed_gateways(wire: Wire) -> Iterator[_Observed]:
    """``status.router.gateways[]``, read loosely: a malformed status must not hide the rest."""
    router = ((wire.get("status") or {}).get("router")) or {}
    for item in router.get("gateways") or []:
        if isinstance(item, dict) and item.get("name"):
            routes = [
                _Observed(str(r.get("namespace") or ""), str(r["name"]), [])
                for r in item.get("httpRoutes") or []
                if isinstance(r, dict) and r.get("name")
            ]
            yield _Observed(str(item.get("namespace") or ""), str(item["name"]), routes)


@dataclass(frozen=True)
class _Observed:
    namespace: str
    name: str
    http_routes: list[_Observed]


def _parent_refs(raw: Iterable[object]) -> list[ParentReference]:
    refs = []
    for item in raw:
        try:
            refs.append(ParentReference.model_validate(item))
        except ValidationError:
            continue
    return refs


def _gateway_parents(refs: list[ParentReference] | None, namespace: str) -> Iterator[Key]:
    for ref in refs or []:
        if (ref.kind or "Gateway") == "Gateway" and (ref.group or kube.GATEWAY_GROUP) == kube.GATEWAY_GROUP:
            yield ref.gateway_namespace(namespace), ref.name


def _served_versions(crd: Wire) -> list[str]:
    versions = (crd.get("spec") or {}).get("versions") or []
    return sorted(str(v.get("name")) for v in versions if isinstance(v, dict) and v.get("served"))


def _ingress(configmap: Wire) -> object:
    return (configmap.get("data") or {}).get(INGRESS_KEY)
