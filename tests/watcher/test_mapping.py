"""Re-evaluation triggers (spec 1.8): which services an event affects, one table row per rule."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from llmisvc_core.models import kube
from llmisvc_core.triggers import groups
from llmisvc_core.triggers.change import Key
from llmisvc_core.world.status_merge import merge_status
from llmisvc_watcher.model import ADDED, DELETED, MODIFIED, Affected, WatchEvent
from tests.builders import KSERVE, Wire, http_route, service
from tests.builders.kube import crd, established, ingress_config, managed, obj, tokenizer_deployment
from tests.builders.watch import event, observed
from tests.watcher.cluster import CacheWorld

GW = "gateway.networking.k8s.io"
INGRESS = {"ingressGateway": "x", "kserveIngressGateway": "edge/public-gateway"}


@dataclass
class Case:
    id: str
    event: WatchEvent
    services: list[Wire]
    expected: list[tuple[str, str]]
    routes: list[Wire] = field(default_factory=list)
    configmap: Wire | None = None


def world_of(case: Case) -> CacheWorld:
    """The world at start-up, listed as the watcher lists it: what services use first, then services."""
    initial = [*case.routes, *([case.configmap] if case.configmap else []), *case.services]
    return CacheWorld().put(*initial)


def with_route(**http: object) -> Wire:
    return {"route": {"http": http}}


CASES = [
    # --- the service itself ---------------------------------------------------------------------
    Case("a service event affects that service", event(service("a"), MODIFIED), [], [("ns", "a")]),
    Case("a deleted service affects that service", event(service("a"), DELETED), [], [("ns", "a")]),
    Case(
        "a service found on the first list affects that service",
        event(service("a"), initial=True),
        [],
        [("ns", "a")],
    ),
    # --- owned objects ----------------------------------------------------------------------------
    Case(
        "a managed HTTPRoute affects its owner",
        event(managed(kube.HTTPROUTE, "a-kserve-route", "a"), MODIFIED),
        [service("a"), service("b")],
        [("ns", "a")],
    ),
    Case(
        "a managed Service affects its owner even before the owner is seen",
        event(managed(kube.SERVICE, "a-epp-service", "a"), DELETED),
        [],
        [("ns", "a")],
    ),
    Case(
        "a managed Deployment affects its owner",
        event(managed(kube.DEPLOYMENT, "a-kserve-router-scheduler", "a"), MODIFIED),
        [service("a")],
        [("ns", "a")],
    ),
    Case(
        "the standalone tokenizer Deployment (KServe #5712, its own labels) affects its owner",
        event(tokenizer_deployment(service("a"), {"availableReplicas": 1}), MODIFIED),
        [service("a"), service("b")],
        [("ns", "a")],
    ),
    Case(
        "a managed v1alpha2 InferencePool affects its owner",
        event(managed(kube.POOL_V1ALPHA2, "a-inference-pool", "a"), DELETED),
        [service("a")],
        [("ns", "a")],
    ),
    Case(
        "an owner reference without the part-of label is not ownership",
        event(obj(kube.SERVICE, "x", owner="a"), MODIFIED),
        [service("a")],
        [],
    ),
    Case(
        "a non-controller owner reference is not ownership",
        event(
            obj(
                kube.SERVICE,
                "x",
                labels={"app.kubernetes.io/part-of": "llminferenceservice"},
                owner="a",
                controller=False,
            ),
            MODIFIED,
        ),
        [service("a")],
        [],
    ),
    Case(
        "an owner of another kind is not a service",
        event(
            obj(
                kube.SERVICE,
                "x",
                labels={"app.kubernetes.io/part-of": "llminferenceservice"},
                owner="a",
                owner_kind="Deployment",
            ),
            MODIFIED,
        ),
        [service("a")],
        [],
    ),
    # --- Gateways ---------------------------------------------------------------------------------
    Case(
        "a gateway affects services whose status lists it",
        event(obj(kube.GATEWAY, "gw", "infra"), MODIFIED),
        [service("a", status=observed(("infra", "gw"))), service("b", status=observed(("other", "gw")))],
        [("ns", "a")],
    ),
    Case(
        "a status gateway without namespace is in the service's namespace",
        event(obj(kube.GATEWAY, "gw", "ns"), MODIFIED),
        [service("a", status=observed((None, "gw")))],
        [("ns", "a")],
    ),
    Case(
        "a gateway affects services whose gateway.refs name it",
        event(obj(kube.GATEWAY, "gw", "infra"), MODIFIED),
        [service("a", router={"gateway": {"refs": [{"name": "gw", "namespace": "infra"}]}})],
        [("ns", "a")],
    ),
    Case(
        "a gateway ref without namespace is in the service's namespace",
        event(obj(kube.GATEWAY, "gw", "ns"), DELETED),
        [
            service("a", router={"gateway": {"refs": [{"name": "gw"}]}}),
            service("b", "elsewhere", router={"gateway": {"refs": [{"name": "gw"}]}}),
        ],
        [("ns", "a")],
    ),
    Case(
        "the default ingress gateway affects services using the route preset",
        event(obj(kube.GATEWAY, "kserve-ingress-gateway", KSERVE), MODIFIED),
        [service("a", router={"route": {}}), service("b", router={"scheduler": {}}), service("c")],
        [("ns", "a")],
    ),
    Case(
        "a gateway block without refs uses the configured ingress gateway",
        event(obj(kube.GATEWAY, "public-gateway", "edge"), MODIFIED),
        [service("a", router={"gateway": {}})],
        [("ns", "a")],
        configmap=ingress_config(INGRESS),
    ),
    Case(
        "the ingress gateway of the ConfigMap replaces the default one",
        event(obj(kube.GATEWAY, "kserve-ingress-gateway", KSERVE), MODIFIED),
        [service("a", router={"route": {}})],
        [],
        configmap=ingress_config(INGRESS),
    ),
    Case(
        "a gateway affects services whose managed route spec names it as parent",
        event(obj(kube.GATEWAY, "gw", "infra"), MODIFIED),
        [service("a", router=with_route(spec={"parentRefs": [{"name": "gw", "namespace": "infra"}]}))],
        [("ns", "a")],
    ),
    Case(
        "a gateway affects services through the parentRefs of a route they reference",
        event(obj(kube.GATEWAY, "gw", "ns"), MODIFIED),
        [service("a", router=with_route(refs=[{"name": "user-route"}])), service("b", router={"route": {}})],
        [("ns", "a")],
        routes=[http_route("user-route", parent_refs=[{"name": "gw"}])],
    ),
    Case(
        "a parentRef of another kind of a referenced route is read as a Gateway, as discovery reads it (Q27)",
        event(obj(kube.GATEWAY, "gw", "ns"), MODIFIED),
        [service("a", router=with_route(refs=[{"name": "r"}]))],
        [("ns", "a")],
        routes=[http_route("r", parent_refs=[{"name": "gw", "kind": "Service", "group": ""}])],
    ),
    Case(
        "a gateway nobody uses affects nobody",
        event(obj(kube.GATEWAY, "unused", "ns"), ADDED),
        [service("a", router={"route": {}}), service("b")],
        [],
    ),
    # --- HTTPRoutes -------------------------------------------------------------------------------
    Case(
        "a route affects services whose status lists it",
        event(http_route("r", "ns"), MODIFIED),
        [service("a", status=observed(("infra", "gw"), routes=[(None, "r")])), service("b")],
        [("ns", "a")],
    ),
    Case(
        "a route affects services whose route.http.refs name it in their namespace",
        event(http_route("r", "ns"), DELETED),
        [
            service("a", router=with_route(refs=[{"name": "r"}])),
            service("b", "other", router=with_route(refs=[{"name": "r"}])),
        ],
        [("ns", "a")],
    ),
    # --- InferencePools ---------------------------------------------------------------------------
    Case(
        "a v1 pool affects services of its namespace whose pool ref names it",
        event(obj(kube.POOL_V1, "shared"), MODIFIED),
        [
            service("a", router={"scheduler": {"pool": {"ref": {"name": "shared"}}}}),
            service("b", "other", router={"scheduler": {"pool": {"ref": {"name": "shared"}}}}),
            service("c", router={"scheduler": {}}),
        ],
        [("ns", "a")],
    ),
    Case(
        "a v1alpha2 pool affects services whose pool ref names it",
        event(obj(kube.POOL_V1ALPHA2, "shared"), ADDED),
        [service("a", router={"scheduler": {"pool": {"ref": {"name": "shared"}}}})],
        [("ns", "a")],
    ),
    # --- CRDs and configuration -------------------------------------------------------------------
    Case(
        "a Gateway API CRD affects every service",
        event(crd(GW, "httproutes")),
        [service("a"), service("b", "other")],
        [("ns", "a"), ("other", "b")],
    ),
    Case(
        "an InferencePool CRD of either group affects every service",
        event(crd("inference.networking.x-k8s.io", "inferencepools", ("v1alpha2",)), DELETED),
        [service("a")],
        [("ns", "a")],
    ),
    Case(
        "a CRD of an unrelated group affects nobody",
        event(crd("cert-manager.io", "certificates")),
        [service("a")],
        [],
    ),
    Case(
        "a CRD change that keeps its served versions affects nobody",
        event(crd(GW, "gateways"), MODIFIED, old=crd(GW, "gateways")),
        [service("a")],
        [],
    ),
    Case(
        "a CRD that starts serving another version affects every service",
        event(crd(GW, "gateways", ("v1", "v1beta1")), MODIFIED, old=crd(GW, "gateways")),
        [service("a")],
        [("ns", "a")],
    ),
    Case(
        "a CRD that becomes Established affects every service (its kind is served from then on)",
        event(established(crd(GW, "gateways")), MODIFIED, old=crd(GW, "gateways")),
        [service("a")],
        [("ns", "a")],
    ),
    Case(
        "a CRD status change that keeps it Established affects nobody",
        event(established(crd(GW, "gateways")), MODIFIED, old=established(crd(GW, "gateways"), stored=False)),
        [service("a")],
        [],
    ),
    Case(
        "the router ConfigMap affects every service",
        event(ingress_config(INGRESS), MODIFIED, old=ingress_config(None)),
        [service("a"), service("b")],
        [("ns", "a"), ("ns", "b")],
    ),
    Case(
        "the router ConfigMap deleted affects every service",
        event(ingress_config(INGRESS), DELETED),
        [service("a")],
        [("ns", "a")],
    ),
    Case(
        "a ConfigMap change outside the ingress key affects nobody",
        event(
            ingress_config(INGRESS) | {"data": {**ingress_config(INGRESS)["data"], "x": "1"}},
            MODIFIED,
            old=ingress_config(INGRESS),
        ),
        [service("a")],
        [],
    ),
    Case(
        "a ConfigMap of that name in another namespace affects nobody",
        event(ingress_config(INGRESS, namespace="default"), MODIFIED),
        [service("a")],
        [],
    ),
    # --- the start-up state -----------------------------------------------------------------------
    Case(
        "objects found on the first list affect nobody",
        event(managed(kube.HTTPROUTE, "a-kserve-route", "a"), initial=True),
        [service("a", router={"route": {}})],
        [],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_affected_services(case: Case) -> None:
    affected = world_of(case).affected(case.event)
    assert [(a.namespace, a.name) for a in affected] == case.expected


def test_the_reason_names_the_kind_the_object_and_what_happened() -> None:
    world = world_of(Case("", event(service("a")), [service("a", router={"route": {}})], []))
    ingress = event(obj(kube.GATEWAY, "kserve-ingress-gateway", KSERVE), MODIFIED)
    assert world.affected(ingress) == [Affected("ns", "a", "Gateway kserve/kserve-ingress-gateway modified")]
    cluster_scoped = event(crd(GW, "gateways"), DELETED)
    assert world.affected(cluster_scoped)[0].reason == (
        "CustomResourceDefinition gateways.gateway.networking.k8s.io deleted"
    )


def test_a_service_is_listed_once_when_several_rules_name_it() -> None:
    svc = service(
        "a",
        router={"gateway": {"refs": [{"name": "gw"}]}, "route": {}},
        status=observed(("ns", "gw")),
    )
    world = world_of(Case("", event(svc), [svc], []))
    assert len(world.affected(event(obj(kube.GATEWAY, "gw"), MODIFIED))) == 1


def test_a_new_ingress_setting_moves_the_gateway_trigger() -> None:
    world = world_of(Case("", event(service("a")), [service("a", router={"route": {}})], []))
    world.affected(event(ingress_config(INGRESS), ADDED))
    assert world.affected(event(obj(kube.GATEWAY, "public-gateway", "edge"), MODIFIED)) != []
    world.affected(event(ingress_config(INGRESS), DELETED))
    assert world.affected(event(obj(kube.GATEWAY, "public-gateway", "edge"), MODIFIED)) == []


def test_an_invalid_configmap_maps_like_the_defaults() -> None:
    world = world_of(Case("", event(service("a")), [service("a", router={"route": {}})], []))
    broken = ingress_config(None) | {"data": {"ingress": "{not json"}}
    world.affected(event(broken, MODIFIED))
    default_gateway = event(obj(kube.GATEWAY, "kserve-ingress-gateway", KSERVE), MODIFIED)
    assert [a.name for a in world.affected(default_gateway)] == ["a"]


def test_a_service_whose_spec_does_not_parse_still_maps_by_its_status() -> None:
    svc = service("a", router={"route": "not an object"}, status=observed(("ns", "gw")))
    world = world_of(Case("", event(svc), [svc], []))
    assert [a.name for a in world.affected(event(obj(kube.GATEWAY, "gw"), MODIFIED))] == ["a"]


def test_a_deleted_service_is_forgotten() -> None:
    svc = service("a", router={"route": {}})
    world = world_of(Case("", event(svc), [svc], []))
    world.affected(event(svc, DELETED))
    assert world.affected(event(obj(kube.GATEWAY, "kserve-ingress-gateway", KSERVE), MODIFIED)) == []


def _with_status(svc: Wire, status: Wire, resource_version: str) -> Wire:
    return {**svc, "metadata": {**svc["metadata"], "resourceVersion": resource_version}, "status": status}


def test_the_routers_own_status_write_does_not_trigger_a_pass() -> None:
    before = _with_status(service("a"), {"conditions": [{"type": "WorkloadsReady", "status": "True"}]}, "1")
    world = world_of(Case("status echo", event(before), [before], []))
    router_fields = {
        "url": "http://x/",
        "observedGeneration": 1,
        "conditions": [
            {"type": "WorkloadsReady", "status": "True"},
            {"type": "RouterReady", "status": "True"},
        ],
    }
    assert world.affected(event(_with_status(before, router_fields, "2"), MODIFIED)) == []


def test_a_status_change_by_another_controller_still_triggers_a_pass() -> None:
    before = _with_status(
        service("a"), {"conditions": [{"type": "WorkloadsReady", "status": "Unknown"}]}, "1"
    )
    after = _with_status(before, {"conditions": [{"type": "WorkloadsReady", "status": "True"}]}, "2")
    assert [
        a[:2] for a in world_of(Case("x", event(before), [before], [])).affected(event(after, MODIFIED))
    ] == [("ns", "a")]


def test_a_spec_change_after_a_status_write_still_triggers_a_pass() -> None:
    before = _with_status(service("a"), {}, "1")
    after = {**_with_status(before, {}, "2"), "spec": {"router": {"route": {}}}}
    assert [
        a[:2] for a in world_of(Case("x", event(before), [before], [])).affected(event(after, MODIFIED))
    ] == [("ns", "a")]


def test_the_routers_first_status_write_does_not_trigger_a_pass() -> None:
    """The first write also fills in ``WorkloadsReady=Unknown`` (knative's initialisation): still an echo."""
    before = _with_status(service("a"), {}, "1")
    planned = {
        "url": "http://a.ns/",
        "observedGeneration": 1,
        "conditions": [
            {"type": t, "status": s}
            for t, s in [("Ready", "Unknown"), ("RouterReady", "True"), ("WorkloadsReady", "Unknown")]
        ],
    }
    first_write = _with_status(before, merge_status({}, planned), "2")
    assert {c["type"] for c in first_write["status"]["conditions"]} >= {"WorkloadsReady"}
    world = world_of(Case("first write", event(before), [before], []))
    assert world.affected(event(first_write, MODIFIED)) == []


# --- routing groups: the peers of a member (KServe router_group_handler.go, #5812/#5943) -------------


def grouped(
    name: str,
    group: str | None = "group-a",
    weight: int = 1,
    *,
    routable: bool = False,
    router: Wire | None = None,
    annotations: dict[str, str] | None = None,
) -> Wire:
    """Upstream's ``groupedSvc``/``ungroupedSvc``/``memberSvc``/``routableMember``."""
    route: Wire = {"http": {}} | ({"group": group, "weight": weight} if group is not None else {})
    svc = service(name, router={"route": route, **(router or {})}, annotations=annotations)
    if routable:
        svc["status"] = {
            "conditions": [{"type": "RouterReady", "status": "True"}],
            "workloads": {"primary": {"kind": "Deployment", "name": name, "readyReplicas": 1}},
        }
    return svc


def _affected(services: list[Wire], change: WatchEvent) -> list[tuple[str, str]]:
    world = world_of(Case("", change, services, []))
    return [(a.namespace, a.name) for a in world.affected(change)]


GROUP_EVENTS = [
    pytest.param(
        [grouped("v1"), grouped("v2"), grouped("v3")],
        event(grouped("v3", "group-b"), MODIFIED),
        [("ns", "v3"), ("ns", "v1"), ("ns", "v2")],
        id="update_old_group_members_enqueued_when_member_switches_groups",
    ),
    pytest.param(
        [grouped("v1"), grouped("v2")],
        event(grouped("v2", None), MODIFIED),
        [("ns", "v2"), ("ns", "v1")],
        id="update_old_group_members_enqueued_when_member_leaves_group",
    ),
    pytest.param(
        [grouped("v1"), grouped("v2")],
        event(grouped("v2", weight=5), MODIFIED),
        [("ns", "v2"), ("ns", "v1")],
        id="update_peers_enqueued_on_weight_change",
    ),
    pytest.param(
        [grouped("v1"), grouped("v2")],
        event(grouped("v2"), DELETED),
        [("ns", "v2"), ("ns", "v1")],
        id="delete_peers_enqueued_on_member_deletion",
    ),
    pytest.param(
        [grouped("solo", None)],
        event(grouped("solo", None)),
        [("ns", "solo")],
        id="create_non_grouped_member_enqueues_nothing",
    ),
    pytest.param(
        [grouped("v1")],
        event(grouped("v2")),
        [("ns", "v2"), ("ns", "v1")],
        id="create_a_new_member_signals_the_group",
    ),
    pytest.param(
        [
            grouped("v1"),
            grouped("v2"),
            grouped("v3", "group-b"),
            {**grouped("v4"), "metadata": {"name": "v4", "namespace": "other"}},
        ],
        event(grouped("v2"), DELETED),
        [("ns", "v2"), ("ns", "v1")],
        id="only_members_of_the_same_namespace_and_group",
    ),
    pytest.param(
        [grouped("v1"), grouped("v2")],
        event(grouped("v2", annotations={"unrelated": "x"}), MODIFIED),
        [("ns", "v2")],
        id="a_change_outside_the_traffic_fields_signals_only_the_member",
    ),
    pytest.param(
        [grouped("v1"), grouped("v2")],
        event(grouped("v2"), initial=True),
        [("ns", "v2")],
        id="the_first_list_signals_no_peers_every_first_pass_reads_the_group",
    ),
]


@pytest.mark.parametrize(("services", "change", "expected"), GROUP_EVENTS)
def test_group_member_event_handler(services: list[Wire], change: WatchEvent, expected: list[Key]) -> None:
    assert _affected(services, change) == expected


def test_the_routers_own_status_write_that_makes_a_member_routable_signals_its_peers_only() -> None:
    """A member's RouterReady flip is the router's own write (an echo for the member itself), but its peers
    route by it (``isMemberRoutable`` in ``trafficFieldsChanged``)."""
    before = {**grouped("v2"), "status": {"workloads": {"primary": {"name": "v2", "readyReplicas": 1}}}}
    after = {
        **before,
        "status": {**before["status"], "conditions": [{"type": "RouterReady", "status": "True"}]},
    }
    assert _affected([grouped("v1"), before], event(after, MODIFIED)) == [("ns", "v1")]


def test_a_router_status_write_that_changes_nothing_peers_use_signals_nobody() -> None:
    before = grouped("v2", routable=True)
    after = {**before, "status": {**before["status"], "url": "http://x/"}}
    assert _affected([grouped("v1"), before], event(after, MODIFIED)) == []


def _member(**changes: object) -> Wire:
    svc = grouped("v1", "g", 9, routable=True, router={"scheduler": {}})
    svc["spec"]["model"] = {"name": "m"}
    for path, value in changes.items():
        target = svc
        *parents, leaf = path.split("__")
        for part in parents:
            target = target.setdefault(part, {})
        if value is None:
            target.pop(leaf, None)
        else:
            target[leaf] = value
    return svc


TRAFFIC_FIELDS = [
    pytest.param(service("v1"), service("v1"), False, id="no_traffic_fields_on_either"),
    pytest.param(service("v1"), grouped("v1", "g"), True, id="group_added"),
    pytest.param(grouped("v1", "g"), service("v1"), True, id="group_removed"),
    pytest.param(grouped("v1", "g", 9), grouped("v1", "g", 5), True, id="weight_changed"),
    pytest.param(
        _member(),
        _member(metadata__annotations={"serving.kserve.io/stop": "true"}),
        True,
        id="force_stop_changed",
    ),
    pytest.param(
        _member(), _member(spec__model__name="different"), True, id="model_name_changed_on_grouped_member"
    ),
    pytest.param(
        _member(),
        _member(spec__model__lora={"adapters": [{"name": "new-adapter"}]}),
        True,
        id="lora_adapters_changed_on_grouped_member",
    ),
    pytest.param(
        _member(),
        _member(spec__baseRefs=[{"name": "new-config"}]),
        True,
        id="base_refs_changed_on_grouped_member",
    ),
    pytest.param(
        _member(spec__router__scheduler=None), _member(), True, id="scheduler_added_on_grouped_member"
    ),
    pytest.param(
        _member(), _member(spec__router__scheduler=None), True, id="scheduler_removed_on_grouped_member"
    ),
    pytest.param(
        _member(spec__router__scheduler={"pool": {"ref": {"name": "old-pool"}}}),
        _member(spec__router__scheduler={"pool": {"ref": {"name": "new-pool"}}}),
        True,
        id="scheduler_pool_ref_changed_on_grouped_member",
    ),
    pytest.param(
        _member(),
        _member(spec__router__scheduler={"pool": {"ref": {"name": "custom-pool"}}}),
        True,
        id="scheduler_pool_ref_added_on_grouped_member",
    ),
    pytest.param(_member(status=None), _member(), True, id="peer_becomes_routable"),
    pytest.param(
        _member(),
        _member(status__workloads__primary__readyReplicas=0),
        True,
        id="peer_becomes_unroutable_replicas_drop_to_0",
    ),
    pytest.param(
        _member(),
        _member(status__workloads__primary__readyReplicas=3),
        False,
        id="replica_count_change_without_routable_transition",
    ),
    pytest.param(
        _member(),
        _member(status__addresses=[{"url": "http://x", "models": [{"name": "other"}]}]),
        True,
        id="status_addresses_model_names_changed",
    ),
    pytest.param(
        _member(),
        _member(status__addresses=[{"url": "http://x", "models": [{"name": "m"}]}]),
        False,
        id="status_addresses_model_names_unchanged",
    ),
    pytest.param(
        _member(), _member(metadata__labels={"team": "x"}), False, id="non_traffic_change_on_grouped_member"
    ),
    pytest.param(
        _member(), _member(metadata__deletionTimestamp="2026-01-01T00:00:00Z"), True, id="deletion_started"
    ),
]


@pytest.mark.parametrize(("old", "new", "changed"), TRAFFIC_FIELDS)
def test_traffic_fields_changed(old: Wire, new: Wire, changed: bool) -> None:
    assert groups.traffic_fields_changed(old, new) is changed


# --- model names two services claim (the ModelNameCollision Warning, KServe #5800) ----------------


def claiming(
    name: str,
    model: str,
    *,
    namespace: str = "ns",
    adapters: tuple[str, ...] = (),
    advertised: tuple[str, ...] | None = None,
    group: str | None = None,
    annotations: dict[str, str] | None = None,
) -> Wire:
    """A service with a route spec serving ``model`` (and ``adapters``); ``advertised`` names the models
    of its ``status.addresses`` (publisher names in its namespace)."""
    spec_model: Wire = {"name": model}
    if adapters:
        spec_model["lora"] = {"adapters": [{"name": a} for a in adapters]}
    route: Wire = {"http": {"spec": {}}} | ({"group": group, "weight": 1} if group is not None else {})
    svc = service(name, namespace, router={"route": route}, model=spec_model, annotations=annotations)
    if advertised is not None:
        models = [{"name": f"publishers/{namespace}/models/{m}"} for m in advertised]
        svc["status"] = {"addresses": [{"url": f"http://x/{namespace}/{name}", "models": models}]}
    return svc


MODEL_NAME_EVENTS = [
    pytest.param(
        [claiming("a", "m"), claiming("b", "other")],
        event(claiming("c", "m")),
        [("ns", "c"), ("ns", "a")],
        id="a_new_service_signals_those_claiming_its_model_name",
    ),
    pytest.param(
        [claiming("a", "m"), claiming("c", "m")],
        event(claiming("c", "m"), DELETED),
        [("ns", "c"), ("ns", "a")],
        id="a_deleted_service_signals_those_it_collided_with",
    ),
    pytest.param(
        [claiming("a", "m1"), claiming("b", "m2"), claiming("c", "m1")],
        event(claiming("c", "m2"), MODIFIED),
        [("ns", "c"), ("ns", "a"), ("ns", "b")],
        id="a_new_model_name_signals_the_claimants_of_the_old_and_the_new_one",
    ),
    pytest.param(
        [claiming("a", "base", adapters=("m",))],
        event(claiming("c", "m")),
        [("ns", "c"), ("ns", "a")],
        id="an_adapter_name_is_claimed_too",
    ),
    pytest.param(
        [claiming("a", "m", namespace="elsewhere")],
        event(claiming("c", "m")),
        [("ns", "c")],
        id="only_services_of_the_same_namespace",
    ),
    pytest.param(
        [claiming("a", "m"), claiming("c", "m")],
        event(claiming("c", "m", annotations={"unrelated": "x"}), MODIFIED),
        [("ns", "c")],
        id="a_change_that_keeps_the_names_signals_only_the_service",
    ),
    pytest.param(
        [claiming("a", "m"), claiming("c", "m")],
        event(
            {**claiming("c", "m"), "metadata": {**claiming("c", "m")["metadata"], "deletionTimestamp": "t"}},
            MODIFIED,
        ),
        [("ns", "c"), ("ns", "a")],
        id="a_service_being_deleted_stops_colliding",
    ),
    pytest.param(
        [claiming("a", "m"), claiming("c", "m")],
        event(claiming("c", "m", group="g"), MODIFIED),
        [("ns", "c"), ("ns", "a")],
        id="joining_a_routing_group_changes_who_collides",
    ),
    pytest.param(
        [claiming("a", "m", group="g"), claiming("c", "m", group="g")],
        event(claiming("c", "m", group="g", annotations={"serving.kserve.io/stop": "true"}), MODIFIED),
        [("ns", "c"), ("ns", "a")],
        id="a_group_peer_claiming_the_name_is_signalled_once",
    ),
    pytest.param(
        [claiming("a", "m"), claiming("c", "m")],
        event(claiming("c", "m"), initial=True),
        [("ns", "c")],
        id="the_first_list_signals_nobody_else_every_first_pass_checks",
    ),
]


@pytest.mark.parametrize(("services", "change", "expected"), MODEL_NAME_EVENTS)
def test_5800_a_change_of_model_names_signals_the_services_claiming_them(
    services: list[Wire], change: WatchEvent, expected: list[Key]
) -> None:
    assert _affected(services, change) == expected


def test_5800_the_routers_status_write_advertising_other_names_signals_their_claimants_only() -> None:
    """The service's own status write is an echo for it, but what it advertises is what the others'
    collision checks read: the claimants of the names it was compared by and of those it now advertises."""
    before = claiming("c", "m")
    after = {**claiming("c", "m", advertised=("m2",)), "metadata": before["metadata"]}
    services = [claiming("a", "m"), claiming("b", "m2"), claiming("d", "unrelated"), before]
    assert _affected(services, event(after, MODIFIED, old=before)) == [("ns", "a"), ("ns", "b")]


def test_5800_only_the_claimants_signals_are_held_not_the_service_nor_its_group_peers() -> None:
    """A claimant's pass can only change its Warning, so the watcher may hold its signal back
    (``llmisvc_watcher.coalescing``); a group peer's routing changes with the member, so it is not held."""
    change = event(claiming("c", "m", group="g"))
    world = world_of(Case("", change, [claiming("a", "m"), claiming("b", "x", group="g")], []))
    affected = world.affected(change)
    assert {a.name: a.held for a in affected} == {"c": False, "b": False, "a": True}


def test_5800_a_status_write_advertising_the_spec_names_signals_nobody() -> None:
    before = claiming("c", "m")
    after = {**claiming("c", "m", advertised=("m",)), "metadata": before["metadata"]}
    assert _affected([claiming("a", "m"), before], event(after, MODIFIED, old=before)) == []


def test_5800_a_service_is_found_under_the_names_its_status_advertises() -> None:
    """A pass compares by the merged spec (a baseRef may set the model name), which its status shows."""
    merged_elsewhere = claiming("a", "from-spec", advertised=("from-base-ref",))
    assert _affected([merged_elsewhere], event(claiming("c", "from-base-ref"))) == [("ns", "c"), ("ns", "a")]


# --- what only a baseRef names (the known gap of issue 9, closed by reading the merge as the pass does) --


def _team_config(namespace: str = "ns") -> Wire:
    """An LLMInferenceServiceConfig naming a Gateway for the services whose baseRefs name it."""
    return obj(kube.LLMISVC_CONFIG, "team", namespace, spec={"router": {"gateway": {"refs": [TEAM_GW]}}})


TEAM_GW = {"name": "team-gw", "namespace": "infra"}


def _team_service() -> Wire:
    svc = service("a", router={"route": {}, "gateway": {}})
    svc["spec"]["baseRefs"] = [{"name": "team"}]
    return svc


def test_a_gateway_only_a_base_ref_names_is_watched_from_the_start() -> None:
    world = CacheWorld().put(_team_config(), _team_service())
    assert world.keys(event(obj(kube.GATEWAY, "team-gw", "infra"), MODIFIED)) == [("ns", "a")]


def test_a_base_ref_that_appears_later_starts_the_watch_of_its_gateway() -> None:
    world = CacheWorld().put(_team_service())
    assert world.keys(event(obj(kube.GATEWAY, "team-gw", "infra"), MODIFIED)) == []
    assert world.keys(event(_team_config(), ADDED)) == [("ns", "a")]
    assert world.keys(event(obj(kube.GATEWAY, "team-gw", "infra"), MODIFIED)) == [("ns", "a")]


def test_a_system_namespace_base_ref_names_a_gateway_for_every_namespace() -> None:
    world = CacheWorld().put(_team_config(KSERVE), _team_service())
    assert world.keys(event(obj(kube.GATEWAY, "team-gw", "infra"), MODIFIED)) == [("ns", "a")]


# --- what URL discovery reads of a Gateway: its class and its Service ---------------------------------


def test_a_gateway_class_affects_the_services_using_a_gateway_of_that_class() -> None:
    gateway = obj(kube.GATEWAY, "gw", "infra", spec={"gatewayClassName": "istio"})
    other = obj(kube.GATEWAY, "other", "infra", spec={"gatewayClassName": "envoy"})
    users = service("a", router={"gateway": {"refs": [{"name": "gw", "namespace": "infra"}]}})
    world = CacheWorld().put(gateway, other, users, service("b", router={"route": {}}))
    assert world.keys(event(obj(kube.GATEWAYCLASS, "istio", ""), MODIFIED)) == [("ns", "a")]
    assert world.keys(event(obj(kube.GATEWAYCLASS, "envoy", ""), MODIFIED)) == []


def test_a_service_labelled_for_a_gateway_affects_the_services_using_that_gateway() -> None:
    users = service("a", router={"gateway": {"refs": [{"name": "gw", "namespace": "infra"}]}})
    world = CacheWorld().put(users, service("b", router={"route": {}}))
    labelled = obj(kube.SERVICE, "gw-istio", "infra", labels={"gateway.networking.k8s.io/gateway-name": "gw"})
    assert world.keys(event(labelled, MODIFIED)) == [("ns", "a")]
    assert world.keys(event(obj(kube.SERVICE, "gw", "infra"), DELETED)) == [("ns", "a")]  # named like it
    assert world.keys(event(obj(kube.SERVICE, "unrelated", "infra"), MODIFIED)) == []
