"""The cache's index of what each service uses: always the same answer as asking every service afresh,
and an event's cost does not grow with the number of services."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmisvc_core.models import kube
from llmisvc_core.triggers import uses
from llmisvc_watcher.model import ADDED, DELETED, MODIFIED
from tests.builders import KSERVE, Wire, http_route, service
from tests.builders.kube import ingress_config, obj
from tests.builders.watch import event, observed
from tests.watcher.cluster import ENV, CacheWorld

NAMESPACES = ("ns", "other")
GATEWAYS = [("ns", "gw"), ("infra", "gw"), (KSERVE, "kserve-ingress-gateway"), ("edge", "public-gateway")]
ROUTES = ["r1", "r2"]
POOLS = ["p1", "p2"]

# --- random worlds ---------------------------------------------------------------------------------

gateway_ref = (
    st.sampled_from(GATEWAYS).map(lambda g: {"name": g[1], "namespace": g[0]})
    | st.just({"name": "gw"})
    | st.just({"name": "gw", "kind": "Service", "group": ""})
)
gateway_refs = st.lists(gateway_ref, max_size=2)
gateway_part: st.SearchStrategy[Wire | None] = (
    st.none() | st.just({}) | gateway_refs.map(lambda refs: {"refs": refs})
)
route_part: st.SearchStrategy[Wire | None] = (
    st.none()
    | st.just({})
    | st.lists(st.sampled_from(ROUTES), max_size=2).map(
        lambda rs: {"http": {"refs": [{"name": r} for r in rs]}}
    )
    | gateway_refs.map(lambda refs: {"http": {"spec": {"parentRefs": refs}}})
)
scheduler_part: st.SearchStrategy[Wire | None] = (
    st.none() | st.just({}) | st.sampled_from(POOLS).map(lambda p: {"pool": {"ref": {"name": p}}})
)


@st.composite
def router_specs(draw: st.DrawFn) -> Wire | None:
    if draw(st.integers(0, 9)) == 0:
        return {"route": "not an object"}  # a spec that does not parse still maps by its status
    parts = {"gateway": draw(gateway_part), "route": draw(route_part), "scheduler": draw(scheduler_part)}
    router: Wire = {k: v for k, v in parts.items() if v is not None}
    keep_empty: bool = draw(st.booleans())
    return router if router or keep_empty else None


@st.composite
def statuses(draw: st.DrawFn) -> Wire | None:
    gateways = draw(st.lists(st.sampled_from([*GATEWAYS, (None, "gw")]), max_size=2, unique=True))
    if not gateways:
        return None
    routes = draw(st.lists(st.sampled_from([(None, "r1"), ("other", "r2"), ("ns", "r2")]), max_size=2))
    return observed(*gateways, routes=routes)


services = st.builds(
    lambda name, namespace, router, status: service(name, namespace, router=router, status=status),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(NAMESPACES),
    router_specs(),
    statuses(),
)
routes = st.builds(
    lambda name, namespace, parents: http_route(name, namespace, parent_refs=parents),
    st.sampled_from(ROUTES),
    st.sampled_from(NAMESPACES),
    st.lists(gateway_ref, min_size=1, max_size=2),
)
configmaps = st.sampled_from(
    [None, {"ingressGateway": "x", "kserveIngressGateway": "edge/public-gateway"}, {"ingressGateway": "x"}]
)
Step = tuple[str, Any]
any_step = st.lists(
    st.one_of(
        services.map(lambda s: ("put", s)),
        services.map(lambda s: ("delete", s)),
        routes.map(lambda r: ("put", r)),
        routes.map(lambda r: ("delete", r)),
        configmaps.map(lambda c: ("put", ingress_config(c))),
        st.just(("delete", ingress_config(None))),
    ),
    max_size=15,
)
# Services first, then routes, then anything: most histories then hold routes that services already
# name, and changes of both afterwards.
steps = st.builds(
    lambda first, then, rest: [*first, *then, *rest],
    st.lists(services.map(lambda s: ("put", s)), min_size=1, max_size=6),
    st.lists(routes.map(lambda r: ("put", r)), max_size=4),
    any_step,
)


def _key(wire: Wire) -> tuple[str, str, str]:
    meta = wire["metadata"]
    return wire["kind"], meta.get("namespace", ""), meta["name"]


# --- the reference: ask every service afresh, over the same cluster ---------------------------------


def reference_users(kind: str, used: tuple[str, str], world: CacheWorld) -> list[tuple[str, str]]:
    reader = world.cache.watched()
    found = []
    for wire in reader.list_all(kube.LLMISVC):
        fresh = uses.service_uses(wire, reader, ENV)
        held = {uses.GATEWAY: fresh.gateways, uses.HTTPROUTE: fresh.routes, uses.POOL: fresh.pools}[kind]
        if used in held:
            meta = wire["metadata"]
            found.append((meta["namespace"], meta["name"]))
    return found


def probes() -> list[tuple[str, tuple[str, str]]]:
    """Every Gateway, route and pool of the universe, with the index kind it is used as."""
    found: list[tuple[str, tuple[str, str]]] = [(uses.GATEWAY, g) for g in GATEWAYS]
    for ns in NAMESPACES:
        found += [(uses.HTTPROUTE, (ns, r)) for r in ROUTES]
        found += [(uses.POOL, (ns, p)) for p in POOLS]
    return found


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.timeout(300)  # 200 histories: up to 90 s on a loaded machine, too close to the 120 s default
@given(steps)
def test_the_index_answers_as_asking_every_service_afresh_would(history: list[Step]) -> None:
    world = CacheWorld()
    state: set[tuple[str, str, str]] = set()
    for op, wire in history:
        key = _key(wire)
        if op == "put":
            world.affected(event(wire, MODIFIED if key in state else ADDED))
            state.add(key)
        else:
            world.affected(event(wire, DELETED))
            state.discard(key)
    for kind, used in probes():
        assert world.users(kind, *used) == reference_users(kind, used, world), (kind, used)


# --- the cost of one event ---------------------------------------------------------------------------


NAMES_R1: Wire = {"http": {"refs": [{"name": "r1"}]}}


def _world_of(n: int) -> CacheWorld:
    """``n`` services using the default gateway, one of which also names route r1 and pool p1."""
    world = CacheWorld()
    world.put(http_route("r1", parent_refs=[{"name": "gw"}]), ingress_config({"ingressGateway": "x"}))
    for i in range(n):
        router: Wire = {"route": {}, "scheduler": {}}
        if i == 0:
            router = {
                "route": {"http": {"refs": [{"name": "r1"}]}},
                "scheduler": {"pool": {"ref": {"name": "p1"}}},
            }
        world.put(service(f"s{i:05}", router=router))
    return world


def _count_calls(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    calls = [0]
    original: Callable[..., Any] = getattr(module, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def _work_per_event(n: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[int, int, int]]:
    """(merged-spec evaluations, per-service use evaluations, services affected) for each kind of event."""
    world = _world_of(n)
    first = service("s00000", router={"route": {"http": {"refs": [{"name": "r1"}]}}})
    echo = {
        **first,
        "status": {"url": "http://s/", "conditions": [{"type": "RouterReady", "status": "True"}]},
    }
    events = {
        "user route modified": event(http_route("r1", parent_refs=[{"name": "gw2"}]), MODIFIED),
        "pool modified": event(obj(kube.POOL_V1, "p1"), MODIFIED),
        "named gateway modified": event(obj(kube.GATEWAY, "gw"), MODIFIED),
        "unused gateway modified": event(obj(kube.GATEWAY, "nobody"), MODIFIED),
        "service spec modified": event(first, MODIFIED),
        "router's status write": event(echo, MODIFIED),
    }
    work = {}
    for label, ev in events.items():
        with monkeypatch.context() as patch:
            merges = _count_calls(patch, uses, "merged_service")
            evaluations = _count_calls(patch, uses, "service_uses")
            affected = world.affected(ev)
        work[label] = (merges[0], evaluations[0], len(affected))
    return work


def test_the_work_of_an_event_does_not_grow_with_the_number_of_services(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small, large = _work_per_event(10, monkeypatch), _work_per_event(1000, monkeypatch)
    assert small == large
    assert all(merges <= 1 and evaluations <= 1 for merges, evaluations, _ in large.values()), large


def test_a_new_ingress_gateway_in_the_config_reindexes_every_service() -> None:
    """The config is the one change whose cost is every service: each one's default gateway moves."""
    world = _world_of(5)
    world.affected(
        event(
            ingress_config({"ingressGateway": "x", "kserveIngressGateway": "edge/public-gateway"}), MODIFIED
        )
    )
    moved = world.affected(event(obj(kube.GATEWAY, "public-gateway", "edge"), MODIFIED))
    assert len(moved) == 4  # all but the one that names its own route
    assert world.users(uses.GATEWAY, KSERVE, "kserve-ingress-gateway") == []
