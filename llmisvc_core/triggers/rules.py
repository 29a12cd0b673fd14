"""Which LLMInferenceServices a change affects (spec 1.8, re-evaluation triggers). Pure: no I/O.

:func:`affected_services` reads the cluster after the change (:class:`~llmisvc_core.triggers.change.
IndexedCluster`, the process's cache) and finds the services through its index of what each service
uses (:mod:`llmisvc_core.triggers.uses`, the one answer to that question), so one change costs the same
whatever the number of services. The rules:

* the LLMInferenceService itself;
* an LLMInferenceService of a routing group -> the other members of its group, and of the group it
  left, when it is created or deleted or its traffic fields change (:mod:`llmisvc_core.triggers.groups`,
  KServe's ``groupMemberEventHandler``): even the router's own status write on a member is such a
  change when it flips the member's RouterReady or its advertised models, which its peers route by;
* an LLMInferenceService -> the other services of its namespace that claim a model name it claimed or
  claims, when it is created or deleted or what their collision check reads of it changes
  (:mod:`llmisvc_core.triggers.model_names`, the ``ModelNameCollision`` Warning);
* an owned object (label ``app.kubernetes.io/part-of=llminferenceservice`` and a controller owner
  reference of kind LLMInferenceService) -> its owner;
* a Gateway -> services whose status lists it, whose spec merged with its presets and baseRefs names it
  in ``gateway.refs`` or in the managed route's parentRefs (how the default ingress gateway is used), or
  that use it through the parentRefs of an HTTPRoute they reference;
* a GatewayClass -> the services using a Gateway of that class; a Service labelled for a Gateway (or
  named like one) -> the services using that Gateway (URL discovery reads both);
* an HTTPRoute -> services whose status lists it or whose ``route.http.refs`` names it;
* an InferencePool (either group) -> services of its namespace whose ``scheduler.pool.ref`` names it;
* an LLMInferenceServiceConfig -> the services that use it (:mod:`llmisvc_core.triggers.configs`);
* a CRD of the Gateway API, Inference Extension or KServe groups, or a change of the ingress settings
  in ``inferenceservice-config`` -> every service.

A change of a service that only touches the status fields the router writes itself is not a trigger:
it is the echo of a pass that already ran. In shadow mode the router writes no status, so such a change
is another writer's (KServe's), and the drift it makes or ends is the pass's to report: it is a trigger.
Signalling a service that turns out not to care costs one idle pass; missing one leaves it stale until
the resync, so every rule errs on the side of signalling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from llmisvc_core import limits, naming
from llmisvc_core.models import kube
from llmisvc_core.triggers import configs, groups, model_names, uses
from llmisvc_core.triggers.change import (
    MODIFIED,
    Affected,
    Change,
    IndexedCluster,
    IndexFn,
    Key,
    Wire,
    key_of,
)
from llmisvc_core.world import status_merge
from llmisvc_core.world.config import CONFIGMAP_NAME, INGRESS_KEY, Environment
from llmisvc_core.world.snapshot import Reader

#: A CRD of these groups appearing, changing its served versions or going away affects every service.
ROUTING_CRD_GROUPS = frozenset(
    {kube.GATEWAY_GROUP, kube.POOL_V1_GROUP, kube.POOL_V1ALPHA2_GROUP, kube.SERVING_GROUP}
)

Warn = Callable[[str], None]


def _ignore(message: str) -> None:
    return None


def affected_services(
    change: Change, cluster: IndexedCluster, env: Environment, shadow: bool = False, warn: Warn = _ignore
) -> list[Affected]:
    """The services ``change`` may change the routing of, each once, in a stable order. ``cluster`` is
    the cluster after the change; ``shadow``: the deployment writes nothing, so no status change is the
    echo of its own; ``warn`` hears of a rule that could not read an object (the others still apply)."""
    if change.resource == kube.LLMISVC:
        return _service_changed(change, cluster, shadow, warn)
    if change.initial:
        return []  # the world as it was at start-up: every service's first pass reads it anyway
    keys: list[Key] = [*_owner(change)]
    rule = _RULES.get(change.resource)
    if rule is not None:
        try:
            keys += rule(change, cluster, env)
        except Exception as err:  # the owner (above) and the other rules still apply
            warn(f"cannot map {change.describe()} to its services: {_one_line(err)}")
    if change.resource == kube.CRD and crd_changes_routing(change):
        keys += _every_service(cluster)
    if is_router_configmap(change, env) and ingress_changed(change):
        keys += _every_service(cluster)
    reason = change.describe()
    return [Affected(ns, name, reason) for ns, name in dict.fromkeys(keys)]


def _service_changed(change: Change, cluster: IndexedCluster, shadow: bool, warn: Warn) -> list[Affected]:
    key = (change.namespace, change.name)
    previous = change.old
    reason = change.describe()
    peers: list[Key] = []
    claimants: list[Key] = []
    if not change.initial:
        try:
            peers = groups.affected_peers(change.type, key, previous, change.obj, _members(cluster))
        except Exception as err:  # the service itself is still signalled
            warn(f"cannot map {reason} to its routing group: {_one_line(err)}")
        try:
            claimants = model_names.affected_claimants(
                change.type, key, previous, change.obj, _claimants(cluster)
            )
        except Exception as err:  # the service itself is still signalled
            warn(f"cannot map {reason} to the services sharing its model names: {_one_line(err)}")
    affected = [Affected(ns, name, f"{reason} (a member of its routing group)") for ns, name in peers]
    affected += [
        Affected(ns, name, f"{reason} (it claims one of the same model names)", held=True)
        for ns, name in claimants
        if (ns, name) not in peers
    ]
    if (
        not shadow
        and change.type == MODIFIED
        and previous is not None
        and only_router_status_changed(previous, change.obj)
    ):
        return affected  # the router's own status write: the pass that made it already saw this world
    return [Affected(change.namespace, change.name, reason), *affected]


def users(cluster: IndexedCluster, kind: str, namespace: str, name: str) -> list[Key]:
    """The services that use ``namespace/name`` of ``kind`` (a :mod:`llmisvc_core.triggers.uses` kind),
    in a stable order."""
    found = cluster.by_index(kube.LLMISVC, uses.USES, uses.value(kind, namespace, name))
    return sorted(key_of(svc) for svc in found)


def _members(cluster: IndexedCluster) -> Callable[[str, str], list[Key]]:
    return lambda namespace, group: users(cluster, uses.GROUP, namespace, group)


def _claimants(cluster: IndexedCluster) -> Callable[[str, frozenset[str]], list[Key]]:
    def claimants(namespace: str, names: frozenset[str]) -> list[Key]:
        return sorted({k for name in names for k in users(cluster, uses.MODEL_NAME, namespace, name)})

    return claimants


def _every_service(cluster: IndexedCluster) -> list[Key]:
    return sorted(key_of(svc) for svc in cluster.list_all(kube.LLMISVC))


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


def is_router_configmap(change: Change, env: Environment) -> bool:
    return (
        change.resource == kube.CONFIGMAP
        and change.name == CONFIGMAP_NAME
        and change.namespace == env.kserve_namespace
    )


# --- the rules of the other kinds --------------------------------------------------------------------


def _owner(change: Change) -> list[Key]:
    try:
        return owner_of(change.obj)
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


def gateway_users(change: Change, cluster: IndexedCluster, env: Environment) -> list[Key]:
    return users(cluster, uses.GATEWAY, change.namespace, change.name)


def gateway_class_users(change: Change, cluster: IndexedCluster, env: Environment) -> list[Key]:
    """The services using a Gateway of this class (discovery reads a Gateway's class)."""
    found = cluster.by_index(kube.GATEWAY, GATEWAY_CLASS, change.name)
    return [
        k for gateway in sorted(found, key=key_of) for k in users(cluster, uses.GATEWAY, *key_of(gateway))
    ]


def backing_service_users(change: Change, cluster: IndexedCluster, env: Environment) -> list[Key]:
    """The services using the Gateway a Service is labelled for, or named like (R-SVC-1/2)."""
    gateways = _gateway_labels(change.obj) | _gateway_labels(change.old or {}) | {change.name}
    return [k for name in sorted(gateways) for k in users(cluster, uses.GATEWAY, change.namespace, name)]


def route_users(change: Change, cluster: IndexedCluster, env: Environment) -> list[Key]:
    return users(cluster, uses.HTTPROUTE, change.namespace, change.name)


def pool_users(change: Change, cluster: IndexedCluster, env: Environment) -> list[Key]:
    return users(cluster, uses.POOL, change.namespace, change.name)


def config_users(change: Change, cluster: IndexedCluster, env: Environment) -> list[Key]:
    """The services that use the config, in the namespaces it can serve."""
    found = cluster.by_index(kube.LLMISVC, uses.USES, uses.value(uses.CONFIG, "", change.name))
    return sorted(k for k in map(key_of, found) if configs.serves(change.namespace, k[0], env))


def crd_changes_routing(change: Change) -> bool:
    """A routing CRD appeared, went away, became Established (kube-apiserver serves its kind from then
    on: a pass signalled by its creation may have run before), or changed which versions it serves."""
    if str((change.obj.get("spec") or {}).get("group") or "") not in ROUTING_CRD_GROUPS:
        return False
    if change.type != MODIFIED or change.old is None:
        return True
    return _served_versions(change.obj) != _served_versions(change.old) or kube.crd_established(
        change.obj
    ) != kube.crd_established(change.old)


def ingress_changed(change: Change) -> bool:
    """Only the ``ingress`` key matters to the router; other keys of the ConfigMap change nothing."""
    if change.type != MODIFIED or change.old is None:
        return True
    return _ingress(change.obj) != _ingress(change.old)


_Rule = Callable[[Change, IndexedCluster, Environment], list[Key]]

_RULES: dict[kube.ResourceType, _Rule] = {
    kube.LLMISVC_CONFIG: config_users,
    kube.GATEWAY: gateway_users,
    kube.GATEWAYCLASS: gateway_class_users,
    kube.SERVICE: backing_service_users,
    kube.HTTPROUTE: route_users,
    kube.POOL_V1: pool_users,
    kube.POOL_V1ALPHA2: pool_users,
}

#: The index on Gateways by their class, for :func:`gateway_class_users`.
GATEWAY_CLASS = "gatewayClassName"


def gateway_class(gateway: Wire) -> list[str]:
    """The index function of :data:`GATEWAY_CLASS`."""
    spec = gateway.get("spec")
    name = (spec if isinstance(spec, dict) else {}).get("gatewayClassName")
    return [name] if isinstance(name, str) and name else []


def indexes(
    reader: Reader, env: Environment, warn: Warn = _ignore
) -> list[tuple[kube.ResourceType, str, IndexFn]]:
    """The indexes the rules look up, to add to the cache that ``reader`` reads (``add_index``)."""

    def service_uses(svc: Wire) -> list[str]:
        try:
            return uses.index_values(uses.service_uses(svc, reader, env), key_of(svc)[0])
        except Exception as err:  # one service that cannot be mapped must not stop the others' events
            warn(f"cannot tell what LLMInferenceService {'/'.join(key_of(svc))} uses: {_one_line(err)}")
            return []  # its own events still signal it; its pass reports what is wrong in its status

    return [(kube.LLMISVC, uses.USES, service_uses), (kube.GATEWAY, GATEWAY_CLASS, gateway_class)]


def to_reindex(change: Change, affected: Iterable[Affected]) -> list[Key]:
    """The services whose uses may have changed with ``change`` beyond their own events: those it
    affects, when it is of a kind their uses are read through (:data:`~llmisvc_core.triggers.uses.
    READ_THROUGH`)."""
    if change.resource not in uses.READ_THROUGH:
        return []
    return list(dict.fromkeys((a.namespace, a.name) for a in affected))


# --- reading the wire loosely --------------------------------------------------------------------


def _gateway_labels(obj: Wire) -> set[str]:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    name = labels.get(naming.GATEWAY_NAME_LABEL) if isinstance(labels, dict) else None
    return {name} if isinstance(name, str) and name else set()


def _served_versions(crd: Wire) -> list[str]:
    versions = (crd.get("spec") or {}).get("versions") or []
    return sorted(str(v.get("name")) for v in versions if isinstance(v, dict) and v.get("served"))


def _ingress(configmap: Wire) -> object:
    return (configmap.get("data") or {}).get(INGRESS_KEY)
