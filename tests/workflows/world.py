"""The cluster a workflow test starts from: one LLMInferenceService using the router presets and KServe's
programmed default ingress Gateway (as ``examples/minimal-presets.yaml``), so a first pass creates the
managed HTTPRoute, both InferencePools and the EPP Service."""

from __future__ import annotations

from typing import Any

from activities.models import ServiceKey
from llmisvc_core import naming
from llmisvc_core.world.config import Environment
from tests import builders as b
from tests.builders import Wire, kube

NAMESPACE = "llm"
NAME = "opt"
KEY = ServiceKey(namespace=NAMESPACE, name=NAME)
ROUTE = naming.route_name(NAME)
#: What a first pass creates, as ``FakeCluster.kinds()`` lists them.
MANAGED = [
    f"HTTPRoute {NAMESPACE}/{ROUTE}",
    f"InferencePool {NAMESPACE}/{naming.pool_name(NAME)}",
    f"Service {NAMESPACE}/{naming.epp_service_name(NAME)}",
]
ENV = Environment()


def service(name: str = NAME, namespace: str = NAMESPACE, *, stopped: bool = False, **router: Any) -> Wire:
    """An LLMInferenceService with the well-known router presets (``router`` overrides them)."""
    return b.service(
        name,
        namespace,
        uid=None,
        generation=None,
        model=b.model(),
        router=router or b.presets(),
        stopped=stopped,
    )


def gateway_class(name: str = "istio") -> Wire:
    return b.gateway_class(name, "istio.io/gateway-controller")


def ingress_gateway(name: str = "kserve-ingress-gateway", namespace: str = "kserve") -> Wire:
    return b.gateway(name, namespace, addresses=[("IPAddress", "203.0.113.10")])


def minimal_world(**service_args: Any) -> list[Wire]:
    return [service(**service_args), gateway_class(), ingress_gateway()]


def missing_gateway_reference() -> Wire:
    """A service whose router names a Gateway that does not exist: invalid references."""
    return service(route={}, gateway={"refs": [{"name": "no-such-gateway", "namespace": NAMESPACE}]})


def bad_ingress_config(namespace: str = "kserve") -> Wire:
    """KServe's ``inferenceservice-config`` with an ingress entry that is not JSON: the pass fails."""
    return kube.configmap("inferenceservice-config", namespace, ingress="{not json")
