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
from tests import builders as b
from tests.builders import kube

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
    return b.gateway_class(GATEWAY_CLASS, CONTROLLER_NAME)


def gateway(name: str = INGRESS_GATEWAY, ns: str = KSERVE_NAMESPACE) -> Wire:
    return b.gateway(name, ns, class_name=GATEWAY_CLASS, status=False)


def service(name: str, ns: str, *, router: Wire | None = None, stopped: bool = False) -> Wire:
    """An LLMInferenceService; by default its router is ``{route: {}, gateway: {}, scheduler: {}}``."""
    router = b.presets() if router is None else router
    return b.service(name, ns, uid=None, generation=None, model=b.model(), router=router, stopped=stopped)


def http_route(name: str, ns: str, gateway_name: str, gateway_ns: str) -> Wire:
    """A user's own HTTPRoute, as ``route.http.refs`` names it."""
    backend = {"backendRefs": [{"name": "my-model-backend", "port": 8000}]}
    return b.http_route(
        name, ns, parents=[(gateway_ns, gateway_name)], rules=[backend], generation=None, rv=None
    )


def ingress_config(ingress_gateway: str) -> Wire:
    """KServe's ``inferenceservice-config`` with Gateway API on and the given ``<namespace>/<name>`` as the
    ingress Gateway."""
    ingress = {
        "ingressGateway": "knative-serving/knative-ingress-gateway",
        "enableGatewayApi": True,
        "kserveIngressGateway": ingress_gateway,
    }
    return kube.configmap("inferenceservice-config", KSERVE_NAMESPACE, ingress=json.dumps(ingress))


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
