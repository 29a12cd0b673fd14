"""The cluster cache over the API stand-in: reads from the watch loops, the write overlay, the freshness
barrier, which reads it can answer alone, and which kinds are installed."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from activities.kube_api import KubeClusterApi
from apiserver_standin.server import StandinApiServer
from apiserver_standin.testing import running_apiserver
from cluster_cache.cache import ClusterCache, at_least
from cluster_cache.model import SeenVersion, Tuning
from cluster_cache.targets import dependent_targets, service_targets, start_worker_cache
from router_core.models.kube import GATEWAY, HTTPROUTE, LLMISVC, POOL_V1, SERVICE, ResourceType
from router_core.naming import GATEWAY_NAME_LABEL, PART_OF_SELECTOR
from router_core.world.config import Environment

ENV = Environment()
NS = "llm"
NAMESPACE = ResourceType("", "v1", "Namespace", "namespaces", namespaced=False)
TUNING = Tuning(watch_timeout_seconds=5, backoff_first=0.05, backoff_cap=0.5)


def route(name: str) -> dict[str, object]:
    return {
        "apiVersion": HTTPROUTE.api_version,
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"parentRefs": [{"name": "gw"}]},
    }


def service(name: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": NS, "labels": labels or {}},
        "spec": {"ports": [{"port": 80}]},
    }


def until(check: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.fixture
def server() -> Iterator[StandinApiServer]:
    with running_apiserver(crds="gateway-api,llmisvc") as server:
        KubeClusterApi(server.client).create(NAMESPACE, {"metadata": {"name": NS}})
        yield server


@pytest.fixture
def cache(server: StandinApiServer) -> Iterator[ClusterCache]:
    cache = start_worker_cache(server.client, [], ENV, TUNING)
    assert cache.wait_synced(10)
    yield cache
    cache.stop()
    cache.join(5)


def test_reads_come_from_the_watch_without_a_request(server, cache):
    api = KubeClusterApi(server.client)
    api.create(HTTPROUTE, route("r"))
    until(lambda: cache.get(HTTPROUTE, NS, "r") is not None, "the route in the cache")
    server.counter.reset()
    assert cache.get(HTTPROUTE, NS, "r")["metadata"]["name"] == "r"
    assert [o["metadata"]["name"] for o in cache.list(HTTPROUTE, NS, {})] == ["r"]
    assert server.counter.count(verb="get") == server.counter.count(verb="list") == 0


def test_an_absence_is_an_answer_only_where_no_selector_hides_objects(cache):
    assert cache.knows(HTTPROUTE, NS, "missing")  # every HTTPRoute is watched
    assert not cache.knows(SERVICE, NS, "missing")  # only labelled Services are
    assert cache.covers_list(SERVICE, NS, {GATEWAY_NAME_LABEL: "gw"})
    assert cache.covers_list(SERVICE, NS, dict([PART_OF_SELECTOR.split("=")]))
    assert not cache.covers_list(SERVICE, NS, {})


def test_a_written_object_is_read_back_at_the_written_version_until_the_watch_catches_up(server, cache):
    api = KubeClusterApi(server.client)
    created = api.create(HTTPROUTE, route("r"))
    until(lambda: cache.get(HTTPROUTE, NS, "r") is not None, "the route in the cache")
    newer = {**created, "metadata": {**created["metadata"], "resourceVersion": "999999"}, "spec": {}}
    cache.observe(HTTPROUTE, newer)
    assert cache.get(HTTPROUTE, NS, "r")["spec"] == {}, "the overlay stands in for the lagging watch"
    assert cache.overlay_size() == 1


def test_the_overlay_gives_way_once_the_watch_has_the_version(server, cache):
    api = KubeClusterApi(server.client)
    created = api.create(HTTPROUTE, route("r"))
    cache.observe(HTTPROUTE, created)
    until(lambda: cache.overlay_size() == 0 or cache.get(HTTPROUTE, NS, "r") is not None, "a read")
    until(lambda: (cache.get(HTTPROUTE, NS, "r"), cache.overlay_size())[1] == 0, "the overlay to drop")


def test_a_delete_hides_the_object_until_the_watch_reports_it(server, cache):
    api = KubeClusterApi(server.client)
    api.create(HTTPROUTE, route("r"))
    until(lambda: cache.get(HTTPROUTE, NS, "r") is not None, "the route in the cache")
    cache.observe_deleted(HTTPROUTE, NS, "r")
    assert cache.get(HTTPROUTE, NS, "r") is None
    assert cache.list(HTTPROUTE, NS, {}) == []


def test_a_written_object_deleted_by_someone_else_before_anyone_read_it_is_gone(server, cache):
    """The watch delivers the write and then its deletion (say, by the garbage collector) before any
    pass reads: the overlay must not bring the deleted object back."""
    api = KubeClusterApi(server.client)
    created = api.create(HTTPROUTE, route("r"))
    api.delete(HTTPROUTE, NS, "r")
    cache.observe(HTTPROUTE, created)  # the write's answer, recorded late (the watch may be ahead)
    time.sleep(1.0)  # the watch delivers both events meanwhile (not polled: a read would hide the bug)
    assert cache.get(HTTPROUTE, NS, "r") is None
    assert cache.list(HTTPROUTE, NS, {}) == []


def test_a_live_read_that_found_nothing_is_remembered(cache):
    cache.observe_absent(SERVICE, NS, "gw")
    assert cache.knows(SERVICE, NS, "gw") and cache.get(SERVICE, NS, "gw") is None


def test_wait_for_returns_once_the_cache_has_the_version_a_trigger_saw(server, cache):
    api = KubeClusterApi(server.client)
    created = api.create(HTTPROUTE, route("r"))
    seen = SeenVersion(
        resource=str(HTTPROUTE),
        namespace=NS,
        name="r",
        resource_version=created["metadata"]["resourceVersion"],
    )
    assert cache.wait_for([seen], 5) == []
    ahead = seen.model_copy(update={"resource_version": "999999"})
    started = time.monotonic()
    assert cache.wait_for([ahead], 0.3) == [ahead], "a version the cache never gets is reported late"
    assert time.monotonic() - started >= 0.3


def test_wait_for_a_deletion(server, cache):
    api = KubeClusterApi(server.client)
    created = api.create(HTTPROUTE, route("r"))
    until(lambda: cache.get(HTTPROUTE, NS, "r") is not None, "the route in the cache")
    api.delete(HTTPROUTE, NS, "r")
    seen = SeenVersion(
        resource=str(HTTPROUTE),
        namespace=NS,
        name="r",
        resource_version=created["metadata"]["resourceVersion"],
        deleted=True,
    )
    assert cache.wait_for([seen], 5) == []


def test_wait_for_a_version_that_was_deleted_since_ends_once_the_watch_delivered_the_deletion(server, cache):
    # The watcher saw the route modified, then it was deleted: the worker's cache never holds that version,
    # but it is past it. Waiting out the freshness timeout here once cost 5 s before a route came back.
    api = KubeClusterApi(server.client)
    created = api.create(HTTPROUTE, route("r"))
    api.delete(HTTPROUTE, NS, "r")
    seen = SeenVersion(
        resource=str(HTTPROUTE),
        namespace=NS,
        name="r",
        resource_version=created["metadata"]["resourceVersion"],
    )
    started = time.monotonic()
    assert cache.wait_for([seen], 5) == []
    assert time.monotonic() - started < 2


def test_the_processs_own_create_does_not_hide_a_deletion_the_watch_delivered(server, cache):
    api = KubeClusterApi(server.client)
    created = api.create(HTTPROUTE, route("r"))
    cache.observe(HTTPROUTE, created)  # as the worker records its own write; nobody reads it again
    time.sleep(0.3)
    api.delete(HTTPROUTE, NS, "r")
    assert cache.wait_for([_seen(created, deleted=True)], 3) == []
    assert cache.get(HTTPROUTE, NS, "r") is None
    assert cache.overlay_size() == 0


def _seen(obj: dict[str, object], deleted: bool = False) -> SeenVersion:
    meta = obj["metadata"]
    assert isinstance(meta, dict)
    return SeenVersion(
        resource=str(HTTPROUTE),
        namespace=NS,
        name="r",
        resource_version=meta["resourceVersion"],
        deleted=deleted,
    )


def test_installed_kinds_are_those_whose_list_answered(server, cache):
    assert cache.is_installed(HTTPROUTE) and cache.is_installed(GATEWAY) and cache.is_installed(LLMISVC)
    assert not cache.is_installed(POOL_V1), "no InferencePool CRD in this cluster"
    assert cache.is_installed(SERVICE), "built-in kinds are always served"


def test_the_cache_watches_only_labelled_services(server, cache):
    api = KubeClusterApi(server.client)
    api.create(SERVICE, service("plain"))
    api.create(SERVICE, service("gateway-svc", {GATEWAY_NAME_LABEL: "gw"}))
    until(lambda: cache.get(SERVICE, NS, "gateway-svc") is not None, "the gateway Service")
    assert cache.get(SERVICE, NS, "plain") is None


def test_worker_targets_are_the_watchers_plus_the_services(server):
    assert {t.resource for t in dependent_targets([], ENV)} >= {HTTPROUTE, GATEWAY, SERVICE}
    assert [t.resource for t in service_targets(["a", "b"])] == [LLMISVC, LLMISVC]


@pytest.mark.parametrize(
    ("version", "wanted", "expected"),
    [("10", "9", True), ("9", "10", False), ("10", "10", True), ("abc", "abc", True), ("abc", "abd", False)],
)
def test_resource_versions_compare_as_integers_when_they_are(version, wanted, expected):
    assert at_least(version, wanted) is expected


def test_the_cache_keeps_objects_without_their_managed_fields(server, cache):
    api = KubeClusterApi(server.client)
    created = api.create(HTTPROUTE, route("r"))
    assert created["metadata"].get("managedFields"), "the API server records who set which field"
    until(lambda: cache.get(HTTPROUTE, NS, "r") is not None, "the route in the cache")
    assert "managedFields" not in cache.get(HTTPROUTE, NS, "r")["metadata"]
