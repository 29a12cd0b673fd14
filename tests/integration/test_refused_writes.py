"""Writes the router computes from a service that the real schemas refuse are reported in status.

The stand-in validates every write as kube-apiserver does (the vendored CRDs' schemas and CEL
rules, the built-in checks), so these are the refusals a real cluster would give for the same
LLMInferenceService: the pass fails with the API's message in the conditions, and nothing is stored.
"""

from __future__ import annotations

from router_core.kube import LLMISVC_CONFIG, SERVICE
from tests.integration import world
from tests.integration.harness import running_stack

NAME = "opt"


def scheduler_config_without_epp_ports(namespace: str) -> dict[str, object]:
    """A namespace's own well-known scheduler config (it wins over the system namespace's) whose EPP
    container exposes none of the ports the EPP Service carries (grpc, grpc-health, metrics, zmq)."""
    container = {"name": "main", "image": "epp:1", "ports": [{"name": "admin", "containerPort": 9000}]}
    pool = {
        "spec": {
            "endpointPickerRef": {"kind": "Service", "name": f"{NAME}-epp-service", "port": {"number": 9002}},
            "selector": {"matchLabels": {"app.kubernetes.io/name": NAME}},
            "targetPorts": [{"number": 8000}],
        }
    }
    return {
        "apiVersion": LLMISVC_CONFIG.api_version,
        "kind": "LLMInferenceServiceConfig",
        "metadata": {"name": "kserve-config-llm-scheduler", "namespace": namespace},
        "spec": {"router": {"scheduler": {"pool": pool, "template": {"containers": [container]}}}},
    }


async def test_an_epp_service_without_ports_is_refused_and_reported_not_written(temporal):
    async with running_stack(temporal) as stack:
        await stack.create(LLMISVC_CONFIG, scheduler_config_without_epp_ports(stack.namespace))
        await stack.create_service(NAME)
        handle = await stack.start_workflow(NAME)
        state = await stack.passes(handle, 1)

        assert state.last is not None and state.last.outcome == "failed", state.last
        refusal = f'Service "{world.epp_service_name(NAME)}" is invalid: spec.ports: Required value'
        messages = [c.get("message") or "" for c in (await stack.conditions(NAME)).values()]
        assert any(refusal in m for m in messages), messages
        assert await stack.get(SERVICE, world.epp_service_name(NAME)) is None
