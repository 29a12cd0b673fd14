"""For any world and any change to an object the planner reads for a service, the trigger rules signal that
service: the oracle is a recording reader of the pass itself (``plan_pass``), so a read the rules do not
know of is a missed trigger, whatever rule it would need."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmisvc_core.models import kube
from llmisvc_core.models.kube import ObjectKey, ResourceType
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.planner.passes import plan_pass
from llmisvc_core.world.snapshot import Snapshot, snapshot_of
from llmisvc_watcher.model import ADDED, DELETED, MODIFIED, WatchEvent
from tests.builders import KSERVE, Wire, http_route, service
from tests.builders.kube import ingress_config, managed, obj
from tests.watcher.cluster import ENV, CacheWorld

NOW = "2026-01-01T00:00:00Z"
GATEWAYS = [("ns", "gw"), ("infra", "gw2"), (KSERVE, "kserve-ingress-gateway")]
GATEWAY_REFS = [{"name": "gw"}, {"name": "gw2", "namespace": "infra"}]


@dataclass
class Recording:
    """The core's ``Reader`` over a snapshot, noting every object a pass asks for (found or not) and
    every list it makes."""

    snapshot: Snapshot
    gets: set[ObjectKey] = field(default_factory=set)
    lists: set[tuple[ResourceType, str, tuple[tuple[str, str], ...]]] = field(default_factory=set)

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        self.gets.add(ObjectKey(type_, namespace if type_.namespaced else "", name))
        return self.snapshot.get(type_, namespace, name)

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        self.lists.add((type_, namespace, tuple(sorted(labels.items()))))
        found = self.snapshot.list(type_, namespace, labels)
        for item in found:
            self.gets.add(ObjectKey(type_, namespace, item["metadata"]["name"]))
        return found

    def is_installed(self, type_: ResourceType) -> bool:
        return self.snapshot.is_installed(type_)


# --- random worlds ---------------------------------------------------------------------------------

router_specs = st.fixed_dictionaries(
    {},
    optional={
        "gateway": st.sampled_from([{}, {"refs": [GATEWAY_REFS[0]]}, {"refs": [GATEWAY_REFS[1]]}]),
        "route": st.sampled_from(
            [
                {},
                {"http": {}},
                {"http": {"refs": [{"name": "r1"}]}},
                {"http": {"spec": {"parentRefs": [GATEWAY_REFS[1]]}}},
            ]
        ),
        "scheduler": st.sampled_from([{}, {"pool": {"ref": {"name": "p1"}}}]),
    },
)


@st.composite
def worlds(draw: st.DrawFn) -> tuple[Wire, list[Wire]]:
    svc = service("a", router=draw(router_specs), model={"uri": "hf://org/model", "name": "m"})
    objects: list[Wire] = []
    if draw(st.booleans()):
        svc["spec"]["baseRefs"] = [{"name": "team"}]
        team = draw(
            st.sampled_from(
                [{"gateway": {"refs": [GATEWAY_REFS[1]]}}, {"route": {"http": {"refs": [{"name": "r1"}]}}}]
            )
        )
        if draw(st.booleans()):
            objects.append(
                obj(kube.LLMISVC_CONFIG, "team", draw(st.sampled_from(["ns", KSERVE])), spec={"router": team})
            )
    for namespace, name in GATEWAYS:
        if draw(st.booleans()):
            objects.append(
                obj(kube.GATEWAY, name, namespace, spec={"gatewayClassName": "cls", "listeners": []})
            )
    if draw(st.booleans()):
        objects.append(obj(kube.GATEWAYCLASS, "cls", "", spec={"controllerName": "example.com/gateway"}))
    if draw(st.booleans()):
        objects.append(http_route("r1", parent_refs=[draw(st.sampled_from(GATEWAY_REFS))]))
    if draw(st.booleans()):
        objects.append(
            obj(
                kube.POOL_V1,
                "p1",
                spec={"selector": {"matchLabels": {"app": "x"}}, "targetPorts": [{"number": 8000}]},
            )
        )
    if draw(st.booleans()):
        labels = {"gateway.networking.k8s.io/gateway-name": "gw"}
        objects.append(obj(kube.SERVICE, "gw-svc", "ns", labels=labels))
    if draw(st.booleans()):
        objects.append(ingress_config({"ingressGateway": "x", "kserveIngressGateway": "ns/gw"}))
    return svc, objects


# --- the changes of a read object --------------------------------------------------------------------


def _bumped(found: Wire) -> Wire:
    """Another version of ``found``: for the router's ConfigMap, another ingress gateway (the one key it
    reads); for anything else, an annotation."""
    meta = {**found["metadata"], "resourceVersion": "99"}
    if found.get("kind") == "ConfigMap":
        data = {"ingress": json.dumps({"ingressGateway": "x", "kserveIngressGateway": "infra/gw2"})}
        return {**found, "metadata": meta, "data": data}
    return {**found, "metadata": {**meta, "annotations": {"changed": "yes"}}}


def _created(key: ObjectKey, labels: Mapping[str, str] | None = None) -> Wire:
    """An object appearing where the pass found none, as the cache could see it: a kind the cache
    watches by the router's label is the router's own (owned by the service)."""
    if key.type in (kube.SERVICE, kube.DEPLOYMENT) and not labels and key.namespace == "ns":
        return managed(key.type, key.name, "a", key.namespace)
    if key.type == kube.CONFIGMAP:
        return ingress_config(
            {"ingressGateway": "x", "kserveIngressGateway": "infra/gw2"}, key.namespace, key.name
        )
    return obj(key.type, key.name, key.namespace, labels=dict(labels or {}))


def changes(reads: Recording, objects: list[Wire]) -> list[WatchEvent]:
    held = {kube.key_of(o): o for o in objects}
    found: list[WatchEvent] = []
    for key in sorted(reads.gets, key=str):
        if key.type == kube.LLMISVC:
            continue  # other services: the group and model-name rules compare fields, not objects
        current = held.get(key)
        if current is None:
            found.append(WatchEvent(ADDED, key.type, _created(key)))
        else:
            found.append(WatchEvent(MODIFIED, key.type, _bumped(current), current))
            found.append(WatchEvent(DELETED, key.type, current))
    for type_, namespace, labels in sorted(reads.lists, key=str):
        if type_ != kube.LLMISVC:
            created = _created(ObjectKey(type_, namespace, "new"), dict(labels))
            found.append(WatchEvent(ADDED, type_, created))
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_a_change_of_anything_the_pass_reads_for_a_service_signals_it(world: tuple[Wire, list[Wire]]) -> None:
    svc, objects = world
    reads = Recording(snapshot_of([*objects, svc], kube.KNOWN_TYPES.values()))
    plan_pass(LLMInferenceService.from_wire(svc), reads, ENV, NOW)
    for change in changes(reads, objects):
        cluster = CacheWorld().put(*objects, svc)  # the world the pass read, listed as the watcher lists it
        if not cluster.watches(change):
            continue  # no loop of the cache lists this object: no event can arrive
        assert ("ns", "a") in cluster.keys(change), change.describe()
