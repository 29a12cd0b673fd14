"""What one LLMInferenceService uses: the one answer the trigger rules and the cache's index share. Pure.

:func:`service_uses` reads the service as the planner does, through a :class:`Reader` over the same
cluster: its spec merged with its presets and ``baseRefs`` by the core's own merge
(``config_merge.combine`` then ``presets.adjust``), so a Gateway that only a baseRef names is one it uses
from the start; the routes it names read by ``references.referenced_routes``, their parentRefs read as
Gateways as ``gateway_lookup.discover_gateways`` reads them. Its status (the Gateways and routes the
router last wrote) and the names it is compared by (its routing group, its model names, the configs it
uses) are read from the object itself, loosely: a malformed status must not hide the rest.

:func:`index_values` flattens the answer into the values of the cache's :data:`USES` index
(``"Gateway:ns/name"``...), so "the services using this object" is one ``by_index`` lookup. A service's
uses also depend on other objects (:data:`READ_THROUGH`): when one of those changes, the services it
affects are indexed again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pydantic import ValidationError

from llmisvc_core import limits, naming
from llmisvc_core.checks.references import referenced_routes
from llmisvc_core.httproute.routing_group import stored_group
from llmisvc_core.merge import config_merge, presets
from llmisvc_core.models import kube
from llmisvc_core.models.core_objects import ConfigMap
from llmisvc_core.models.gateway_api import ParentReference
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.triggers import configs, model_names
from llmisvc_core.triggers.change import Key, Wire, key_of
from llmisvc_core.world.config import (
    CONFIGMAP_NAME,
    ConfigError,
    Environment,
    RouterConfig,
    load_router_config,
)
from llmisvc_core.world.snapshot import PassWorld, Reader

#: The name of the index on LLMInferenceServices whose values :func:`index_values` gives.
USES = "uses"
# The kinds of the index. Pools are one kind: either group's pool of that name is the same dependency.
GATEWAY = "Gateway"
HTTPROUTE = "HTTPRoute"
POOL = "InferencePool"
CONFIG = "LLMInferenceServiceConfig"
GROUP = "group"
MODEL_NAME = "model name"
#: The kinds whose objects a service's uses are read through (beyond the service itself): a change of one
#: of these re-indexes the services it affects.
READ_THROUGH = frozenset({kube.HTTPROUTE, kube.LLMISVC_CONFIG, kube.CONFIGMAP})


@dataclass(frozen=True)
class Uses:
    """The objects a service's pass reads or is compared by, by kind."""

    gateways: frozenset[Key] = frozenset()
    routes: frozenset[Key] = frozenset()
    pools: frozenset[Key] = frozenset()
    configs: frozenset[str] = frozenset()  # names: a config is looked up in two namespaces
    group: str | None = None  # in the service's namespace
    model_names: frozenset[str] = frozenset()  # in the service's namespace


def value(kind: str, namespace: str, name: str) -> str:
    """One value of the :data:`USES` index."""
    return f"{kind}:{namespace}/{name}"


def index_values(uses: Uses, namespace: str) -> list[str]:
    found = [value(GATEWAY, *key) for key in uses.gateways]
    found += [value(HTTPROUTE, *key) for key in uses.routes]
    found += [value(POOL, *key) for key in uses.pools]
    found += [value(CONFIG, "", name) for name in uses.configs]
    found += [value(MODEL_NAME, namespace, name) for name in uses.model_names]
    if uses.group is not None:
        found.append(value(GROUP, namespace, uses.group))
    return sorted(found)


def service_uses(wire: Wire, reader: Reader, env: Environment) -> Uses:
    """What the pass of the service ``wire`` reads of Gateways, routes, pools and configs, and what its
    peers compare it by."""
    namespace = key_of(wire)[0]
    status = list(observed_gateways(wire))
    gateways = {(g.namespace or namespace, g.name) for g in status}
    routes = {(r.namespace or namespace, r.name) for g in status for r in g.http_routes}
    parsed = _parsed(wire)
    pools: set[Key] = set()
    if parsed is not None:
        merged = merged_service(parsed, reader, env)
        routes |= {(namespace, r) for r in named_routes(merged)}
        pools |= {(namespace, p) for p in named_pools(merged)}
        # A named route that does not parse: its pass reports it; its own events still signal.
        with contextlib.suppress(ValueError, RecursionError):
            gateways |= named_gateways(merged, reader, router_config(reader, env))
    return Uses(
        gateways=frozenset(gateways),
        routes=frozenset(routes),
        pools=frozenset(pools),
        configs=frozenset(configs.named_configs(wire, env)),
        group=stored_group(wire),
        model_names=model_names.claimed_names(parsed) if parsed is not None else frozenset(),
    )


def router_config(reader: Reader, env: Environment) -> RouterConfig:
    """The config of ``inferenceservice-config``; an unusable one counts as the defaults (the pass fails
    on it and reports it; fixing it is itself a change that signals every service)."""
    raw = reader.get(kube.CONFIGMAP, env.kserve_namespace, CONFIGMAP_NAME)
    try:
        data = (ConfigMap.model_validate(raw).data or {}) if raw is not None else None
        return load_router_config(data, env)
    except (ConfigError, ValidationError):
        return load_router_config(None, env)


def merged_service(svc: LLMInferenceService, reader: Reader, env: Environment) -> LLMInferenceService:
    """The service with its presets and baseRefs merged as the pass merges them; as written when that
    fails (the pass reports why, and a change of the config it lacks signals the service)."""
    try:
        combined = config_merge.combine(svc, reader, env, router_config(reader, env))
        return presets.adjust(svc, combined.spec)
    except (config_merge.CombineError, ValidationError, RecursionError):
        return svc


def named_gateways(svc: LLMInferenceService, reader: Reader, config: RouterConfig) -> set[Key]:
    """The Gateways of ``gateway.refs`` (or the default ingress gateway), of the managed route's
    parentRefs, and every parentRef of a route it names, read as a Gateway (as discovery does)."""
    namespace = svc.namespace
    router = svc.spec.router
    found: set[Key] = set()
    if router is None:
        return found
    if router.gateway is not None:
        found |= {(r.namespace or namespace, r.name) for r in router.gateway.refs or []}
        if not router.gateway.has_refs():
            found.add((config.ingress_gateway_namespace, config.ingress_gateway_name))
    http = svc.route_settings()
    if http is not None and http.spec is not None:
        found |= set(gateway_parents(http.spec.parent_refs, namespace))
    for route in referenced_routes(PassWorld(reader), svc):
        found |= {(p.gateway_namespace(route.namespace), p.name) for p in route.spec.parent_refs or []}
    return found


def named_routes(svc: LLMInferenceService) -> list[str]:
    """The routes of ``route.http.refs``, and the managed route's name."""
    http = svc.route_settings()
    refs = [ref.name for ref in (http.refs if http is not None else None) or [] if ref.name]
    return [*refs, naming.route_name(svc.name)] if svc.spec.router is not None else refs


def named_pools(svc: LLMInferenceService) -> list[str]:
    """The InferencePool of ``scheduler.pool.ref``, and the managed pool's name (read to create, check or
    clean it up, a pool ref or not)."""
    if svc.spec.router is None:
        return []
    scheduler = svc.scheduler()
    pool = scheduler.pool if scheduler is not None else None
    ref = pool.ref if pool is not None and pool.has_ref() else None
    return [*([ref.name] if ref is not None and ref.name else []), svc.managed_pool_name()]


def _parsed(wire: Wire) -> LLMInferenceService | None:
    """None for a spec that cannot be read: invalid, or nested past ``limits.MAX_DEPTH`` (the recursive
    readers would fail on it); the service's own pass reports why in its status."""
    if limits.too_deep(wire):
        return None
    try:
        return LLMInferenceService.from_wire(wire)
    except (ValueError, RecursionError):  # pydantic's ValidationError is a ValueError
        return None


# --- reading the wire loosely ----------------------------------------------------------------------


@dataclass(frozen=True)
class Observed:
    namespace: str
    name: str
    http_routes: list[Observed]


def observed_gateways(wire: Wire) -> Iterator[Observed]:
    """``status.router.gateways[]``, read loosely: a malformed status must not hide the rest."""
    status = wire.get("status")
    router = ((status if isinstance(status, dict) else {}).get("router")) or {}
    if not isinstance(router, dict):
        return
    for item in router.get("gateways") or []:
        if isinstance(item, dict) and item.get("name"):
            routes = [
                Observed(str(r.get("namespace") or ""), str(r["name"]), [])
                for r in item.get("httpRoutes") or []
                if isinstance(r, dict) and r.get("name")
            ]
            yield Observed(str(item.get("namespace") or ""), str(item["name"]), routes)


def gateway_parents(refs: Iterable[ParentReference] | None, namespace: str) -> Iterator[Key]:
    for ref in refs or []:
        if (ref.kind or "Gateway") == "Gateway" and (ref.group or kube.GATEWAY_GROUP) == kube.GATEWAY_GROUP:
            yield ref.gateway_namespace(namespace), ref.name
