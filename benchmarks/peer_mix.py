"""The services of the side-by-side benchmark (``bench_peer.py``) and what is compared of them.

``--mix`` gives the N services the shapes of :data:`SHAPES` in turn (managed presets with model-based
routing, LoRA adapters, a route with ``http.refs`` to a user's HTTPRoute, ``gateway.refs`` to a Gateway of
the user's, a route and gateway without a scheduler) and adds the samples of ``config/samples/`` (their
Gateway and HTTPRoute created first); without it every service has the first shape, as in
``bench_scale.py``. Once a side has converged, :func:`snapshot` reads what it wrote for each service
(``llmisvc_devstack.fidelity``: the HTTPRoute, both InferencePools, the EPP Service, the router's conditions
and URLs), so that the two sides can be compared field by field. Both sides use namespaces of the same
names, each on a control plane of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from benchmarks.kube_stack import KSERVE_NAMESPACE
from llmisvc_core.models.kube import (
    GATEWAY,
    GATEWAYCLASS,
    HTTPROUTE,
    LLMISVC,
    POOL_V1,
    POOL_V1ALPHA2,
    SERVICE,
    ResourceType,
)
from llmisvc_devstack import fidelity
from llmisvc_kube.client import KubeClusterApi
from tests import builders as b

Wire = dict[str, Any]
SAMPLES = Path(__file__).resolve().parents[1] / "config" / "samples"
#: The user's objects the shapes refer to, created in the benchmark's namespace before any service.
USER_ROUTE = "bench-user-route"
USER_GATEWAY = "bench-team-gateway"
#: The simulated gateway controller's ``controllerName`` (``llmisvc_devstack.controllers``).
CONTROLLER_NAME = "gateway.standin.local/controller"
KINDS: dict[str, ResourceType] = {
    "HTTPRoute": HTTPROUTE,
    "InferencePool/v1": POOL_V1,
    "InferencePool/v1alpha2": POOL_V1ALPHA2,
    "Service/epp": SERVICE,
}


def _managed() -> Wire:
    return {
        "model": b.model(),
        "router": b.presets(),
        "annotations": {"serving.kserve.io/model-based-routing-enabled": "true"},
    }


def _lora() -> Wire:
    adapters = [{"name": "sql-lora", "uri": "hf://yard1/llama-2-7b-sql-lora"}]
    return {
        "model": {**b.model(), "lora": {"adapters": adapters}},
        "router": b.presets(),
        "annotations": {"serving.kserve.io/model-based-routing-enabled": "true"},
    }


def _route_refs() -> Wire:
    return {"model": b.model(), "router": {"route": {"http": {"refs": [{"name": USER_ROUTE}]}}}}


def _gateway_refs() -> Wire:
    return {
        "model": b.model(),
        "router": {"route": {}, "gateway": {"refs": [{"name": USER_GATEWAY}]}, "scheduler": {}},
    }


def _no_scheduler() -> Wire:
    return {"model": b.model(), "router": {"route": {}, "gateway": {}}}


#: The shapes, by name, in the order ``--mix`` gives them to the services.
SHAPES: dict[str, Callable[[], Wire]] = {
    "managed": _managed,
    "lora": _lora,
    "route-refs": _route_refs,
    "gateway-refs": _gateway_refs,
    "no-scheduler": _no_scheduler,
}


def service(name: str, namespace: str, shape: str = "managed") -> Wire:
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": SHAPES[shape](),
    }


def services(names: list[str], namespace: str, mixed: bool) -> list[Wire]:
    """The benchmark's services: shapes in turn when ``mixed``, then the samples; else all ``managed``."""
    shapes = list(SHAPES) if mixed else ["managed"]
    bodies = [service(name, namespace, shapes[i % len(shapes)]) for i, name in enumerate(names)]
    if mixed:
        bodies += [_in(namespace, doc) for doc in _samples() if doc["kind"] == LLMISVC.kind]
    return bodies


def _samples() -> list[Wire]:
    """Every document of ``config/samples/*.yaml``."""
    return [d for p in sorted(SAMPLES.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]


def _in(namespace: str, doc: Wire) -> Wire:
    return {**doc, "metadata": {**doc["metadata"], "namespace": namespace}}


def user_objects(namespace: str) -> list[tuple[ResourceType, Wire]]:
    """What the mix's services refer to: the sample Gateways' class, a Gateway and an HTTPRoute of the
    user's, and the samples' own Gateway and HTTPRoute."""
    listener = {"name": "http", "protocol": "HTTP", "port": 80}
    objects: list[tuple[ResourceType, Wire]] = [
        (
            GATEWAYCLASS,
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "GatewayClass",
                "metadata": {"name": "standin"},
                "spec": {"controllerName": CONTROLLER_NAME},
            },
        ),
        (
            GATEWAY,
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "Gateway",
                "metadata": {"name": USER_GATEWAY, "namespace": namespace},
                "spec": {"gatewayClassName": "standin", "listeners": [listener]},
            },
        ),
        (
            HTTPROUTE,
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "HTTPRoute",
                "metadata": {"name": USER_ROUTE, "namespace": namespace},
                "spec": {
                    "parentRefs": [{"name": "kserve-ingress-gateway", "namespace": KSERVE_NAMESPACE}],
                    "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/bench"}}]}],
                },
            },
        ),
    ]
    kinds = {GATEWAY.kind: GATEWAY, HTTPROUTE.kind: HTTPROUTE}
    objects += [(kinds[doc["kind"]], _in(namespace, doc)) for doc in _samples() if doc["kind"] in kinds]
    return objects


def snapshot(kube: KubeClusterApi, namespace: str, names: list[str]) -> dict[str, Wire]:
    """What one side wrote for each of ``names``, normalised for the comparison (``fidelity.snapshot``)."""
    taken = {}
    for name in names:
        objects = {
            label: kube.get(KINDS[label], namespace, object_name)
            for label, object_name in fidelity.router_objects(name).items()
        }
        service_ = kube.get(LLMISVC, namespace, name) or {}
        taken[name] = fidelity.snapshot(service_, objects, {})  # the same namespace names on both sides
    return taken
