"""The RBAC in deploy/ is what the product needs, in both shapes, as the real authorizer decides.

The activities (driven pass by pass as the workflow drives them) and the watcher run on the control plane
as the worker and watcher ServiceAccounts under the RBAC that ``deploy/`` ships (applied by
``tests/cluster.py``: the cluster-wide shape of ``deploy/`` on the default plane, the namespaced shape of
``deploy/overlays/namespaced`` on the ``namespaced-rbac`` plane, with the product's namespace list the
test's namespace). kube-apiserver's RBAC authorizer answers every request: not one may be refused (403).
The proxy records the requests, so the other half of least privilege is checked too: every grant is used
by some call. And what the RBAC does not grant is refused: every verb not granted on a resource the
account may touch, and in the namespaced shape everything granted in the managed namespace, asked
outside it (SubjectAccessReview, the authorizer's own answer).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from activities.models import (
    ApplyInput,
    EvaluateInput,
    FetchInput,
    InvalidSpec,
    Planned,
    ServiceKey,
    StopInput,
)
from activities.router_activities import RouterActivities
from llmisvc_cache.cache import ClusterCache
from llmisvc_cache.targets import start_worker_cache
from llmisvc_core import naming
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.planner.plan import Phase
from llmisvc_devstack.controllers.gateway import ControllerConfig, SimulatedGatewayController
from llmisvc_devstack.controlplane import identity
from llmisvc_devstack.controlplane.crds import POOL_V1_GROUP
from llmisvc_kube.client import KubeClusterApi
from llmisvc_watcher.model import ServiceSignal, Tuning
from llmisvc_watcher.runner import stop_cache, watch_and_signal
from tests import cluster as clusters
from tests.cluster import Cluster, shared_plane
from tests.deploy import rbac_grants

WORKER, WATCHER = identity.WORKER_ACCOUNT, identity.WATCHER_ACCOUNT
AGENTS = {WORKER: "llmisvc-router-worker/rbac-test", WATCHER: "llmisvc-router-watcher/rbac-test"}
ROLES = {WORKER: "worker", WATCHER: "watcher"}
NOW = "2026-01-01T00:00:00Z"
SERVICE = "opt"
SERVING = ("serving.kserve.io", "v1alpha2")
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
OUTSIDE = "default"  # a namespace the product never manages
Exercise = Callable[[Cluster, k8s.CustomObjectsApi, list[str]], None]


@pytest.fixture
def namespaced() -> Iterator[Cluster]:
    """A test's namespaces on the plane with the namespaced RBAC of ``deploy/overlays/namespaced``."""
    with clusters.test_cluster(shared_plane("namespaced-rbac")) as one:
        yield one


def run_pass(activities: RouterActivities, key: ServiceKey) -> None:
    """One pass, activity by activity, as LLMInferenceServiceWorkflow runs it."""
    time.sleep(0.3)  # let the cache's watches deliver the last change, as a trigger's wait would
    result = activities.fetch_gateways(FetchInput(key=key, now=NOW)).root
    if isinstance(result, InvalidSpec):  # its status goes to the status writer, as the workflow hands it
        activities.evaluate_conditions(EvaluateInput(key=key, uid=result.uid, now=NOW, status=result.status))
        return
    assert isinstance(result, Planned), result
    writes = {
        Phase.SCHEDULER: activities.reconcile_scheduler,
        Phase.ROUTES: activities.reconcile_routes,
        Phase.MIGRATION: activities.attempt_v1_migration,
    }
    for phase in result.phases:
        # Without the plan's targets, each delete reads its target first: the GETs a retried write
        # attempt makes of every target (activities.write_guard), which the role must allow too.
        writes[phase.phase](ApplyInput(key=key, uid=result.uid, writes=phase.writes))
    activities.evaluate_conditions(EvaluateInput(key=key, uid=result.uid, now=NOW, status=result.status))


def seed(cluster: Cluster, admin: k8s.ApiClient) -> k8s.CustomObjectsApi:
    """KServe's config and ingress Gateway in the test's KServe namespace, a service in its namespace."""
    core, custom = k8s.CoreV1Api(admin), k8s.CustomObjectsApi(admin)
    kserve = cluster.kserve_namespace
    ingress = (
        f'{{"ingressGateway": "{kserve}/gw", "kserveIngressGateway": "{kserve}/kserve-ingress-gateway"}}'
    )
    config = k8s.V1ConfigMap(
        metadata=k8s.V1ObjectMeta(name="inferenceservice-config"), data={"ingress": ingress}
    )
    core.create_namespaced_config_map(kserve, config)
    gateway_api = ("gateway.networking.k8s.io", "v1")
    class_name = f"{cluster.namespace}-class"  # cluster-scoped: named after the test's namespace
    custom.create_cluster_custom_object(
        *gateway_api,
        "gatewayclasses",
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "GatewayClass",
            "metadata": {"name": class_name},
            "spec": {"controllerName": "example.com/gateway-controller"},
        },
    )
    custom.create_namespaced_custom_object(
        *gateway_api,
        kserve,
        "gateways",
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": {"name": "kserve-ingress-gateway"},
            "spec": {
                "gatewayClassName": class_name,
                "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
            },
        },
    )
    service = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": SERVICE},
        "spec": {
            "model": {"uri": "hf://org/m", "name": "m"},
            "router": {"route": {}, "gateway": {}, "scheduler": {}},
        },
    }
    custom.create_namespaced_custom_object(*SERVING, cluster.namespace, "llminferenceservices", service)
    return custom


def exercise_worker(cluster: Cluster, custom: k8s.CustomObjectsApi, namespaces: list[str]) -> None:
    """Create, update (a new model name and pool port change the route, pools and EPP Service), migrate
    to the v1 pool group, stop and resume, and a spec the router cannot read."""
    api_client = cluster.api_client(AGENTS[WORKER], role="worker")
    cache = start_worker_cache(api_client, namespaces, cluster.env)
    try:
        activities = RouterActivities(KubeClusterApi(api_client), cache, cluster.env)
        _exercise_worker(cluster, custom, activities, ServiceKey(namespace=cluster.namespace, name=SERVICE))
    finally:
        cache.stop()
        cache.join(5)
        api_client.close()  # type: ignore[no-untyped-call]


def _patch_service(custom: k8s.CustomObjectsApi, key: ServiceKey, patch: dict[str, Any]) -> None:
    custom.patch_namespaced_custom_object(*SERVING, key.namespace, "llminferenceservices", key.name, patch)


def _exercise_worker(
    cluster: Cluster, custom: k8s.CustomObjectsApi, activities: RouterActivities, key: ServiceKey
) -> None:
    run_pass(activities, key)  # creates route, pools, EPP Service; writes status
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
    _patch_service(custom, key, {"spec": {"model": {"name": "m2"}, "router": {"scheduler": scheduler}}})
    run_pass(activities, key)  # updates all three
    reject_v1alpha2(cluster, custom, key)
    run_pass(activities, key)  # the gateway rejected v1alpha2: attempt_v1_migration updates the route
    activities.set_stop_annotation(StopInput(key=key, stopped=True))
    run_pass(activities, key)  # deletes route, pools, EPP Service
    activities.set_stop_annotation(StopInput(key=key, stopped=False))
    # A spec the router cannot read: its status is written and a Warning Event created; fixed, then broken
    # the same way again, the same Event repeats and its series is patched.
    # (model.lora.adapters is an open-schema field: the CRD accepts any value, the router wants a list.)
    adapters: list[object] = ["all of them", [], "all of them"]
    for value in adapters:
        _patch_service(custom, key, {"spec": {"model": {"lora": {"adapters": value}}}})
        run_pass(activities, key)


def reject_v1alpha2(cluster: Cluster, custom: k8s.CustomObjectsApi, key: ServiceKey) -> None:
    """A gateway controller that accepts only v1 pools writes the route's status (as the admin)."""
    admin = cluster.api_client("gateway-controller", direct=True)
    config = ControllerConfig(accepted_pool_groups=frozenset({POOL_V1_GROUP}))
    controller = SimulatedGatewayController(admin, config).start()
    try:
        assert controller.wait_synced()
        route = naming.route_name(key.name)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            found: Any = custom.get_namespaced_custom_object(
                "gateway.networking.k8s.io", "v1", key.namespace, "httproutes", route
            )
            if (found.get("status") or {}).get("parents"):
                return
            time.sleep(0.05)
        raise AssertionError(f"the gateway controller wrote no status on HTTPRoute {route}")
    finally:
        controller.stop()
        admin.close()  # type: ignore[no-untyped-call]


def exercise_watcher(cluster: Cluster, custom: k8s.CustomObjectsApi, namespaces: list[str]) -> None:
    class Discard:
        async def send(self, signal: ServiceSignal) -> None:
            return None

    async def watch_for_a_while() -> None:
        stop = asyncio.Event()
        api_client = cluster.api_client(AGENTS[WATCHER], role="watcher")
        tuning = Tuning(watch_timeout_seconds=5, backoff_first=0.05, debounce_seconds=0.01, sync_timeout=5)
        cache = ClusterCache(api_client, tuning)
        watching = watch_and_signal(cache, Discard(), namespaces, cluster.env, stop, tuning)
        task = asyncio.create_task(watching)
        await until_every_loop_watches(cluster, cache)
        stop.set()
        await task
        await stop_cache(cache)
        api_client.close()  # type: ignore[no-untyped-call]

    asyncio.run(watch_for_a_while())


async def until_every_loop_watches(cluster: Cluster, cache: ClusterCache, timeout: float = 60) -> None:
    """Until the services are listed and every loop has had its watch answered (the CRD list alone is
    megabytes: on a busy machine that takes seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        watched = {
            (r.group, r.resource) for r in cluster.counter.records(user_agent=AGENTS[WATCHER], verb="watch")
        }
        loops = {(loop.target.resource.group, loop.target.resource.plural) for loop in cache.loops}
        if (
            LLMISVC in {loop.target.resource for loop in cache.loops}
            and cache.is_synced()
            and loops <= watched
        ):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the watcher's loops did not all watch within {timeout:.0f}s: {cache.unsynced()}")


EXERCISES: dict[str, Exercise] = {WORKER: exercise_worker, WATCHER: exercise_watcher}


def applied_rbac(cluster: Cluster) -> list[dict[str, Any]]:
    """The RBAC objects on the plane that concern this test: the shape's cluster-wide objects, the
    KServe-config reader in its KServe namespace and, namespaced, the Roles in its namespace."""
    shape = cluster.plane.shape
    managed = [cluster.namespace] if shape == "namespaced" else []
    return identity.rbac_objects(shape, [cluster.kserve_namespace], managed)


def run_as(cluster: Cluster, account: str) -> set[rbac_grants.Grant]:
    """Run the account's part of the product on the test's namespaces; the calls it made. Not one may
    have been refused."""
    with cluster.control.admin("rbac-test-setup") as admin:
        custom = seed(cluster, admin)
        namespaces = [cluster.namespace] if cluster.plane.shape == "namespaced" else []
        EXERCISES[account](cluster, custom, namespaces)
    refused = cluster.counter.records(user_agent=AGENTS[account], code=403)
    assert [(r.method, r.path) for r in refused] == [], f"kube-apiserver refused {account}"
    return rbac_grants.calls(cluster.counter, AGENTS[account])


def check_least_privilege(cluster: Cluster, account: str) -> None:
    made = run_as(cluster, account)
    granted = rbac_grants.grants(applied_rbac(cluster), account)
    assert {c for c in made if not rbac_grants.allowed(granted, c)} == set(), "calls outside this reading"
    assert rbac_grants.unused(granted, made) == set(), "grants no call needs"


@pytest.mark.parametrize("account", [WORKER, WATCHER])
def test_the_cluster_wide_rbac_lets_the_product_run_unrefused_and_grants_nothing_unused(
    cluster: Cluster, account: str
) -> None:
    check_least_privilege(cluster, account)


@pytest.mark.parametrize("account", [WORKER, WATCHER])
def test_with_a_namespace_list_the_rbac_lets_the_product_run_unrefused_and_grants_nothing_unused(
    namespaced: Cluster, account: str
) -> None:
    check_least_privilege(namespaced, account)


# --- what is not granted is refused -------------------------------------------------------------------


def allows(cluster: Cluster, account: str, grant: rbac_grants.Grant, name: str = "") -> bool:
    """The authorizer's answer (a SubjectAccessReview) for the account's ``grant``-shaped request."""
    scope, group, resource, verb = grant
    resource, _, subresource = resource.partition("/")
    attributes = k8s.V1ResourceAttributes(
        namespace="" if scope == rbac_grants.ALL else scope,
        verb=verb,
        group=group,
        resource=resource,
        subresource=subresource or None,
        name=name or None,
    )
    user = f"system:serviceaccount:{identity.ROUTER_NAMESPACE}:{account}"
    groups = ["system:serviceaccounts", f"system:serviceaccounts:{identity.ROUTER_NAMESPACE}"]
    review = k8s.V1SubjectAccessReview(
        spec=k8s.V1SubjectAccessReviewSpec(user=user, groups=groups, resource_attributes=attributes)
    )
    with cluster.control.admin("rbac-test-review") as api:
        answer: Any = k8s.AuthorizationV1Api(api).create_subject_access_review(review)
    return bool(answer.status.allowed)


def not_granted(granted: set[rbac_grants.Grant]) -> set[rbac_grants.Grant]:
    """Requests next to the grants that the grants do not allow: every other verb on a resource in a scope
    the account has grants in, and a namespaced grant asked outside its namespace."""
    near = {(scope, g, r, v) for scope, g, r, _ in granted for v in VERBS}
    near |= {(OUTSIDE, g, r, v) for scope, g, r, v in granted if scope != rbac_grants.ALL}
    return {request for request in near if not rbac_grants.allowed(granted, request)}


def check_refusals(cluster: Cluster, account: str) -> None:
    granted = rbac_grants.grants(applied_rbac(cluster), account)
    probes = not_granted(granted)
    assert probes
    assert sorted(p for p in probes if allows(cluster, account, p)) == [], "allowed beyond deploy/'s rules"
    some = next(iter(sorted(g for g in granted if g[2] != "configmaps")))
    assert allows(cluster, account, some), f"the review refuses a grant too: {some}"


@pytest.mark.parametrize("account", [WORKER, WATCHER])
def test_the_cluster_wide_rbac_refuses_every_request_it_does_not_grant(
    cluster: Cluster, account: str
) -> None:
    check_refusals(cluster, account)


@pytest.mark.parametrize("account", [WORKER, WATCHER])
def test_with_a_namespace_list_nothing_namespaced_is_allowed_outside_the_managed_namespaces(
    namespaced: Cluster, account: str
) -> None:
    check_refusals(namespaced, account)
    for outside in ((OUTSIDE, "apps", "deployments", "list"), (OUTSIDE, "", "services", "create")):
        assert not allows(namespaced, account, outside), outside


@pytest.mark.parametrize("account", [WORKER, WATCHER])
def test_the_config_reader_lets_list_and_watch_name_inferenceservice_config_only(
    cluster: Cluster, account: str
) -> None:
    """``resourceNames`` narrows a list or watch only when it names the object: a ``metadata.name`` field
    selector (what the caches send). A list of the namespace's ConfigMaps, or a get, is refused."""
    api: Any = cluster.api_client("rbac-test", role=ROLES[account])
    try:
        core = k8s.CoreV1Api(api)
        kserve, name = cluster.kserve_namespace, "inferenceservice-config"
        listed = core.list_namespaced_config_map(kserve, field_selector=f"metadata.name={name}")
        assert listed.items == []
        for refused in (
            lambda: core.list_namespaced_config_map(kserve),
            lambda: core.read_namespaced_config_map(name, kserve),
        ):
            with pytest.raises(ApiException) as answer:
                refused()
            assert answer.value.status == 403
        # the proxy sees the refusals: a product run with none recorded had none
        assert cluster.counter.count(code=403, user_agent="rbac-test") == 2
    finally:
        api.close()


# --- the manifests themselves -------------------------------------------------------------------------

NAMESPACED = "deploy/overlays/namespaced"


def managed_namespaces(objects: list[dict[str, Any]]) -> list[str]:
    settings = next(o for o in objects if o["kind"] == "ConfigMap")
    value = str(settings["data"]["LLMISVC_ROUTER_NAMESPACES"])
    return [n for n in value.split(",") if n.strip()]


def test_the_namespaced_overlay_lists_the_namespaces_it_grants() -> None:
    objects = rbac_grants.render(NAMESPACED)
    roles = {o["metadata"]["namespace"] for o in objects if o["kind"] == "Role"} - {"kserve"}
    assert set(managed_namespaces(objects)) == roles == {"llm"}


def test_the_config_role_is_the_union_of_what_both_read() -> None:
    [reader] = [
        o
        for o in rbac_grants.render("deploy")
        if o["kind"] == "Role" and o["metadata"]["name"] == identity.CONFIG_READER
    ]
    assert reader["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["inferenceservice-config"],
            "verbs": ["list", "watch"],
        }
    ]
