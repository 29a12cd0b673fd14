"""The cluster a workflow test starts from: one LLMInferenceService using the router presets and KServe's
programmed default ingress Gateway (as ``examples/minimal-presets.yaml``), so a first pass creates the
managed HTTPRoute, both InferencePools and the EPP Service."""

from __future__ import annotations

from typing import Any

from activities.models import ServiceKey
from router_core.world.config import Environment

Wire = dict[str, Any]

NAMESPACE = "llm"
NAME = "opt"
KEY = ServiceKey(namespace=NAMESPACE, name=NAME)
ROUTE = f"{NAME}-kserve-route"
#: What a first pass creates, as ``FakeCluster.kinds()`` lists them.
MANAGED = [
    f"HTTPRoute {NAMESPACE}/{ROUTE}",
    f"InferencePool {NAMESPACE}/{NAME}-inference-pool",
    f"Service {NAMESPACE}/{NAME}-epp-service",
]
ENV = Environment()


def service(name: str = NAME, namespace: str = NAMESPACE, *, stopped: bool = False, **router: Any) -> Wire:
    """An LLMInferenceService with the well-known router presets (``router`` overrides them)."""
    meta: Wire = {"name": name, "namespace": namespace}
    if stopped:
        meta["annotations"] = {"serving.kserve.io/stop": "true"}
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": meta,
        "spec": {
            "model": {"uri": "hf://facebook/opt-125m", "name": "facebook/opt-125m"},
            "router": router or {"route": {}, "gateway": {}, "scheduler": {}},
        },
    }


def gateway_class(name: str = "istio") -> Wire:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": {"name": name},
        "spec": {"controllerName": "istio.io/gateway-controller"},
    }


def ingress_gateway(name: str = "kserve-ingress-gateway", namespace: str = "kserve") -> Wire:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "gatewayClassName": "istio",
            "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
        },
        "status": {
            "addresses": [{"type": "IPAddress", "value": "203.0.113.10"}],
            "conditions": [{"type": "Programmed", "status": "True", "reason": "Programmed"}],
        },
    }


def minimal_world(**service_args: Any) -> list[Wire]:
    return [service(**service_args), gateway_class(), ingress_gateway()]


def missing_gateway_reference() -> Wire:
    """A service whose router names a Gateway that does not exist: invalid references."""
    return service(route={}, gateway={"refs": [{"name": "no-such-gateway", "namespace": NAMESPACE}]})


def bad_ingress_config(namespace: str = "kserve") -> Wire:
    """KServe's ``inferenceservice-config`` with an ingress entry that is not JSON: the pass fails."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": namespace},
        "data": {"ingress": "{not json"},
    }
