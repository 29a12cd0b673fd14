"""What a gateway controller would write: desired status of Gateways, HTTPRoutes and InferencePools.

Pure functions of the objects and the :class:`ControllerConfig`; the threads that watch and write
live in :mod:`llmisvc_devstack.controllers.gateway`. A condition keeps its ``lastTransitionTime``
while its status is unchanged, so an unchanged world yields an identical status (and no write).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from llmisvc_devstack.controlplane.crds import GATEWAY_GROUP, POOL_V1_GROUP, POOL_V1ALPHA2_GROUP


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    """An object's metadata, or an empty dict for one without (as a half-written object may be)."""
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


def now() -> str:
    """A condition's lastTransitionTime: RFC 3339 in UTC, to the second, as Kubernetes writes it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


Obj = dict[str, Any]
DEFAULT_ADDRESSES: tuple[dict[str, str], ...] = ({"type": "IPAddress", "value": "203.0.113.10"},)


@dataclass(frozen=True)
class ControllerConfig:
    controller_name: str = "gateway.standin.local/controller"
    accepted_pool_groups: frozenset[str] = frozenset({POOL_V1_GROUP, POOL_V1ALPHA2_GROUP})
    addresses: tuple[dict[str, str], ...] = DEFAULT_ADDRESSES
    # True rejects all; a set rejects the "namespace/name"s listed.
    reject_gateways: bool | frozenset[str] = False
    reject_routes: bool | frozenset[str] = False
    lag_seconds: float = 0.0
    # The least time between two rounds over every route and pool (changes meanwhile are batched).
    min_round_seconds: float = 0.05
    # Which gateways' status to write: None means every Gateway (no real GatewayClass needed).
    gateway_class_names: frozenset[str] | None = field(default=None)

    def __post_init__(self) -> None:
        # Accept any iterable of names from callers (a list, a set) but keep the config hashable.
        for name in ("accepted_pool_groups", "reject_gateways", "reject_routes", "gateway_class_names"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, (bool, frozenset)):
                object.__setattr__(self, name, frozenset(value))
        object.__setattr__(self, "addresses", tuple(dict(a) for a in self.addresses))


def key_of(obj: Obj) -> str:
    m = meta(obj)
    return f"{m.get('namespace', '')}/{m.get('name', '')}"


def rejects(setting: bool | frozenset[str], obj: Obj) -> bool:
    return setting if isinstance(setting, bool) else key_of(obj) in setting


def condition(type_: str, ok: bool, reason: str, message: str, obj: Obj, previous: Iterable[Obj]) -> Obj:
    status = "True" if ok else "False"
    old = next((c for c in previous if c.get("type") == type_), None)
    since = old.get("lastTransitionTime") if old and old.get("status") == status else None
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": int(meta(obj).get("generation") or 0),
        "lastTransitionTime": since or now(),
    }


def gateway_status(gateway: Obj, config: ControllerConfig) -> Obj:
    """The Gateway's whole desired status (fields this controller does not manage are kept)."""
    current = dict(gateway.get("status") or {})
    old = current.get("conditions") or []
    rejected = rejects(config.reject_gateways, gateway)
    conditions = [
        condition("Accepted", True, "Accepted", "Gateway accepted by the simulated controller", gateway, old),
        condition(
            "Programmed",
            not rejected,
            "Invalid" if rejected else "Programmed",
            "Gateway rejected by the simulated controller" if rejected else "Gateway programmed",
            gateway,
            old,
        ),
    ]
    status: Obj = {**current, "conditions": conditions}
    status.pop("addresses", None)
    if not rejected:
        status["addresses"] = [dict(a) for a in config.addresses]
    return status


def _invalid_pool_group(route: Obj, config: ControllerConfig) -> str | None:
    for rule in (route.get("spec") or {}).get("rules") or []:
        for ref in rule.get("backendRefs") or []:
            if ref.get("kind") == "InferencePool" and ref.get("group", "") not in config.accepted_pool_groups:
                return str(ref.get("group", ""))
    return None


def _unique(refs: Iterable[Obj]) -> list[Obj]:
    seen: dict[str, Obj] = {}
    for ref in refs:
        seen.setdefault(json.dumps(ref, sort_keys=True), ref)
    return list(seen.values())


def route_parents(route: Obj, config: ControllerConfig) -> list[Obj]:
    """The route's ``status.parents``: other controllers' entries kept, then one of ours per parentRef."""
    old_parents = (route.get("status") or {}).get("parents") or []
    theirs = [p for p in old_parents if p.get("controllerName") != config.controller_name]
    rejected = rejects(config.reject_routes, route)
    bad_group = _invalid_pool_group(route, config)
    ours = []
    for ref in _unique((route.get("spec") or {}).get("parentRefs") or []):
        previous = next((p.get("conditions") or [] for p in old_parents if p.get("parentRef") == ref), [])
        accepted = (
            condition(
                "Accepted",
                False,
                "NotAccepted",
                "Route rejected by the simulated controller",
                route,
                previous,
            )
            if rejected
            else condition("Accepted", True, "Accepted", "Route was valid", route, previous)
        )
        resolved = (
            condition("ResolvedRefs", False, "InvalidKind", f"Group is invalid: {bad_group}", route, previous)
            if bad_group is not None
            else condition(
                "ResolvedRefs", True, "ResolvedRefs", "Resolved all the Object references", route, previous
            )
        )
        ours.append(
            {"parentRef": ref, "controllerName": config.controller_name, "conditions": [accepted, resolved]}
        )
    return [*theirs, *ours]


def _gateways_of(route: Obj) -> list[tuple[str, str]]:
    namespace = meta(route).get("namespace", "")
    found = []
    for ref in (route.get("spec") or {}).get("parentRefs") or []:
        if ref.get("group", GATEWAY_GROUP) == GATEWAY_GROUP and ref.get("kind", "Gateway") == "Gateway":
            found.append((str(ref.get("namespace") or namespace), str(ref.get("name", ""))))
    return found


def _references(route: Obj, pool: Obj, pool_group: str) -> bool:
    pool_meta, route_ns = meta(pool), meta(route).get("namespace", "")
    for rule in (route.get("spec") or {}).get("rules") or []:
        for ref in rule.get("backendRefs") or []:
            if (
                ref.get("kind") == "InferencePool"
                and ref.get("group", "") == pool_group
                and ref.get("name") == pool_meta.get("name")
                and (ref.get("namespace") or route_ns) == pool_meta.get("namespace")
            ):
                return True
    return False


def routes_by_pool(routes: Iterable[Obj]) -> dict[tuple[str, str, str], list[Obj]]:
    """The routes indexed by the InferencePools they send traffic to: (group, namespace, name) -> routes,
    so a controller pass over N pools reads each route once instead of once per pool."""
    index: dict[tuple[str, str, str], list[Obj]] = {}
    for route in routes:
        try:
            targets = _pool_targets(route)
        except (AttributeError, TypeError):  # a malformed route sends traffic nowhere
            continue
        for target in targets:
            index.setdefault(target, []).append(route)
    return index


def _pool_targets(route: Obj) -> set[tuple[str, str, str]]:
    route_ns = meta(route).get("namespace", "")
    return {
        (str(ref.get("group", "")), str(ref.get("namespace") or route_ns), str(ref.get("name")))
        for rule in (route.get("spec") or {}).get("rules") or []
        for ref in rule.get("backendRefs") or []
        if ref.get("kind") == "InferencePool"
    }


def pool_parents(pool: Obj, pool_group: str, routes: Iterable[Obj], config: ControllerConfig) -> list[Obj]:
    """One Accepted parent per Gateway whose (accepted) routes send traffic to ``pool``."""
    if pool_group not in config.accepted_pool_groups:
        return []
    gateways = sorted(
        {
            gateway
            for route in routes
            if not rejects(config.reject_routes, route) and _references(route, pool, pool_group)
            for gateway in _gateways_of(route)
        }
    )
    key = "parent" if pool_group == POOL_V1ALPHA2_GROUP else "parents"
    old_parents = (pool.get("status") or {}).get(key) or []
    parents = []
    for namespace, name in gateways:
        ref = {"group": GATEWAY_GROUP, "kind": "Gateway", "name": name, "namespace": namespace}
        previous = next((p.get("conditions") or [] for p in old_parents if p.get("parentRef") == ref), [])
        conditions = [
            condition("Accepted", True, "Accepted", "InferencePool accepted by the Gateway", pool, previous),
            condition("ResolvedRefs", True, "ResolvedRefs", "Resolved all the references", pool, previous),
        ]
        parents.append({"parentRef": ref, "conditions": conditions})
    return parents


def gatewayclass_status(gateway_class: Obj, config: ControllerConfig) -> Obj | None:
    if (gateway_class.get("spec") or {}).get("controllerName") != config.controller_name:
        return None
    current = dict(gateway_class.get("status") or {})
    accepted = condition(
        "Accepted",
        True,
        "Accepted",
        "Handled by the simulated controller",
        gateway_class,
        current.get("conditions") or [],
    )
    return {**current, "conditions": [accepted]}
