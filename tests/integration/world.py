"""The objects an integration test puts into the API stand-in: KServe's namespace with the default ingress
Gateway, a namespace of the test's own, LLMInferenceServices (with the well-known router presets unless a
test says otherwise) and what KServe's workload reconciler would add, the scheduler Deployment."""

from __future__ import annotations

import json
from typing import Any

from router_core import naming
from router_core.models.kube import (
    GATEWAY,
    GATEWAYCLASS,
    HTTPROUTE,
    POOL_V1,
    POOL_V1ALPHA2,
    SERVICE,
    ResourceType,
)
from runtime.environment import environment_from

Wire = dict[str, Any]
NAMESPACE = ResourceType("", "v1", "Namespace", "namespaces", namespaced=False)

#: As the worker process reads it (and ``llmisvc-router plan`` too): KServe namespace "kserve" by default,
#: whose ingress Gateway is kserve/kserve-ingress-gateway.
ENV = environment_from()
KSERVE_NAMESPACE = ENV.kserve_namespace
INGRESS_GATEWAY = "kserve-ingress-gateway"
GATEWAY_CLASS = "standin"
#: The simulated gateway controller's name (apiserver_standin.gateway_status.ControllerConfig default).
CONTROLLER_NAME = "gateway.standin.local/controller"
GATEWAY_ADDRESS = "203.0.113.10"  # what the simulated controller puts in a programmed Gateway's status


def namespace(name: str) -> Wire:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def gateway_class() -> Wire:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": {"name": GATEWAY_CLASS},
        "spec": {"controllerName": CONTROLLER_NAME},
    }


def gateway(name: str = INGRESS_GATEWAY, ns: str = KSERVE_NAMESPACE) -> Wire:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "gatewayClassName": GATEWAY_CLASS,
            "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
        },
    }


def service(name: str, ns: str, *, router: Wire | None = None, stopped: bool = False) -> Wire:
    """An LLMInferenceService; by default its router is ``{route: {}, gateway: {}, scheduler: {}}``."""
    meta: Wire = {"name": name, "namespace": ns}
    if stopped:
        meta["annotations"] = {"serving.kserve.io/stop": "true"}
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": meta,
        "spec": {
            "model": {"uri": "hf://facebook/opt-125m", "name": "facebook/opt-125m"},
            "router": {"route": {}, "gateway": {}, "scheduler": {}} if router is None else router,
        },
    }


def http_route(name: str, ns: str, gateway_name: str, gateway_ns: str) -> Wire:
    """A user's own HTTPRoute, as ``route.http.refs`` names it."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "parentRefs": [{"name": gateway_name, "namespace": gateway_ns}],
            "rules": [{"backendRefs": [{"name": "my-model-backend", "port": 8000}]}],
        },
    }


def ingress_config(ingress_gateway: str) -> Wire:
    """KServe's ``inferenceservice-config`` with Gateway API on and the given ``<namespace>/<name>`` as the
    ingress Gateway."""
    ingress = {
        "ingressGateway": "knative-serving/knative-ingress-gateway",
        "enableGatewayApi": True,
        "kserveIngressGateway": ingress_gateway,
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": KSERVE_NAMESPACE},
        "data": {"ingress": json.dumps(ingress)},
    }


def scheduler_deployment(svc: Wire) -> Wire:
    """The scheduler Deployment KServe's workload reconciler would create, owned by the service."""
    meta = svc["metadata"]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": naming.scheduler_name(meta["name"]),
            "namespace": meta["namespace"],
            "labels": naming.scheduler_labels(meta["name"]),
            "ownerReferences": [
                {
                    "apiVersion": svc["apiVersion"],
                    "kind": svc["kind"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "selector": {"matchLabels": naming.scheduler_labels(meta["name"])},
            "template": {
                "metadata": {"labels": naming.scheduler_labels(meta["name"])},
                "spec": {"containers": [{"name": "scheduler", "image": "scheduler:latest"}]},
            },
        },
    }


AVAILABLE_DEPLOYMENT_STATUS: Wire = {
    "replicas": 1,
    "readyReplicas": 1,
    "availableReplicas": 1,
    "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}],
}


def namespaces(ns: str) -> list[tuple[ResourceType, Wire]]:
    """KServe's namespace and the test's own."""
    return [(NAMESPACE, namespace(KSERVE_NAMESPACE)), (NAMESPACE, namespace(ns))]


def ingress() -> list[tuple[ResourceType, Wire]]:
    """The GatewayClass and KServe's default ingress Gateway (not programmed until a controller says so)."""
    return [(GATEWAYCLASS, gateway_class()), (GATEWAY, gateway())]


def managed_objects(svc: str) -> list[tuple[ResourceType, str]]:
    """What the router creates for a service with the presets: route, both pools, EPP Service."""
    return [
        (HTTPROUTE, naming.route_name(svc)),
        (POOL_V1, naming.pool_name(svc)),
        (POOL_V1ALPHA2, naming.pool_name(svc)),
        (SERVICE, naming.epp_service_name(svc)),
    ]
