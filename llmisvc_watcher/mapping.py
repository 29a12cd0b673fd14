"""Which LLMInferenceServices an event affects (spec 1.8, re-evaluation triggers). Pure: no I/O.

:class:`WatchedWorld` is the little the watcher remembers to answer that question — the services it
has seen, the HTTPRoutes (a referenced route's parentRefs tie a Gateway to a service), the router
config, and an index from each Gateway, HTTPRoute and InferencePool to the services that use it
(:mod:`llmisvc_watcher.uses`, kept up to date as services, routes and the config change, so one event costs
the same whatever the number of services) — and :func:`affected_services` applies the rules:

* the LLMInferenceService itself;
* an LLMInferenceService of a routing group -> the other members of its group, and of the group it
  left, when it is created or deleted or its traffic fields change (:mod:`llmisvc_watcher.groups`, KServe's
  ``groupMemberEventHandler``): even the router's own status write on a member is such a change when it
  flips the member's RouterReady or its advertised models, which its peers route by;
* an LLMInferenceService -> the other services of its namespace that claim a model name it claimed or
  claims, when it is created or deleted or what their collision check reads of it changes
  (:mod:`llmisvc_watcher.model_names`, the ``ModelNameCollision`` Warning);
* an owned object (label ``app.kubernetes.io/part-of=llminferenceservice`` and a controller owner
  reference of kind LLMInferenceService) -> its owner;
* a Gateway -> services whose status lists it, whose merged spec names it in ``gateway.refs`` or in the
  managed route's parentRefs (how the default ingress gateway is used), or that use it through the
  parentRefs of an HTTPRoute they reference;
* an HTTPRoute -> services whose status lists it or whose ``route.http.refs`` names it;
* an InferencePool (either group) -> services of its namespace whose ``scheduler.pool.ref`` names it;
* an LLMInferenceServiceConfig -> the services that use it (:mod:`llmisvc_watcher.config_users`);
* a CRD of the Gateway API, Inference Extension or KServe groups, or a change of the ingress settings
  in ``inferenceservice-config`` -> every service.

A change of a service that only touches the status fields the router writes itself is not a trigger:
it is the echo of a pass that already ran. In shadow mode the router writes no status, so such a change
is another writer's (KServe's), and the drift it makes or ends is the pass's to report: it is a trigger.
Signalling a service that turns out not to care costs one idle pass; missing one leaves it stale until
the resync, so every rule errs on the side of signalling.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from llmisvc_core import limits, naming
from llmisvc_core.merge.presets import apply_router_presets
from llmisvc_core.models import kube
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world import status_merge
from llmisvc_core.world.config import (
    CONFIGMAP_NAME,
    INGRESS_KEY,
    ConfigError,
    Environment,
    RouterConfig,
    load_router_config,
)
from llmisvc_watcher import groups, model_names, uses
from llmisvc_watcher.config_users import config_users
from llmisvc_watcher.model import DELETED, MODIFIED, Affected, WatchEvent, Wire

#: A CRD of these groups appearing, changing its served versions or going away affects every service.
ROUTING_CRD_GROUPS = frozenset(
    {kube.GATEWAY_GROUP, kube.POOL_V1_GROUP, kube.POOL_V1ALPHA2_GROUP, kube.SERVING_GROUP}
)

Key = uses.Key
log = logging.getLogger(__name__)


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
    """The services, the HTTPRoutes and the config as last seen, and the index of what each service uses
    (``llmisvc_watcher.uses``), updated per event: mapping an event on a Gateway, route or pool to its
    services costs the same with ten services or ten thousand."""

    env: Environment
    config: RouterConfig
    shadow: bool = False  # the deployment writes nothing: no status change is the echo of its own
    services: dict[Key, Wire] = field(default_factory=dict)
    routes: dict[Key, Wire] = field(default_factory=dict)
    _merged: dict[Key, LLMInferenceService | None] = field(default_factory=dict, repr=False)
    _index: uses.UsersIndex = field(default_factory=uses.UsersIndex, repr=False)
    group_index: groups.GroupIndex = field(default_factory=groups.GroupIndex, repr=False)
    model_index: model_names.ModelNameIndex = field(default_factory=model_names.ModelNameIndex, repr=False)

    @classmethod
    def empty(cls, env: Environment, shadow: bool = False) -> WatchedWorld:
        return cls(env=env, config=router_config(None, env), shadow=shadow)

    def apply(self, event: WatchEvent) -> None:
        """Remember what the event says (after :func:`affected_services` looked at the world before it)."""
        key = (event.namespace, event.name)
        gone = event.type == DELETED
        if event.resource == kube.LLMISVC:
            self._put_service(key, None if gone else event.obj)
        elif event.resource == kube.HTTPROUTE:
            _put(self.routes, key, None if gone else event.obj)
            # The parentRefs of a route a service names are among the service's Gateways.
            for service in self._index.users(uses.SPEC_ROUTE, key):
                self._reindex(service)
        elif is_router_configmap(event, self.env):
            config = router_config(None if gone else event.obj, self.env)
            if config != self.config:
                self.config = config
                self._merged.clear()
                for service in self.services:
                    self._reindex(service)

    def merged(self, key: Key) -> LLMInferenceService | None:
        """The service with the router presets applied (None if its spec does not parse)."""
        if key not in self._merged:
            self._merged[key] = _merge(self.services[key], self.config)
        return self._merged[key]

    def service_keys(self) -> list[Key]:
        return sorted(self.services)

    def users(self, kind: str, used: Key) -> list[Key]:
        """The services that use ``used`` (a ``llmisvc_watcher.uses`` kind), in a stable order."""
        return sorted(self._index.users(kind, used))

    def _put_service(self, key: Key, obj: Wire | None) -> None:
        previous = self.services.get(key)
        self.group_index.put(key, obj)
        self.model_index.put(key, obj)
        if obj is None:
            self.services.pop(key, None)
            self._merged.pop(key, None)
            if previous is not None:
                self._index.remove(key)
            return
        self.services[key] = obj
        if previous is None or _spec_changed(previous, obj):
            self._merged.pop(key, None)  # the presets apply to the spec: a status write keeps them
        self._reindex(key)

    def _reindex(self, key: Key) -> None:
        try:
            view = uses.ServiceView(key[0], self.services[key], self.merged(key))
            found = uses.service_uses(view, self.config, self.routes)
        except Exception as err:  # one service that cannot be mapped must not stop the others' events
            log.warning("cannot tell what LLMInferenceService %s/%s uses: %s", *key, _one_line(err))
            found = {}  # its own events still signal it; its pass reports what is wrong in its status
        self._index.put(key, found)


def only_router_status_changed(before: Wire, after: Wire) -> bool:
    """Nothing changed but what a router status write may change (``status_merge.is_router_write``: its
    conditions, URL, addresses, router status, observedGeneration, and the conditions it initialises when
    missing); a change by anyone else still triggers a pass."""
    if _spec_changed(before, after):
        return False
    return status_merge.is_router_write(_status(before), _status(after))


def _spec_changed(before: Wire, after: Wire) -> bool:
    """Anything but the status differs; an object too deep to compare counts as changed."""
    if limits.too_deep(before) or limits.too_deep(after):
        return True
    return _without_status(before) != _without_status(after)


def _status(svc: Wire) -> Wire:
    status = svc.get("status")
    return dict(status) if isinstance(status, dict) else {}


def _one_line(err: BaseException) -> str:
    return " ".join(f"{type(err).__name__}: {err}".split())[:300]


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
    """None for a spec that cannot be read: invalid, or nested past ``limits.MAX_DEPTH`` (the recursive
    readers would fail on it); the service's own pass reports why in its status."""
    if limits.too_deep(wire):
        return None
    try:
        return apply_router_presets(LLMInferenceService.from_wire(wire), config)
    except (ValueError, RecursionError):  # pydantic's ValidationError is a ValueError
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
        key = (event.namespace, event.name)
        previous = world.services.get(key)
        peers = [] if event.initial else _group_peers(event, key, previous, world)
        claimants = [] if event.initial else _name_claimants(event, key, previous, world)
        reason = event.describe()
        affected = [Affected(ns, name, f"{reason} (a member of its routing group)") for ns, name in peers]
        affected += [
            Affected(ns, name, f"{reason} (it claims one of the same model names)")
            for ns, name in claimants
            if (ns, name) not in peers
        ]
        if (
            not world.shadow
            and event.type == MODIFIED
            and previous is not None
            and only_router_status_changed(previous, event.obj)
        ):
            return affected  # the router's own status write: the pass that made it already saw this world
        return [Affected(event.namespace, event.name, reason), *affected]
    if event.initial:
        return []  # the world as it was at start-up: every service's first pass reads it anyway
    keys: list[Key] = [*_owner(event)]
    rule = _RULES.get(event.resource)
    if rule is not None:
        try:
            keys += rule(event, world)
        except Exception as err:  # the owner (above) and the other rules still apply
            log.warning("cannot map %s to its services: %s", event.describe(), _one_line(err))
    if event.resource == kube.CRD and crd_changes_routing(event):
        keys += world.service_keys()
    if is_router_configmap(event, world.env) and ingress_changed(event):
        keys += world.service_keys()
    reason = event.describe()
    return [Affected(ns, name, reason) for ns, name in dict.fromkeys(keys)]


def _group_peers(event: WatchEvent, key: Key, previous: Wire | None, world: WatchedWorld) -> list[Key]:
    try:
        return groups.affected_peers(event.type, key, previous, event.obj, world.group_index)
    except Exception as err:  # the service itself is still signalled
        log.warning("cannot map %s to its routing group: %s", event.describe(), _one_line(err))
        return []


def _name_claimants(event: WatchEvent, key: Key, previous: Wire | None, world: WatchedWorld) -> list[Key]:
    try:
        return model_names.affected_claimants(event.type, key, previous, event.obj, world.model_index)
    except Exception as err:  # the service itself is still signalled
        log.warning(
            "cannot map %s to the services sharing its model names: %s", event.describe(), _one_line(err)
        )
        return []


def _owner(event: WatchEvent) -> list[Key]:
    try:
        return owner_of(event.obj)
    except (AttributeError, TypeError):  # malformed metadata: no owner to tell
        return []


def owner_of(obj: Wire) -> list[Key]:
    """The LLMInferenceService that controls a managed object (its label and controller reference)."""
    meta = obj.get("metadata") or {}
    if not naming.is_part_of(meta.get("labels")):
        return []
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == kube.LLMISVC.kind and ref.get("name"):
            return [(str(meta.get("namespace") or ""), str(ref["name"]))]
    return []


def gateway_users(event: WatchEvent, world: WatchedWorld) -> list[Key]:
    return world.users(uses.GATEWAY, (event.namespace, event.name))


def route_users(event: WatchEvent, world: WatchedWorld) -> list[Key]:
    return world.users(uses.HTTPROUTE, (event.namespace, event.name))


def pool_users(event: WatchEvent, world: WatchedWorld) -> list[Key]:
    return world.users(uses.POOL, (event.namespace, event.name))


def crd_changes_routing(event: WatchEvent) -> bool:
    """A routing CRD appeared, went away, became Established (kube-apiserver serves its kind from then
    on: a pass signalled by its creation may have run before), or changed which versions it serves."""
    if str((event.obj.get("spec") or {}).get("group") or "") not in ROUTING_CRD_GROUPS:
        return False
    if event.type != MODIFIED or event.old is None:
        return True
    return _served_versions(event.obj) != _served_versions(event.old) or kube.crd_established(
        event.obj
    ) != kube.crd_established(event.old)


def ingress_changed(event: WatchEvent) -> bool:
    """Only the ``ingress`` key matters to the router; other keys of the ConfigMap change nothing."""
    if event.type != MODIFIED or event.old is None:
        return True
    return _ingress(event.obj) != _ingress(event.old)


_Rule = Callable[[WatchEvent, WatchedWorld], list[Key]]


def llmisvc_config_users(event: WatchEvent, world: WatchedWorld) -> list[Key]:
    return config_users(event, world.services, world.env)


_RULES: dict[kube.ResourceType, _Rule] = {
    kube.LLMISVC_CONFIG: llmisvc_config_users,
    kube.GATEWAY: gateway_users,
    kube.HTTPROUTE: route_users,
    kube.POOL_V1: pool_users,
    kube.POOL_V1ALPHA2: pool_users,
}


# --- reading the wire loosely --------------------------------------------------------------------


def _served_versions(crd: Wire) -> list[str]:
    versions = (crd.get("spec") or {}).get("versions") or []
    return sorted(str(v.get("name")) for v in versions if isinstance(v, dict) and v.get("served"))


def _ingress(configmap: Wire) -> object:
    return (configmap.get("data") or {}).get(INGRESS_KEY)
