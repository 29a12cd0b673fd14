"""Builders of cluster objects for tests: small functions returning wire dicts, plus a snapshot maker."""

from __future__ import annotations

from typing import Any

from router_core.models.kube import KNOWN_TYPES, ResourceType
from router_core.models.llmisvc import LLMInferenceService
from router_core.planner.passes import plan_pass
from router_core.planner.plan import PassPlan
from router_core.world.config import Environment
from router_core.world.snapshot import Snapshot, snapshot_of

NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-01T00:05:00Z"
UID = "uid-1"
Wire = dict[str, Any]


def service(name: str = "svc", namespace: str = "ns", *, router: Wire | None = None, **spec: Any) -> Wire:
    body: Wire = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": name, "namespace": namespace, "uid": UID, "generation": 1},
        "spec": dict(spec),
    }
    if router is not None:
        body["spec"]["router"] = router
    return body


def llmisvc_config(name: str, namespace: str = "kserve", **spec: Any) -> Wire:
    """An LLMInferenceServiceConfig (``serving.kserve.io/v1alpha2``)."""
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceServiceConfig",
        "metadata": {"name": name, "namespace": namespace},
        "spec": dict(spec),
    }


def stopped(svc: Wire, value: str = "true") -> Wire:
    svc["metadata"].setdefault("annotations", {})["serving.kserve.io/stop"] = value
    return svc


def gateway_class(name: str = "istio") -> Wire:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": {"name": name},
        "spec": {"controllerName": "example.com/gateway"},
    }


def gateway(
    name: str = "gw",
    namespace: str = "ns",
    *,
    listeners: list[Wire] | None = None,
    addresses: list[str] | None = None,
    programmed: str | None = "True",
    annotations: dict[str, str] | None = None,
) -> Wire:
    status: Wire = {}
    if addresses:
        status["addresses"] = [{"value": a} for a in addresses]
    if programmed is not None:
        status["conditions"] = [{"type": "Programmed", "status": programmed, "reason": "Programmed"}]
    meta: Wire = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": meta,
        "spec": {
            "gatewayClassName": "istio",
            "listeners": listeners
            if listeners is not None
            else [{"name": "http", "protocol": "HTTP", "port": 80}],
        },
        "status": status,
    }


def parent_status(
    gw: str,
    namespace: str,
    *,
    accepted: str = "True",
    resolved: str = "True",
    reason: str = "ResolvedRefs",
    generation: int = 1,
    message: str = "",
) -> Wire:
    return {
        "parentRef": {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": gw,
            "namespace": namespace,
        },
        "controllerName": "example.com/gateway",
        "conditions": [
            {
                "type": "Accepted",
                "status": accepted,
                "reason": "Accepted",
                "observedGeneration": generation,
                "message": message,
            },
            {
                "type": "ResolvedRefs",
                "status": resolved,
                "reason": reason,
                "observedGeneration": generation,
                "message": message,
            },
        ],
    }


def http_route(
    name: str,
    namespace: str = "ns",
    *,
    parents: list[tuple[str, str]] | None = None,
    rules: list[Wire] | None = None,
    status_parents: list[Wire] | None = None,
    owner_uid: str | None = None,
    annotations: dict[str, str] | None = None,
    generation: int = 1,
) -> Wire:
    meta: Wire = {"name": name, "namespace": namespace, "generation": generation, "resourceVersion": "7"}
    if owner_uid is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "serving.kserve.io/v1alpha2",
                "kind": "LLMInferenceService",
                "name": "svc",
                "uid": owner_uid,
                "controller": True,
            }
        ]
    if annotations:
        meta["annotations"] = annotations
    spec: Wire = {"parentRefs": [{"name": g, "namespace": n} for n, g in parents or []]}
    if rules is not None:
        spec["rules"] = rules
    route: Wire = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": meta,
        "spec": spec,
    }
    if status_parents is not None:
        route["status"] = {"parents": status_parents}
    return route


def pool_status_parents(
    *gateways: tuple[str, str], accepted: str = "True", generation: int = 1
) -> list[Wire]:
    return [
        {
            "parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": g, "namespace": n},
            "conditions": [
                {
                    "type": "Accepted",
                    "status": accepted,
                    "reason": "Accepted",
                    "observedGeneration": generation,
                }
            ],
        }
        for n, g in gateways
    ]


def crd(type_: ResourceType) -> Wire:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": type_.crd_name},
        "spec": {
            "group": type_.group,
            "names": {"kind": type_.kind, "plural": type_.plural},
            "versions": [{"name": type_.version, "served": True}],
        },
    }


def snapshot(*objects: Wire, installed: set[ResourceType] | None = None) -> Snapshot:
    return snapshot_of(objects, installed if installed is not None else set(KNOWN_TYPES.values()))


def run(
    svc: Wire,
    *objects: Wire,
    installed: set[ResourceType] | None = None,
    env: Environment | None = None,
    now: str = NOW,
) -> PassPlan:
    model = LLMInferenceService.model_validate(svc)
    return plan_pass(model, snapshot(svc, *objects, installed=installed), env or Environment(), now)


def condition(plan: PassPlan, type_: str) -> Wire | None:
    for cond in plan.status.get("conditions", []):
        if cond["type"] == type_:
            return dict(cond)
    return None


def applied(plan: PassPlan, kind: str, name: str | None = None) -> list[Wire]:
    return [o for o in plan.apply if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def apply_plan(objects: list[Wire], plan: PassPlan, svc_key: tuple[str, str]) -> list[Wire]:
    """What the cluster holds after a plan is carried out: applied objects stored (status kept, generation
    bumped on spec changes), deleted ones gone, the service's status replaced."""
    by_key = {
        (o["kind"], o["apiVersion"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
    }
    for manifest in plan.apply:
        key = (
            manifest["kind"],
            manifest["apiVersion"],
            manifest["metadata"].get("namespace", ""),
            manifest["metadata"]["name"],
        )
        stored = dict(manifest)
        stored["metadata"] = dict(manifest["metadata"])
        old = by_key.get(key)
        if old is not None:
            if "status" in old:
                stored["status"] = old["status"]
            generation = old["metadata"].get("generation", 1)
            stored["metadata"]["generation"] = generation + (old.get("spec") != manifest.get("spec"))
        else:
            stored["metadata"]["generation"] = 1
        by_key[key] = stored
    for ref in plan.delete:
        by_key.pop((ref.kind, ref.api_version, ref.namespace or "", ref.name), None)
    ns, name = svc_key
    svc_item = by_key[("LLMInferenceService", "serving.kserve.io/v1alpha2", ns, name)]
    by_key[("LLMInferenceService", "serving.kserve.io/v1alpha2", ns, name)] = {
        **svc_item,
        "status": plan.status,
    }
    return list(by_key.values())
