"""One malformed service affects only itself: a service nested past the depth bound, or with a status
of the wrong shape, is still signalled for its own events, and every other service's events are mapped
as before (issue 13: a 600-level field once dropped every event of every service)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from llmisvc_core.models import kube
from llmisvc_core.triggers import uses
from llmisvc_watcher import runner
from llmisvc_watcher.model import DELETED, MODIFIED, Affected, WatchEvent
from tests.builders import ORG_MODEL, Wire, service
from tests.builders.kube import ingress_config, managed, obj
from tests.builders.watch import event, observed
from tests.watcher.cluster import ENV, CacheWorld

SHARED_POOL = {"gateway": {}, "scheduler": {"pool": {"ref": {"name": "shared"}}}}


def nested(levels: int) -> object:
    value: object = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


def deep_service(name: str, levels: int) -> Wire:
    svc = service(name, router=SHARED_POOL, model={"uri": ORG_MODEL})
    svc["spec"]["model"]["extra"] = nested(levels)
    return svc


def odd_status_service(name: str) -> Wire:
    svc = service(name, router=SHARED_POOL, status=observed(("ns", "gw")))
    svc["status"]["conditions"] = ["not an object", 42, {"type": "WorkloadsReady", "status": "True"}]
    return svc


@dataclass
class Recorder:
    """Stands in for the coalescer: records what would be signalled."""

    added: list[Affected] = field(default_factory=list)

    def add(self, item: Affected, start: bool | None, seen: object) -> None:
        self.added.append(item)

    def names(self) -> set[str]:
        return {a.name for a in self.added}


def handle(world: CacheWorld, recorder: Recorder, *events: WatchEvent) -> None:
    for item in events:
        runner.handle_event(world.apply(item), world.triggers, recorder)  # type: ignore[arg-type]


MALFORMED = {
    "nested 600 levels": lambda: deep_service("bad", 600),
    "nested 3000 levels": lambda: deep_service("bad", 3000),
    "conditions that are not objects": lambda: odd_status_service("bad"),
}


@pytest.fixture(params=list(MALFORMED), ids=list(MALFORMED))
def world(request: pytest.FixtureRequest) -> tuple[CacheWorld, Recorder]:
    world = CacheWorld()
    recorder = Recorder()
    good = [service("good-1", router=SHARED_POOL), service("good-2", router=SHARED_POOL)]
    handle(world, recorder, event(good[0]), event(MALFORMED[request.param]()), event(good[1]))
    return world, recorder


def test_a_malformed_service_is_signalled_for_its_own_change_like_any_other(
    world: tuple[CacheWorld, Recorder],
) -> None:
    _, recorder = world
    assert recorder.names() == {"good-1", "bad", "good-2"}


def test_with_a_malformed_service_present_a_deleted_route_of_a_good_service_still_signals_it(
    world: tuple[CacheWorld, Recorder],
) -> None:
    world_, recorder = world
    recorder.added.clear()
    handle(world_, recorder, event(managed(kube.HTTPROUTE, "good-1-kserve-route", "good-1"), DELETED))
    assert recorder.names() == {"good-1"}


def test_with_a_malformed_service_present_a_shared_pool_still_signals_the_good_users(
    world: tuple[CacheWorld, Recorder],
) -> None:
    world_, recorder = world
    recorder.added.clear()
    handle(world_, recorder, event(obj(kube.POOL_V1, "shared"), MODIFIED))
    assert {"good-1", "good-2"} <= recorder.names()


def test_a_config_change_reindexes_the_good_services_past_a_malformed_one(
    world: tuple[CacheWorld, Recorder],
) -> None:
    world_, recorder = world
    ingress = {"ingressGateway": "x", "kserveIngressGateway": "edge/public-gateway"}
    handle(world_, recorder, event(ingress_config(ingress), MODIFIED))
    recorder.added.clear()
    handle(world_, recorder, event(obj(kube.GATEWAY, "public-gateway", "edge"), MODIFIED))
    assert {"good-1", "good-2"} <= recorder.names()


def test_a_status_only_change_of_a_deep_service_still_signals_it_rather_than_failing() -> None:
    world = CacheWorld()
    recorder = Recorder()
    bad = deep_service("bad", 3000)
    handle(world, recorder, event(bad))
    changed = {**bad, "status": {"url": "http://x"}}
    handle(world, recorder, event(changed, MODIFIED, old=bad))
    assert [a.name for a in recorder.added] == ["bad", "bad"]


def test_a_service_nested_past_the_bound_maps_as_a_spec_that_does_not_parse() -> None:
    reader = CacheWorld().cache.watched()
    assert uses.service_uses(deep_service("bad", 150), reader, ENV).pools == frozenset()
    assert ("ns", "shared") in uses.service_uses(deep_service("fine", 50), reader, ENV).pools


def test_an_owned_object_with_malformed_metadata_maps_to_nobody_without_an_error() -> None:
    odd = obj(kube.HTTPROUTE, "r")
    odd["metadata"]["labels"] = {"app.kubernetes.io/part-of": "llminferenceservice"}
    odd["metadata"]["ownerReferences"] = ["not an object"]
    assert CacheWorld().affected(event(odd, MODIFIED)) == []
