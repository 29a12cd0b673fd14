"""Field-by-field comparison of what KServe's controller and this router write for the same service.

Two runs reconcile the same services in two namespace pairs (each a namespace and a KServe namespace); a
*snapshot* of a run holds, per service, its router objects (the HTTPRoute, both InferencePools, the EPP
Service), the router's conditions and the URLs it publishes (``status.url``, ``address``, ``addresses``).
:func:`normalise` strips what legitimately differs between two runs (uids, resourceVersions, timestamps,
managedFields, the namespaces' generated names, the status that the gateway controller writes on a route)
and :func:`differences` lists every remaining difference as one line
``<service> <object> <path>: <kserve> != <router>``. No I/O here: the fidelity test and the peer benchmark
take the snapshots.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast

from llmisvc_core import naming

Wire = dict[str, Any]
T = TypeVar("T")
#: Set by the API server, or by whoever writes first: never the reconciler's decision.
SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
#: The conditions of the router (KServe's ``router_conditions`` / ``status.go``); the workload's are not
#: this project's (Ready aggregates both).
ROUTER_CONDITIONS = ("HTTPRoutesReady", "InferencePoolReady", "SchedulerWorkloadReady", "RouterReady")
MISSING = "<absent>"


def router_objects(service: str) -> dict[str, str]:
    """The router objects of ``service`` by kind label: what both controllers create for the presets."""
    return {
        "HTTPRoute": naming.route_name(service),
        "InferencePool/v1": naming.pool_name(service),
        "InferencePool/v1alpha2": naming.pool_name(service),
        "Service/epp": naming.epp_service_name(service),
    }


def _placeholders(value: T, names: Mapping[str, str]) -> T:
    """``value`` with each of a run's namespace names replaced by its placeholder, wherever it appears."""
    text = json.dumps(value, sort_keys=True)
    for name in sorted(names, key=len, reverse=True):  # "kserve-x" before a shorter name inside it
        text = text.replace(name, names[name])
    return cast(T, json.loads(text))


def normalise(obj: Wire | None, names: Mapping[str, str]) -> Wire | None:
    """``obj`` without what two runs cannot share; ``names`` maps a run's namespaces to placeholders."""
    if obj is None:
        return None
    metadata = {k: v for k, v in obj.get("metadata", {}).items() if k not in SERVER_SET}
    metadata["ownerReferences"] = [
        {k: v for k, v in ref.items() if k != "uid"} for ref in metadata.get("ownerReferences", [])
    ]
    spec = dict(obj.get("spec", {}))
    if obj.get("kind") == "Service":  # allocated by the API server
        spec = {k: v for k, v in spec.items() if k not in ("clusterIP", "clusterIPs")}
    kept = {"metadata": metadata, "spec": spec}  # status: the gateway controller's, or the API server's
    return _placeholders(kept, names)


def router_conditions(service: Wire, names: Mapping[str, str]) -> Wire:
    """The router's conditions of ``service`` by type, without their transition times."""
    found = {c["type"]: c for c in service.get("status", {}).get("conditions", [])}
    return _placeholders(
        {
            kind: {k: v for k, v in found[kind].items() if k != "lastTransitionTime"}
            for kind in ROUTER_CONDITIONS
            if kind in found
        },
        names,
    )


def snapshot(service: Wire, objects: Mapping[str, Wire | None], names: Mapping[str, str]) -> Wire:
    """What a run wrote for one service, normalised: its router objects and conditions."""
    return {
        **{label: normalise(obj, names) for label, obj in objects.items()},
        "conditions": router_conditions(service, names),
        "addresses": _placeholders(
            {k: service.get("status", {}).get(k) for k in ("url", "address", "addresses")}, names
        ),
    }


def _walk(path: str, kserve: Any, router: Any) -> Iterable[str]:
    if isinstance(kserve, dict) and isinstance(router, dict):
        for key in sorted(set(kserve) | set(router)):
            yield from _walk(f"{path}.{key}", kserve.get(key, MISSING), router.get(key, MISSING))
    elif isinstance(kserve, list) and isinstance(router, list) and len(kserve) == len(router):
        for index, (left, right) in enumerate(zip(kserve, router, strict=True)):
            yield from _walk(f"{path}[{index}]", left, right)
    elif kserve != router:
        yield f"{path}: {json.dumps(kserve, sort_keys=True)} != {json.dumps(router, sort_keys=True)}"


def differences(kserve: Mapping[str, Wire], router: Mapping[str, Wire]) -> list[str]:
    """Every difference between two runs' snapshots (by service), one line each."""
    lines: list[str] = []
    for service in sorted(set(kserve) | set(router)):
        left, right = kserve.get(service, {}), router.get(service, {})
        for label in sorted(set(left) | set(right)):
            lines.extend(f"{service} {label}{line}" for line in _walk("", left.get(label), right.get(label)))
    return lines
