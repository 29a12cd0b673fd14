"""What a service's workflow history holds (issue 13, part 4): no secret read from the cluster, and no
payload over ``activities.payload_guard.PAYLOAD_BOUND`` whatever the size of the service.

Markers are planted wherever a secret may sit in what a pass reads: env values of the service's
workload and scheduler templates, of a cluster copy of KServe's scheduler preset and of the scheduler
Deployment, a key of ``inferenceservice-config`` the router does not read, and the
``kubectl.kubernetes.io/last-applied-configuration`` annotations (which repeat the spec). Every event of
the history is scanned as bytes, so inputs, results, local-activity markers, headers and failures alike
are covered.
"""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

from activities.payload_guard import PAYLOAD_BOUND
from llmisvc_core import naming
from llmisvc_core.merge import wellknown
from llmisvc_core.models.kube import CONFIGMAP, DEPLOYMENT, HTTPROUTE, LLMISVC, LLMISVC_CONFIG
from tests.builders import kube
from tests.history import recorded_payloads
from tests.integration import world
from tests.integration.harness import Handle, Stack, running_stack
from tests.integration.world import Wire
from workflows.models import workflow_id

pytestmark = pytest.mark.asyncio(loop_scope="session")

MARKER = "s3cr3t-marker"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
SCHEDULER_CONFIG = "kserve-config-llm-scheduler"
PLACES = ("spec-env", "scheduler-env", "preset-env", "deployment-env", "configmap-key", "last-applied")


def secret(place: str) -> str:
    return f"{MARKER}-{place}"


def env(place: str) -> list[Wire]:
    return [{"name": "API_TOKEN", "value": secret(place)}]


def scheduler_preset(kserve_namespace: str) -> Wire:
    """KServe's scheduler preset as a cluster carries it, with a secret in its container's env."""
    (shipped,) = [
        c
        for c in wellknown.shipped_configs("kserve-", kserve_namespace)
        if c["metadata"]["name"] == SCHEDULER_CONFIG
    ]
    config = copy.deepcopy(shipped)
    for container in config["spec"]["router"]["scheduler"]["template"]["containers"]:
        container["env"] = [*container.get("env", []), *env("preset-env")]
    return config


def service_with_secrets(name: str, namespace: str) -> Wire:
    svc = world.service(name, namespace)
    svc["spec"]["template"] = {"containers": [{"name": "main", "image": "vllm:1", "env": env("spec-env")}]}
    sidecar = {"name": "sidecar", "image": "sidecar:1", "env": env("scheduler-env")}
    svc["spec"]["router"]["scheduler"] = {"template": {"containers": [sidecar]}}
    # kubectl apply keeps the whole applied object, secrets included, in this annotation.
    applied = {**svc, "metadata": {**svc["metadata"], "note": secret("last-applied")}}
    svc["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(applied)}
    return svc


async def plant_secrets(stack: Stack, name: str) -> None:
    config = world.ingress_config(stack.kserve_namespace, f"{stack.kserve_namespace}/{world.INGRESS_GATEWAY}")
    config["data"]["database-password"] = secret("configmap-key")  # a key the router never reads
    await stack.create(CONFIGMAP, config)
    await stack.create(LLMISVC_CONFIG, scheduler_preset(stack.kserve_namespace))
    stack.workflow_ids.add(workflow_id(stack.namespace, name))
    created = await stack.create(LLMISVC, service_with_secrets(name, stack.namespace))
    deployment = kube.scheduler_deployment(created)
    deployment["spec"]["template"]["spec"]["containers"][0]["env"] = env("deployment-env")
    deployment["metadata"]["annotations"] = {LAST_APPLIED: json.dumps({"note": secret("last-applied")})}
    stored = await stack.create(DEPLOYMENT, deployment)
    available = {**stored, "status": world.AVAILABLE_DEPLOYMENT_STATUS}
    await asyncio.to_thread(stack.kube.replace_status, DEPLOYMENT, available)


async def history_bytes(handle: Handle) -> list[tuple[int, bytes]]:
    history = await handle.fetch_history()
    return [(event.event_id, event.SerializeToString()) for event in history.events]


async def test_no_secret_the_router_reads_reaches_the_workflow_history(temporal, cluster):
    async with running_stack(temporal, cluster, controller={}) as stack:
        await plant_secrets(stack, "opt")
        handle = await stack.start_workflow("opt")
        ready = await stack.until_router_ready("opt", drive=handle)
        changed = await stack.patch(LLMISVC, "opt", {"spec": {"model": {"name": "facebook/opt-350m"}}})
        await stack.reconcile_now(handle, "the model changed", after=changed)  # an update of the route, too

        conditions = {c["type"]: c for c in ready["status"]["conditions"]}
        assert conditions["SchedulerWorkloadReady"]["status"] == "True"  # the Deployment was read
        assert {"name": SCHEDULER_CONFIG, "namespace": stack.kserve_namespace, "source": "Preset"} in ready[
            "status"
        ]["appliedConfigs"]  # the cluster's preset, not the built-in copy
        events = await history_bytes(handle)
        leaks = {
            place: [event_id for event_id, data in events if secret(place).encode() in data]
            for place in PLACES
        }
        assert leaks == {place: [] for place in PLACES}
        # The scan sees what the passes recorded: the local activity's plan names the route it wrote.
        recorded = await recorded_payloads(handle)
        route = naming.route_name("opt").encode()
        assert any(route in p.payload.data for p in recorded)
        assert max(p.payload.ByteSize() for p in recorded) <= PAYLOAD_BOUND


def long_model_service(name: str, namespace: str, length: int) -> Wire:
    svc = world.service(name, namespace)
    svc["spec"]["model"]["name"] = "m" * length
    return svc


async def test_a_model_name_too_long_for_the_routes_is_refused_by_the_dry_run_and_bounded_in_history(
    temporal, cluster
):
    """A 100,000-character model name: the stored service is valid, but the route preset carries the name
    into header values that Gateway API bounds at 4,096 bytes, so the API server refuses the merged spec
    (KServe #5918 at ``aaac4e294``: ``PresetsCombined`` and ``Ready`` False with ``InvalidRenderedConfig``),
    before decision P16's payload bound is reached. No route is written, no payload of the history is
    above the bound, and shortening the name reconciles."""
    async with running_stack(temporal, cluster) as stack:
        stack.workflow_ids.add(workflow_id(stack.namespace, "big"))
        await stack.create(LLMISVC, long_model_service("big", stack.namespace, 100_000))
        handle = await stack.start_workflow("big")
        state = await stack.passes(handle, 1)

        assert state.last is not None and state.last.outcome == "failed", state.last
        conditions = await stack.conditions("big")
        for type_ in ("Ready", "PresetsCombined"):
            assert conditions[type_]["status"] == "False", conditions[type_]
            assert conditions[type_]["reason"] == "InvalidRenderedConfig", conditions[type_]
        message = conditions["PresetsCombined"]["message"]
        assert message.startswith("dry-run validation failed after merging configs ["), message
        assert "Too long" in message and "m" * 5000 not in message, message[:300]
        assert stack.worker_writes("httproutes") == 0
        sizes = [p.payload.ByteSize() for p in await recorded_payloads(handle)]
        assert max(sizes) <= PAYLOAD_BOUND, max(sizes)

        shortened = await stack.patch(LLMISVC, "big", {"spec": {"model": {"name": "facebook/opt-125m"}}})
        summary = await stack.reconcile_now(handle, "the model name was shortened", after=shortened)
        assert summary.writes == 4, summary  # route, both pools, EPP Service
        assert await stack.get(HTTPROUTE, naming.route_name("big")) is not None
        assert (await stack.conditions("big"))["PresetsCombined"]["status"] == "True"


def deeply_nested(levels: int) -> Wire:
    root: Wire = {}
    node = root
    for _ in range(levels - 1):
        node["x"] = {}
        node = node["x"]
    return root


async def test_a_spec_nested_350_levels_deep_is_told_so_instead_of_failing_every_pass(temporal, cluster):
    """An open-schema field (LoRA adapters keep unknown fields) accepts any depth; pydantic, which the
    plan copies the spec through, refuses 255 levels, and its JSON parser about 200. The service is
    refused before it is planned (``llmisvc_core.limits``): its status names the field, for its
    generation, and no payload of the history holds the deep value."""
    async with running_stack(temporal, cluster) as stack:
        stack.workflow_ids.add(workflow_id(stack.namespace, "deep"))
        svc = world.service("deep", stack.namespace)
        svc["spec"]["model"]["lora"] = {"adapters": [{"name": "a1", "options": deeply_nested(350)}]}
        await stack.create(LLMISVC, svc)
        handle = await stack.start_workflow("deep")
        state = await stack.passes(handle, 1)

        assert state.last is not None and state.last.outcome == "error", state.last
        assert state.last_error is not None and "nested deeper than 100 levels" in state.last_error
        ready = (await stack.conditions("deep"))["RouterReady"]
        assert ready["status"] == "False" and ready["reason"] == "InvalidSpec"
        assert "field spec.model.lora.adapters[0].options" in ready["message"]
        assert "nested deeper than 100 levels" in ready["message"]
        assert max(p.payload.ByteSize() for p in await recorded_payloads(handle)) <= PAYLOAD_BOUND
