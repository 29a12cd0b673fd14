"""The objects an integration test puts into the cluster: the GatewayClass the simulated controller handles
(cluster-scoped, shared by every test of a control plane), the default ingress Gateway in the test's
KServe namespace, LLMInferenceServices (with the well-known router presets unless a test says otherwise)
and what KServe's workload reconciler would add, the scheduler Deployment.

KServe's namespace is the test's own (``Cluster.kserve_namespace``, the product's ``POD_NAMESPACE``), so
the helpers that place something there take it as an argument."""

from __future__ import annotations

import json
from typing import Any

from llmisvc_core import naming
from llmisvc_core.models.kube import (
    GATEWAY,
    GATEWAYCLASS,
    HTTPROUTE,
    POOL_V1,
    POOL_V1ALPHA2,
    SERVICE,
    ResourceType,
)
from tests import builders as b
from tests.builders import kube

Wire = dict[str, Any]

INGRESS_GATEWAY = "kserve-ingress-gateway"
GATEWAY_CLASS = "simulated"
#: The simulated gateway controller's name (llmisvc_devstack.controllers.gateway_status.ControllerConfig).
CONTROLLER_NAME = "gateway.standin.local/controller"
GATEWAY_ADDRESS = "203.0.113.10"  # what the simulated controller puts in a programmed Gateway's status


def gateway_class() -> Wire:
    return b.gateway_class(GATEWAY_CLASS, CONTROLLER_NAME)


def gateway(name: str, ns: str) -> Wire:
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


def ingress_config(kserve_namespace: str, ingress_gateway: str) -> Wire:
    """KServe's ``inferenceservice-config`` (in ``kserve_namespace``) with Gateway API on and the given
    ``<namespace>/<name>`` as the ingress Gateway."""
    ingress = {
        "ingressGateway": "knative-serving/knative-ingress-gateway",
        "enableGatewayApi": True,
        "kserveIngressGateway": ingress_gateway,
    }
    return kube.configmap("inferenceservice-config", kserve_namespace, ingress=json.dumps(ingress))


AVAILABLE_DEPLOYMENT_STATUS: Wire = {
    "replicas": 1,
    "readyReplicas": 1,
    "availableReplicas": 1,
    "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}],
}


def ingress(kserve_namespace: str) -> list[tuple[ResourceType, Wire]]:
    """The GatewayClass and KServe's default ingress Gateway (not programmed until a controller says so)."""
    return [(GATEWAYCLASS, gateway_class()), (GATEWAY, gateway(INGRESS_GATEWAY, kserve_namespace))]


def managed_objects(svc: str) -> list[tuple[ResourceType, str]]:
    """What the router creates for a service with the presets: route, both pools, EPP Service."""
    return [
        (HTTPROUTE, naming.route_name(svc)),
        (POOL_V1, naming.pool_name(svc)),
        (POOL_V1ALPHA2, naming.pool_name(svc)),
        (SERVICE, naming.epp_service_name(svc)),
    ]
