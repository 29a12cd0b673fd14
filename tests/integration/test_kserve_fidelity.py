"""The same objects as KServe's controller (issue 21): for a small mix of services, KServe's own
``cmd/llmisvc`` (``devstack/kserve``, v0.20.0) and this router each reconcile the same services in a
namespace pair of their own, on one fresh control plane, with the same gateway, ``inferenceservice-config``,
well-known presets and simulated gateway controller; the HTTPRoute, both InferencePools, the EPP Service and
the router's conditions are then compared field by field (``llmisvc_devstack.fidelity``). Every difference
must be on :data:`ALLOWED`, each of which ``docs/deviations.md`` lists with its reason.

The plane is the test's own: KServe's controller watches every namespace, and would reconcile other tests'
services on a shared plane. KServe's side runs first and is stopped before the router's starts.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from llmisvc_core import naming
from llmisvc_core.merge import wellknown
from llmisvc_core.models.kube import (
    CONFIGMAP,
    DEPLOYMENT,
    HTTPROUTE,
    LLMISVC,
    LLMISVC_CONFIG,
    POOL_V1,
    POOL_V1ALPHA2,
    SERVICE,
    ResourceType,
)
from llmisvc_devstack import fidelity
from llmisvc_devstack.controllers.gateway import ControllerConfig, SimulatedGatewayController
from llmisvc_devstack.kserve_peer import PEER_CONFIG_DATA, KServePeer
from llmisvc_kube.client import KubeClusterApi
from tests.builders import model
from tests.cluster import Cluster, start_plane, test_cluster
from tests.integration import world
from tests.integration.harness import running_stack, seed

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(240)]

Wire = dict[str, Any]
USER_ROUTE = "user-route"
SETTLE = 30.0  # seconds either side gets to make every service RouterReady
#: The mix: a managed scheduler + route, a LoRA case, a route with refs (to the user's HTTPRoute).
MIX: dict[str, Wire] = {
    "managed": {"model": model(), "router": {"route": {}, "gateway": {}, "scheduler": {}}},
    "lora": {
        "model": {
            **model(),
            "lora": {"adapters": [{"name": "sql-lora", "uri": "hf://yard1/llama-2-7b-sql-lora"}]},
        },
        "router": {"route": {}, "gateway": {}, "scheduler": {}},
    },
    "refs": {"model": model(), "router": {"route": {"http": {"refs": [{"name": USER_ROUTE}]}}}},
}
#: Differences allowed, as regular expressions over :func:`fidelity.differences` lines; each is a row of
#: docs/deviations.md ("KServe's controller as the peer").
ALLOWED: dict[str, str] = {}
KINDS: dict[str, ResourceType] = {
    "HTTPRoute": HTTPROUTE,
    "InferencePool/v1": POOL_V1,
    "InferencePool/v1alpha2": POOL_V1ALPHA2,
    "Service/epp": SERVICE,
}


def _prepare(cluster: Cluster, kube: KubeClusterApi) -> None:
    """What both sides get besides the ingress Gateway (``seed``): KServe's config, the presets, the
    user's HTTPRoute."""
    config = world.ingress_config(
        cluster.kserve_namespace, f"{cluster.kserve_namespace}/{world.INGRESS_GATEWAY}"
    )
    config["data"].update(PEER_CONFIG_DATA)
    kube.create(CONFIGMAP, config)
    for preset in wellknown.shipped_configs("kserve-", cluster.kserve_namespace):
        kube.create(LLMISVC_CONFIG, preset)
    kube.create(
        HTTPROUTE,
        world.http_route(USER_ROUTE, cluster.namespace, world.INGRESS_GATEWAY, cluster.kserve_namespace),
    )


def _service(name: str, namespace: str) -> Wire:
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": MIX[name],
    }


def _router_ready(kube: KubeClusterApi, namespace: str) -> bool:
    for name in MIX:
        found = kube.get(LLMISVC, namespace, name) or {}
        conditions = {c["type"]: c for c in found.get("status", {}).get("conditions", [])}
        if conditions.get("RouterReady", {}).get("status") != "True":
            return False
    return True


def _make_schedulers_available(kube: KubeClusterApi, namespace: str) -> None:
    """What the kubelet would do for the scheduler Deployments KServe's controller creates."""
    for name in MIX:
        deployment = kube.get(DEPLOYMENT, namespace, naming.scheduler_name(name))
        if deployment is not None and not deployment.get("status", {}).get("availableReplicas"):
            kube.replace_status(DEPLOYMENT, {**deployment, "status": world.AVAILABLE_DEPLOYMENT_STATUS})


def _settle(probe: Callable[[], bool], tick: Callable[[], None] = lambda: None) -> None:
    deadline = time.monotonic() + SETTLE
    while time.monotonic() < deadline:
        tick()
        if probe():
            return
        time.sleep(0.2)


def _snapshot(kube: KubeClusterApi, cluster: Cluster) -> dict[str, Wire]:
    names = {cluster.kserve_namespace: "<kserve-namespace>", cluster.namespace: "<namespace>"}
    taken = {}
    for name in MIX:
        objects = {
            label: kube.get(KINDS[label], cluster.namespace, object_name)
            for label, object_name in fidelity.router_objects(name).items()
        }
        taken[name] = fidelity.snapshot(kube.get(LLMISVC, cluster.namespace, name) or {}, objects, names)
    return taken


def _kserve_run(cluster: Cluster, workdir: Path) -> dict[str, Wire]:
    kube = KubeClusterApi(cluster.api_client("fidelity-test", direct=True))
    seed(cluster, kube)
    _prepare(cluster, kube)
    gateways = SimulatedGatewayController(
        cluster.api_client("gateway", direct=True), ControllerConfig()
    ).start()
    peer = KServePeer(
        cluster.kubeconfig(workdir / "kubeconfig", direct=True),
        cluster.kserve_namespace,
        workdir,
        cluster.control.pki,
    )
    peer.start()
    try:
        for name in MIX:
            kube.create(LLMISVC, _service(name, cluster.namespace))
        _settle(
            lambda: _router_ready(kube, cluster.namespace),
            lambda: _make_schedulers_available(kube, cluster.namespace),
        )
        return _snapshot(kube, cluster)
    finally:
        peer.stop()
        gateways.stop()


async def _router_run(temporal: Client, cluster: Cluster) -> dict[str, Wire]:
    async with running_stack(temporal, cluster, controller={}, watcher=True) as stack:
        await asyncio.to_thread(_prepare, cluster, stack.kube)
        for name in MIX:
            await stack.create(LLMISVC, _service(name, cluster.namespace))
            if "scheduler" in MIX[name]["router"]:
                await stack.make_scheduler_ready(name)
        await asyncio.to_thread(_settle, lambda: _router_ready(stack.kube, cluster.namespace))
        return await asyncio.to_thread(_snapshot, stack.kube, cluster)


async def test_router_objects_and_conditions_match_kserve_controller(
    temporal: Client, tmp_path: Path
) -> None:
    """KServe ``pkg/controller/v1alpha2/llmisvc/router.go`` (``reconcileRouter``: HTTPRoute, InferencePools,
    EPP Service, router conditions) at v0.20.0, run as itself: this router writes the same, field by field,
    for a managed scheduler + route, a LoRA service and a route with refs, but for :data:`ALLOWED`."""
    plane = start_plane("default")  # the test's own: KServe's controller watches every namespace
    try:
        with test_cluster(plane, "kf") as kserve_side:
            kserve = await asyncio.to_thread(_kserve_run, kserve_side, tmp_path)
        with test_cluster(plane, "kf") as router_side:
            router = await _router_run(temporal, router_side)
    finally:
        plane.control.stop()
    unexplained = [
        line for line in fidelity.differences(kserve, router) if not any(re.search(p, line) for p in ALLOWED)
    ]
    assert not unexplained, "\n".join(unexplained)
