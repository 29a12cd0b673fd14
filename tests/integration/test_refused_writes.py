"""Writes the router computes from a service that the real schemas refuse are reported in status.

kube-apiserver validates every write (the vendored CRDs' schemas and CEL rules, the built-in
checks), so these are the refusals a real cluster gives for the same
LLMInferenceService: the pass fails with the API's message in the conditions, and nothing is stored.
A write the router itself knows the API would refuse (a route over Gateway API's match limit) is
not sent at all, and the status says why.
"""

from __future__ import annotations

from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC, LLMISVC_CONFIG, SERVICE
from tests.integration import world
from tests.integration.harness import running_stack
from workflows.models import workflow_id

NAME = "opt"


def scheduler_without_epp_ports() -> dict[str, object]:
    container = {"name": "epp", "image": "epp:1", "ports": [{"name": "admin", "containerPort": 9000}]}
    return {"route": {}, "gateway": {}, "scheduler": {"template": {"containers": [container]}}}


def scheduler_config_without_epp_ports(kserve_namespace: str) -> dict[str, object]:
    """KServe's scheduler config as a cluster may carry it (it replaces the built-in copy, whose
    container declares the EPP ports), with a container that declares none of them."""
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceServiceConfig",
        "metadata": {"name": "kserve-config-llm-scheduler", "namespace": kserve_namespace},
        "spec": {"router": scheduler_without_epp_ports()},
    }


async def test_an_epp_service_without_ports_is_refused_and_reported_not_written(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create(LLMISVC_CONFIG, scheduler_config_without_epp_ports(stack.kserve_namespace))
        await stack.create_service(NAME, router=scheduler_without_epp_ports())
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)
        assert state.last is not None and state.last.outcome == "failed", state.last
        refusal = f'Service "{naming.epp_service_name(NAME)}" is invalid: spec.ports: Required value'
        messages = [c.get("message") or "" for c in (await stack.conditions(NAME)).values()]
        assert any(refusal in m for m in messages), messages
        assert await stack.get(SERVICE, naming.epp_service_name(NAME)) is None


def service_with_adapters(name: str, namespace: str, count: int) -> dict[str, object]:
    svc = world.service(name, namespace)
    adapters = [{"name": f"adapter-{i}"} for i in range(count)]
    svc["spec"]["model"]["lora"] = {"adapters": adapters}
    return svc


async def test_a_route_over_gateway_apis_match_limit_is_reported_in_status_not_written(temporal, cluster):
    """The product behaviour (issue 9's decision): the router counts the matches itself and never
    sends the route, so the HTTPRoute CRD's CEL rule (kube-apiserver's 422) is not reached. With the
    route preset of KServe aaac4e294 and model-based routing, the managed route has 10 path matches and 9
    model-routing matches; each adapter adds a copy of the 9: 13 adapters make 10 + 9 x 14 = 136 > 128."""
    stack_name = "lora"
    async with running_stack(temporal, cluster) as stack:
        stack.workflow_ids.add(workflow_id(stack.namespace, stack_name))
        await stack.create(LLMISVC, service_with_adapters(stack_name, stack.namespace, 13))
        handle = await stack.start_workflow(stack_name)
        state = await stack.passes(handle, 1)

        assert state.last is not None and state.last.outcome == "failed", state.last
        route = naming.route_name(stack_name)
        cond = (await stack.conditions(stack_name))["HTTPRoutesReady"]
        assert cond["status"] == "False" and cond["reason"] == "HTTPRouteReconcileError", cond
        assert cond["message"].startswith(
            f"Failed to reconcile HTTPRoute: HTTPRoute {stack.namespace}/{route} would have 136 matches "
            "across its rules, more than the 128 Gateway API allows"
        ), cond
        assert await stack.get(HTTPROUTE, route) is None
        assert stack.worker_writes("httproutes") == 0
