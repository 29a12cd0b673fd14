"""The one set of test builders: the cluster's objects as wire dicts, each built with keyword overrides.

Every suite builds its objects here (unit, watcher, workflows, integration, cache, observability
and the benchmarks) and keeps only its scenarios. Defaults are the smallest valid object; a keyword set to
``None`` leaves its field out, so a suite states only what its scenario is about. This module holds
KServe's, the Gateway API's and the InferencePool's objects; beside it: ``kube`` (core objects, CRDs, any
known type, with the part-of labels of ``llmisvc_core.naming``), ``plans`` (one pass of the planner over a
snapshot), ``typed`` (pydantic objects for the URL discovery rules) and ``watch`` (watch events).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-01T00:05:00Z"
UID = "uid-1"
KSERVE = "kserve"
LLMISVC_API = "serving.kserve.io/v1alpha2"
GATEWAY_API = "gateway.networking.k8s.io/v1"
POOL_V1_API = "inference.networking.k8s.io/v1"
OPT_125M = "hf://facebook/opt-125m"
ORG_MODEL = "hf://org/model"
Wire = dict[str, Any]


def metadata(
    name: str,
    namespace: str | None = None,
    *,
    uid: str | None = None,
    generation: int | None = None,
    rv: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: str | None = None,
    owner_kind: str = "LLMInferenceService",
    owner_uid: str = UID,
    controller: bool = True,
) -> Wire:
    """``metadata`` holding only the fields given; ``owner`` adds a controller reference to that object."""
    meta: Wire = {"name": name}
    for key, value in (
        ("namespace", namespace),
        ("uid", uid),
        ("generation", generation),
        ("resourceVersion", rv),
        ("labels", labels),
        ("annotations", annotations),
    ):
        if value is not None:
            meta[key] = value
    if owner is not None:
        ref = {"apiVersion": LLMISVC_API, "kind": owner_kind, "name": owner, "uid": owner_uid}
        meta["ownerReferences"] = [ref | {"controller": controller}]
    return meta


# --- LLMInferenceService and its config ---------------------------------------------------------


def presets() -> Wire:
    """The router that uses every well-known preset: a managed route, gateway and scheduler."""
    return {"route": {}, "gateway": {}, "scheduler": {}}


def model(uri: str = OPT_125M, name: str | None = "facebook/opt-125m") -> Wire:
    return {"uri": uri} | ({"name": name} if name is not None else {})


def service(
    name: str = "svc",
    namespace: str | None = "ns",
    *,
    uid: str | None = UID,
    generation: int | None = 1,
    router: Wire | None = None,
    status: Wire | None = None,
    stopped: bool = False,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> Wire:
    """An LLMInferenceService whose spec is ``spec`` (``model=``…) plus ``router`` when given.

    Objects sent to an API server take ``uid=None, generation=None`` (the server sets them)."""
    if stopped:
        annotations = (annotations or {}) | {"serving.kserve.io/stop": "true"}
    body: Wire = {
        "apiVersion": LLMISVC_API,
        "kind": "LLMInferenceService",
        "metadata": metadata(name, namespace, uid=uid, generation=generation, annotations=annotations),
        "spec": dict(spec),
    }
    if router is not None:
        body["spec"]["router"] = router
    if status is not None:
        body["status"] = status
    return body


def llmisvc_config(name: str, namespace: str = KSERVE, **spec: Any) -> Wire:
    """An LLMInferenceServiceConfig (``serving.kserve.io/v1alpha2``)."""
    return {
        "apiVersion": LLMISVC_API,
        "kind": "LLMInferenceServiceConfig",
        "metadata": {"name": name, "namespace": namespace},
        "spec": dict(spec),
    }


def stopped(svc: Wire, value: str = "true") -> Wire:
    svc["metadata"].setdefault("annotations", {})["serving.kserve.io/stop"] = value
    return svc


# --- Gateway API ----------------------------------------------------------------------------------


def gateway_class(name: str = "istio", controller: str = "example.com/gateway") -> Wire:
    return {
        "apiVersion": GATEWAY_API,
        "kind": "GatewayClass",
        "metadata": {"name": name},
        "spec": {"controllerName": controller},
    }


def listener(name: str = "http", protocol: str = "HTTP", port: int = 80) -> Wire:
    return {"name": name, "protocol": protocol, "port": port}


def gateway(
    name: str = "gw",
    namespace: str | None = "ns",
    *,
    listeners: list[Wire] | None = None,
    addresses: Sequence[str | tuple[str, str]] | None = None,
    programmed: str | None = "True",
    annotations: dict[str, str] | None = None,
    class_name: str = "istio",
    conditions: list[Wire] | None = None,
    status: bool = True,
) -> Wire:
    """A Gateway with one HTTP listener on port 80, Programmed unless told otherwise; ``addresses`` are
    values or (type, value) pairs; ``conditions`` replace Programmed; ``status=False`` leaves the status out
    (the body a client creates)."""
    body: Wire = {
        "apiVersion": GATEWAY_API,
        "kind": "Gateway",
        "metadata": metadata(name, namespace, annotations=annotations),
        "spec": {
            "gatewayClassName": class_name,
            "listeners": listeners if listeners is not None else [listener()],
        },
    }
    if status:
        body["status"] = {}
        if addresses:
            body["status"]["addresses"] = [
                {"type": a[0], "value": a[1]} if isinstance(a, tuple) else {"value": a} for a in addresses
            ]
        if conditions is not None:
            body["status"]["conditions"] = conditions
        elif programmed is not None:
            body["status"]["conditions"] = [
                {"type": "Programmed", "status": programmed, "reason": "Programmed"}
            ]
    return body


def gateway_ref(name: str, namespace: str) -> Wire:
    return {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": name, "namespace": namespace}


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
    """One entry of an HTTPRoute's ``status.parents``: Accepted and ResolvedRefs as given."""
    conditions = [
        {"type": "Accepted", "status": accepted, "reason": "Accepted"},
        {"type": "ResolvedRefs", "status": resolved, "reason": reason},
    ]
    return {
        "parentRef": gateway_ref(gw, namespace),
        "controllerName": "example.com/gateway",
        "conditions": [c | {"observedGeneration": generation, "message": message} for c in conditions],
    }


def http_route(
    name: str,
    namespace: str | None = "ns",
    *,
    parents: list[tuple[str, str]] | None = None,
    parent_refs: list[Wire] | None = None,
    rules: list[Wire] | None = None,
    status_parents: list[Wire] | None = None,
    owner_uid: str | None = None,
    annotations: dict[str, str] | None = None,
    generation: int | None = 1,
    rv: str | None = "7",
) -> Wire:
    """An HTTPRoute whose parentRefs are ``parents`` as (namespace, name) pairs, or ``parent_refs`` as is."""
    meta = metadata(name, namespace, generation=generation, rv=rv, annotations=annotations)
    if owner_uid is not None:
        meta["ownerReferences"] = metadata("", owner="svc", owner_uid=owner_uid)["ownerReferences"]
    refs = parent_refs if parent_refs is not None else [{"name": g, "namespace": n} for n, g in parents or []]
    spec: Wire = {"parentRefs": refs}
    if rules is not None:
        spec["rules"] = rules
    route: Wire = {"apiVersion": GATEWAY_API, "kind": "HTTPRoute", "metadata": meta, "spec": spec}
    if status_parents is not None:
        route["status"] = {"parents": status_parents}
    return route


def pool_backend(name: str = "pool", group: str = "inference.networking.k8s.io") -> Wire:
    """A rule sending everything to an InferencePool."""
    return {"backendRefs": [{"group": group, "kind": "InferencePool", "name": name}]}


# --- InferencePool --------------------------------------------------------------------------------


def pool_status_parents(
    *gateways: tuple[str, str], accepted: str = "True", generation: int = 1
) -> list[Wire]:
    condition = {
        "type": "Accepted",
        "status": accepted,
        "reason": "Accepted",
        "observedGeneration": generation,
    }
    return [{"parentRef": gateway_ref(g, n), "conditions": [dict(condition)]} for n, g in gateways]


def inference_pool(name: str, api_version: str = POOL_V1_API, namespace: str | None = None) -> Wire:
    """An InferencePool valid under either CRD (v1 names ``targetPorts``, v1alpha2 ``targetPortNumber``)."""
    if api_version.endswith("/v1"):
        spec: Wire = {
            "selector": {"matchLabels": {"app": name}},
            "targetPorts": [{"number": 8000}],
            "endpointPickerRef": {"name": f"{name}-epp", "port": {"number": 9002}},
        }
    else:
        spec = {"selector": {"app": name}, "targetPortNumber": 8000, "extensionRef": {"name": f"{name}-epp"}}
    return {
        "apiVersion": api_version,
        "kind": "InferencePool",
        "metadata": metadata(name, namespace),
        "spec": spec,
    }
