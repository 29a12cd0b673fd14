"""The RBAC in deploy/ grants exactly what the code calls, both ways.

The activities (driven pass by pass as the workflow drives them) and the watcher run against the API
stand-in with their own user agents; every resource request they make is mapped to an RBAC
(apiGroup, resource, verb) and compared with the rules of their ClusterRole, plus the Role on KServe's
ConfigMap. A permission the code needs but the manifests lack fails the test, and so does one the
manifests grant but no code uses.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import yaml
from kubernetes import client as k8s
from temporalio.exceptions import ApplicationError

from activities.kube_api import KubeClusterApi
from activities.models import ApplyInput, EvaluateInput, FetchInput, ServiceKey, StopInput
from activities.router_activities import INVALID_OBJECT, RouterActivities
from apiserver_standin.server import StandinApiServer
from apiserver_standin.testing import running_apiserver, running_gateway_controller
from cluster_cache.cache import ClusterCache
from cluster_cache.targets import start_worker_cache
from router_core.planner.plan import Phase
from router_core.world.config import Environment
from watcher.model import ServiceSignal, Tuning
from watcher.runner import stop_cache, watch_and_signal

ROOT = Path(__file__).resolve().parents[2]
WORKER_AGENT, WATCHER_AGENT = "llmisvc-router-worker", "llmisvc-router-watcher"
NOW = "2026-01-01T00:00:00Z"
KEY = ServiceKey(namespace="llm", name="opt")
INGRESS = '{"ingressGateway": "kserve/gw", "kserveIngressGateway": "kserve/kserve-ingress-gateway"}'
Permission = tuple[str, str, str]  # (apiGroup, resource[/subresource], verb)


def granted(role: str) -> set[Permission]:
    documents = [
        *yaml.safe_load_all((ROOT / "deploy/base/rbac.yaml").read_text()),
        *yaml.safe_load_all((ROOT / "deploy/kserve-config/rbac.yaml").read_text()),
    ]
    rules = [
        rule
        for doc in documents
        if doc["kind"] in ("ClusterRole", "Role") and doc["metadata"]["name"] == role
        for rule in doc["rules"]
    ]
    return {
        (g, r, v)
        for rule in rules
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }


def used(server: StandinApiServer, agent: str) -> set[Permission]:
    return {
        (r.group, f"{r.resource}/{r.subresource}" if r.subresource else r.resource, r.verb)
        for r in server.counter.records(user_agent=agent)
        if r.resource  # discovery and /version are non-resource URLs every authenticated user may read
    }


def run_pass(activities: RouterActivities) -> None:
    """One pass, activity by activity, as LLMInferenceServiceWorkflow runs it."""
    time.sleep(0.3)  # let the cache's watches deliver the last change, as a trigger's wait would
    decision = activities.fetch_gateways(FetchInput(key=KEY, now=NOW))
    for phase, write in (
        (Phase.SCHEDULER, activities.reconcile_scheduler),
        (Phase.ROUTES, activities.reconcile_routes),
        (Phase.MIGRATION, activities.attempt_v1_migration),
    ):
        if ops := decision.writes.get(phase.value):
            # Without the plan's targets, each delete reads its target first: the GETs a retried write
            # attempt makes of every target (activities.write_guard), which the role must allow too.
            write(ApplyInput(key=KEY, uid=decision.uid, writes=ops))
    activities.evaluate_conditions(EvaluateInput(key=KEY, uid=decision.uid, now=NOW, status=decision.status))


def seed(server: StandinApiServer) -> k8s.CustomObjectsApi:
    core, custom = k8s.CoreV1Api(server.client), k8s.CustomObjectsApi(server.client)
    for namespace in ("kserve", "llm"):
        core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=namespace)))
    config = k8s.V1ConfigMap(
        metadata=k8s.V1ObjectMeta(name="inferenceservice-config"), data={"ingress": INGRESS}
    )
    core.create_namespaced_config_map("kserve", config)
    gateway_api = ("gateway.networking.k8s.io", "v1")
    custom.create_cluster_custom_object(
        *gateway_api,
        "gatewayclasses",
        {"metadata": {"name": "c"}, "spec": {"controllerName": "example.com/gateway-controller"}},
    )
    custom.create_namespaced_custom_object(
        *gateway_api,
        "kserve",
        "gateways",
        {
            "metadata": {"name": "kserve-ingress-gateway"},
            "spec": {
                "gatewayClassName": "c",
                "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
            },
        },
    )
    service = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": KEY.name},
        "spec": {
            "model": {"uri": "hf://org/m", "name": "m"},
            "router": {"route": {}, "gateway": {}, "scheduler": {}},
        },
    }
    custom.create_namespaced_custom_object(
        "serving.kserve.io", "v1alpha2", KEY.namespace, "llminferenceservices", service
    )
    return custom


def exercise_worker(server: StandinApiServer, custom: k8s.CustomObjectsApi) -> None:
    """Create, update (a new model name and pool port change the route, pools and EPP Service), migrate
    to the v1 pool group, stop and resume."""
    api_client = server.api_client(WORKER_AGENT)
    cache = start_worker_cache(api_client, [], Environment())
    try:
        _exercise_worker(server, custom, RouterActivities(KubeClusterApi(api_client), cache, Environment()))
    finally:
        cache.stop()
        cache.join(5)


def _exercise_worker(
    server: StandinApiServer, custom: k8s.CustomObjectsApi, activities: RouterActivities
) -> None:
    run_pass(activities)  # creates route, pools, EPP Service; writes status
    scheduler = {
        "pool": {
            "spec": {
                "targetPorts": [{"number": 9000}],
                "selector": {"matchLabels": {"app": "opt"}},  # the pool spec's required fields
                "endpointPickerRef": {"name": "opt-epp-service", "port": {"number": 9002}},
            }
        },
        # Ports merge by containerPort into the preset's (KServe's strategic merge): a changed protocol
        # on 9002 is what changes the EPP Service.
        "template": {
            "containers": [
                {"name": "main", "ports": [{"name": "grpc", "containerPort": 9002, "protocol": "UDP"}]}
            ]
        },
    }
    patch = {"spec": {"model": {"name": "m2"}, "router": {"scheduler": scheduler}}}
    custom.patch_namespaced_custom_object(
        "serving.kserve.io", "v1alpha2", KEY.namespace, "llminferenceservices", KEY.name, patch
    )
    run_pass(activities)  # updates all three
    with running_gateway_controller(
        server, accepted_pool_groups={"inference.networking.k8s.io"}
    ) as controller:
        controller.wait_synced()
        deadline = time.monotonic() + 10
        while controller.reconcile_once() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        run_pass(activities)  # the gateway rejected v1alpha2: attempt_v1_migration updates the route
    activities.set_stop_annotation(StopInput(key=KEY, stopped=True))
    run_pass(activities)  # deletes route, pools, EPP Service
    activities.set_stop_annotation(StopInput(key=KEY, stopped=False))
    # A spec the router cannot read: its status is patched and a Warning Event created; fixed, then broken
    # the same way again, the same Event repeats and its series is patched.
    # (model.lora.adapters is an open-schema field: the CRD accepts any value, the router wants a list.)
    adapters: list[object] = ["all of them", [], "all of them"]
    for value in adapters:
        custom.patch_namespaced_custom_object(
            "serving.kserve.io", "v1alpha2", KEY.namespace, "llminferenceservices", KEY.name,
            {"spec": {"model": {"lora": {"adapters": value}}}},
        )  # fmt: skip
        try:
            run_pass(activities)
        except ApplicationError as err:
            assert err.type == INVALID_OBJECT


def exercise_watcher(server: StandinApiServer, custom: k8s.CustomObjectsApi) -> None:
    class Discard:
        async def send(self, signal: ServiceSignal) -> None:
            return None

    async def watch_for_a_while() -> None:
        stop = asyncio.Event()
        api_client = server.api_client(WATCHER_AGENT)
        tuning = Tuning(watch_timeout_seconds=5, backoff_first=0.05, debounce_seconds=0.01, sync_timeout=5)
        cache = ClusterCache(api_client, tuning)
        task = asyncio.create_task(watch_and_signal(cache, Discard(), [], Environment(), stop, tuning))
        await asyncio.sleep(2)
        stop.set()
        await task
        await stop_cache(cache)

    asyncio.run(watch_for_a_while())


def test_the_worker_role_grants_exactly_what_the_activities_call() -> None:
    with running_apiserver(crds="all") as server:
        exercise_worker(server, seed(server))
        calls = used(server, WORKER_AGENT)
    config = {p for p in calls if p[1] == "configmaps"}
    assert calls - config == granted("llmisvc-router-worker")
    assert config == {("", "configmaps", "list"), ("", "configmaps", "watch")}


def test_the_watcher_role_grants_exactly_what_the_watcher_calls() -> None:
    with running_apiserver(crds="all") as server:
        exercise_watcher(server, seed(server))
        calls = used(server, WATCHER_AGENT)
    config = {p for p in calls if p[1] == "configmaps"}
    assert calls - config == granted("llmisvc-router-watcher")
    assert config == {("", "configmaps", "list"), ("", "configmaps", "watch")}


def test_the_config_role_is_the_union_of_what_both_read() -> None:
    assert granted("llmisvc-router-config-reader") == {
        ("", "configmaps", "list"),
        ("", "configmaps", "watch"),
    }
