"""Re-evaluation triggers (spec 1.8): which services an event affects, one table row per rule."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from router_core.models import kube
from router_core.world.config import Environment
from router_core.world.status_merge import merge_status
from tests.builders import KSERVE, Wire, http_route, service
from tests.builders.kube import crd, established, ingress_config, managed, obj
from tests.builders.watch import event, observed
from watcher import mapping
from watcher.mapping import WatchedWorld
from watcher.model import ADDED, DELETED, MODIFIED, Affected, WatchEvent

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


def world_of(case: Case) -> WatchedWorld:
    world = WatchedWorld.empty(Environment(kserve_namespace=KSERVE))
    initial = [*case.services, *case.routes, *([case.configmap] if case.configmap else [])]
    for item in initial:
        world.apply(event(item, initial=True))
    return world


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
        "a parentRef of another kind is not a gateway",
        event(obj(kube.GATEWAY, "gw", "ns"), MODIFIED),
        [service("a", router=with_route(refs=[{"name": "r"}]))],
        [],
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
    affected = mapping.affected_services(case.event, world_of(case))
    assert [(a.namespace, a.name) for a in affected] == case.expected


def test_the_reason_names_the_kind_the_object_and_what_happened() -> None:
    world = world_of(Case("", event(service("a")), [service("a", router={"route": {}})], []))
    ingress = event(obj(kube.GATEWAY, "kserve-ingress-gateway", KSERVE), MODIFIED)
    assert mapping.affected_services(ingress, world) == [
        Affected("ns", "a", "Gateway kserve/kserve-ingress-gateway modified")
    ]
    cluster_scoped = event(crd(GW, "gateways"), DELETED)
    assert mapping.affected_services(cluster_scoped, world)[0].reason == (
        "CustomResourceDefinition gateways.gateway.networking.k8s.io deleted"
    )


def test_a_service_is_listed_once_when_several_rules_name_it() -> None:
    svc = service(
        "a",
        router={"gateway": {"refs": [{"name": "gw"}]}, "route": {}},
        status=observed(("ns", "gw")),
    )
    world = world_of(Case("", event(svc), [svc], []))
    assert len(mapping.affected_services(event(obj(kube.GATEWAY, "gw"), MODIFIED), world)) == 1


def test_a_new_ingress_setting_moves_the_gateway_trigger() -> None:
    world = world_of(Case("", event(service("a")), [service("a", router={"route": {}})], []))
    world.apply(event(ingress_config(INGRESS), ADDED))
    assert (
        mapping.affected_services(event(obj(kube.GATEWAY, "public-gateway", "edge"), MODIFIED), world) != []
    )
    world.apply(event(ingress_config(INGRESS), DELETED))
    assert (
        mapping.affected_services(event(obj(kube.GATEWAY, "public-gateway", "edge"), MODIFIED), world) == []
    )


def test_an_invalid_configmap_maps_like_the_defaults() -> None:
    world = world_of(Case("", event(service("a")), [service("a", router={"route": {}})], []))
    broken = ingress_config(None) | {"data": {"ingress": "{not json"}}
    world.apply(event(broken, MODIFIED))
    default_gateway = event(obj(kube.GATEWAY, "kserve-ingress-gateway", KSERVE), MODIFIED)
    assert [a.name for a in mapping.affected_services(default_gateway, world)] == ["a"]


def test_a_service_whose_spec_does_not_parse_still_maps_by_its_status() -> None:
    svc = service("a", router={"route": "not an object"}, status=observed(("ns", "gw")))
    world = world_of(Case("", event(svc), [svc], []))
    assert [a.name for a in mapping.affected_services(event(obj(kube.GATEWAY, "gw"), MODIFIED), world)] == [
        "a"
    ]


def test_a_deleted_service_is_forgotten() -> None:
    svc = service("a", router={"route": {}})
    world = world_of(Case("", event(svc), [svc], []))
    world.apply(event(svc, DELETED))
    assert (
        mapping.affected_services(event(obj(kube.GATEWAY, "kserve-ingress-gateway", KSERVE), MODIFIED), world)
        == []
    )


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
    assert mapping.affected_services(event(_with_status(before, router_fields, "2"), MODIFIED), world) == []


def test_a_status_change_by_another_controller_still_triggers_a_pass() -> None:
    before = _with_status(
        service("a"), {"conditions": [{"type": "WorkloadsReady", "status": "Unknown"}]}, "1"
    )
    after = _with_status(before, {"conditions": [{"type": "WorkloadsReady", "status": "True"}]}, "2")
    assert [
        a[:2]
        for a in mapping.affected_services(
            event(after, MODIFIED), world_of(Case("x", event(before), [before], []))
        )
    ] == [("ns", "a")]


def test_a_spec_change_after_a_status_write_still_triggers_a_pass() -> None:
    before = _with_status(service("a"), {}, "1")
    after = {**_with_status(before, {}, "2"), "spec": {"router": {"route": {}}}}
    assert [
        a[:2]
        for a in mapping.affected_services(
            event(after, MODIFIED), world_of(Case("x", event(before), [before], []))
        )
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
    assert mapping.affected_services(event(first_write, MODIFIED), world) == []
