"""The cluster cache on the real control plane, as the worker's ServiceAccount through the test's proxy:
reads from the watch loops, the write overlay, the freshness barrier, which reads it can answer alone, and
which kinds are installed."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from llmisvc_cache.cache import ClusterCache, at_least
from llmisvc_cache.model import SeenVersion, Tuning
from llmisvc_cache.targets import dependent_targets, service_targets, start_worker_cache
from llmisvc_cache.watch_loop import without_schemas
from llmisvc_core.models.kube import CRD, GATEWAY, HTTPROUTE, LLMISVC, POOL_V1, SERVICE, crd_established
from llmisvc_core.naming import GATEWAY_NAME_LABEL, PART_OF_SELECTOR
from llmisvc_core.world.config import Environment
from llmisvc_kube.client import KubeClusterApi
from tests import builders as b
from tests.builders import kube
from tests.cluster import Cluster
from tests.private_plane import private_cluster

ENV = Environment()
TUNING = Tuning(watch_timeout_seconds=5, backoff_first=0.05, backoff_cap=0.5)
WORKER_AGENT = "llmisvc-router-worker/test"


def until(check: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def ahead(version: str) -> str:
    """A resourceVersion the server has not issued yet (they are integers, growing)."""
    return str(int(version) + 10**9)


@pytest.fixture
def ns(cluster: Cluster) -> str:
    return cluster.namespace


@pytest.fixture
def api(cluster: Cluster) -> Iterator[KubeClusterApi]:
    """The test's own writes: the admin, straight to kube-apiserver (not counted by the proxy)."""
    client = cluster.api_client("cache-test", direct=True)
    yield KubeClusterApi(client)
    client.close()  # type: ignore[no-untyped-call]


@contextmanager
def worker_cache(cluster: Cluster) -> Iterator[ClusterCache]:
    """The worker's cache of every collection a pass reads, as the worker, synced."""
    client = cluster.api_client(WORKER_AGENT, role="worker")
    cache = start_worker_cache(client, [], cluster.env, TUNING)
    try:
        # 30 s: on a fresh plane a custom resource's storage answers 429 a while after its CRD is Established
        assert cache.wait_synced(30), cache.unsynced()
        yield cache
    finally:
        cache.stop()
        cache.join(5)
        client.close()  # type: ignore[no-untyped-call]


@pytest.fixture
def cache(cluster: Cluster) -> Iterator[ClusterCache]:
    with worker_cache(cluster) as synced:
        yield synced


def route(name: str, ns: str) -> dict[str, object]:
    return b.http_route(name, ns, parent_refs=[{"name": "gw"}], generation=None, rv=None)


def service(name: str, ns: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    return kube.k8s_service(name, ns, labels=labels or {})


def test_reads_come_from_the_watch_without_a_request(cluster, api, ns, cache):
    api.create(HTTPROUTE, route("r", ns))
    until(lambda: cache.get(HTTPROUTE, ns, "r") is not None, "the route in the cache")
    cluster.counter.reset()
    assert cache.get(HTTPROUTE, ns, "r")["metadata"]["name"] == "r"
    assert [o["metadata"]["name"] for o in cache.list(HTTPROUTE, ns, {})] == ["r"]
    assert cluster.counter.count(verb="get") == cluster.counter.count(verb="list") == 0


def test_an_absence_is_an_answer_only_where_no_selector_hides_objects(ns, cache):
    assert cache.knows(HTTPROUTE, ns, "missing")  # every HTTPRoute is watched
    assert not cache.knows(SERVICE, ns, "missing")  # only labelled Services are
    assert cache.covers_list(SERVICE, ns, {GATEWAY_NAME_LABEL: "gw"})
    assert cache.covers_list(SERVICE, ns, dict([PART_OF_SELECTOR.split("=")]))
    assert not cache.covers_list(SERVICE, ns, {})


def test_a_written_object_is_read_back_at_the_written_version_until_the_watch_catches_up(api, ns, cache):
    created = api.create(HTTPROUTE, route("r", ns))
    until(lambda: cache.get(HTTPROUTE, ns, "r") is not None, "the route in the cache")
    newer = {
        **created,
        "metadata": {**created["metadata"], "resourceVersion": ahead(created["metadata"]["resourceVersion"])},
        "spec": {},
    }
    cache.observe(HTTPROUTE, newer)
    assert cache.get(HTTPROUTE, ns, "r")["spec"] == {}, "the overlay stands in for the lagging watch"
    assert cache.overlay_size() == 1


def test_the_overlay_gives_way_once_the_watch_has_the_version(api, ns, cache):
    created = api.create(HTTPROUTE, route("r", ns))
    cache.observe(HTTPROUTE, created)
    until(lambda: cache.overlay_size() == 0 or cache.get(HTTPROUTE, ns, "r") is not None, "a read")
    until(lambda: (cache.get(HTTPROUTE, ns, "r"), cache.overlay_size())[1] == 0, "the overlay to drop")


def test_a_delete_hides_the_object_until_the_watch_reports_it(api, ns, cache):
    api.create(HTTPROUTE, route("r", ns))
    until(lambda: cache.get(HTTPROUTE, ns, "r") is not None, "the route in the cache")
    cache.observe_deleted(HTTPROUTE, ns, "r")
    assert cache.get(HTTPROUTE, ns, "r") is None
    assert cache.list(HTTPROUTE, ns, {}) == []


def test_a_written_object_deleted_by_someone_else_before_anyone_read_it_is_gone(api, ns, cache):
    """The watch delivers the write and then its deletion (say, by the garbage collector) before any
    pass reads: the overlay must not bring the deleted object back."""
    created = api.create(HTTPROUTE, route("r", ns))
    api.delete(HTTPROUTE, ns, "r")
    cache.observe(HTTPROUTE, created)  # the write's answer, recorded late (the watch may be ahead)
    time.sleep(1.0)  # the watch delivers both events meanwhile (not polled: a read would hide the bug)
    assert cache.get(HTTPROUTE, ns, "r") is None
    assert cache.list(HTTPROUTE, ns, {}) == []


def test_a_live_read_that_found_nothing_is_remembered(ns, cache):
    cache.observe_absent(SERVICE, ns, "gw")
    assert cache.knows(SERVICE, ns, "gw") and cache.get(SERVICE, ns, "gw") is None


def test_wait_for_returns_once_the_cache_has_the_version_a_trigger_saw(api, ns, cache):
    created = api.create(HTTPROUTE, route("r", ns))
    seen = SeenVersion(
        resource=str(HTTPROUTE),
        namespace=ns,
        name="r",
        resource_version=created["metadata"]["resourceVersion"],
    )
    assert cache.wait_for([seen], 5) == []
    later = seen.model_copy(update={"resource_version": ahead(seen.resource_version)})
    started = time.monotonic()
    assert cache.wait_for([later], 0.3) == [later], "a version the cache never gets is reported late"
    assert time.monotonic() - started >= 0.3


def test_wait_for_a_deletion(api, ns, cache):
    created = api.create(HTTPROUTE, route("r", ns))
    until(lambda: cache.get(HTTPROUTE, ns, "r") is not None, "the route in the cache")
    api.delete(HTTPROUTE, ns, "r")
    seen = SeenVersion(
        resource=str(HTTPROUTE),
        namespace=ns,
        name="r",
        resource_version=created["metadata"]["resourceVersion"],
        deleted=True,
    )
    assert cache.wait_for([seen], 5) == []


def test_wait_for_a_version_that_was_deleted_since_ends_once_the_watch_delivered_the_deletion(api, ns, cache):
    # The watcher saw the route modified, then it was deleted: the worker's cache never holds that version,
    # but it is past it. Waiting out the freshness timeout here once cost 5 s before a route came back.
    created = api.create(HTTPROUTE, route("r", ns))
    api.delete(HTTPROUTE, ns, "r")
    seen = SeenVersion(
        resource=str(HTTPROUTE),
        namespace=ns,
        name="r",
        resource_version=created["metadata"]["resourceVersion"],
    )
    started = time.monotonic()
    assert cache.wait_for([seen], 5) == []
    assert time.monotonic() - started < 2


def test_the_processs_own_create_does_not_hide_a_deletion_the_watch_delivered(api, ns, cache):
    created = api.create(HTTPROUTE, route("r", ns))
    cache.observe(HTTPROUTE, created)  # as the worker records its own write; nobody reads it again
    time.sleep(0.3)
    api.delete(HTTPROUTE, ns, "r")
    assert cache.wait_for([_seen(created, ns, deleted=True)], 3) == []
    assert cache.get(HTTPROUTE, ns, "r") is None
    assert cache.overlay_size() == 0


def _seen(obj: dict[str, object], ns: str, deleted: bool = False) -> SeenVersion:
    meta = obj["metadata"]
    assert isinstance(meta, dict)
    return SeenVersion(
        resource=str(HTTPROUTE),
        namespace=ns,
        name="r",
        resource_version=meta["resourceVersion"],
        deleted=deleted,
    )


def test_installed_kinds_are_those_whose_list_answered():
    with private_cluster("gateway-api,llmisvc") as cluster, worker_cache(cluster) as cache:
        assert cache.is_installed(HTTPROUTE) and cache.is_installed(GATEWAY) and cache.is_installed(LLMISVC)
        assert not cache.is_installed(POOL_V1), "no InferencePool CRD in this cluster"
        assert cache.is_installed(SERVICE), "built-in kinds are always served"


def test_a_kind_reads_as_installed_as_soon_as_the_cache_holds_its_crd_established():
    """kube-apiserver serves a custom resource moments after its CRD is Established, and a pass signalled
    by the CRD's event must not plan without the kind: the cache waits for the kind's loop, which the
    CRD's events wake, rather than answer "not installed" (the chaos suite's crd_removal took 28 s to
    recover when a pass had read the kind as absent and nothing signalled it again)."""
    slow = Tuning(watch_timeout_seconds=5, backoff_first=2.0, backoff_cap=60.0)
    with private_cluster("gateway-api,llmisvc") as cluster:
        client = cluster.api_client(WORKER_AGENT, role="worker")
        cache = start_worker_cache(client, [], cluster.env, slow)
        try:
            assert cache.wait_synced(30), cache.unsynced()
            time.sleep(7)  # 404s at 0, 2 and 4 s: the next poll of the pool kinds is 8 s away, then 16
            assert not cache.is_installed(POOL_V1)
            cluster.control.install_crds("pools")  # returns once they are Established

            def established() -> bool:
                crd = cache.get(CRD, "", POOL_V1.crd_name) or {}
                conditions = crd.get("status", {}).get("conditions", [])
                return any(c.get("type") == "Established" for c in conditions)

            until(established, "the InferencePool CRD Established in the cache")
            started = time.monotonic()
            assert cache.is_installed(POOL_V1), "the InferencePool kind read as not installed"
            assert time.monotonic() - started < 10
        finally:
            cache.stop()
            cache.join(5)
            client.close()  # type: ignore[no-untyped-call]


def test_the_cache_watches_only_labelled_services(api, ns, cache):
    api.create(SERVICE, service("plain", ns))
    api.create(SERVICE, service("gateway-svc", ns, {GATEWAY_NAME_LABEL: "gw"}))
    until(lambda: cache.get(SERVICE, ns, "gateway-svc") is not None, "the gateway Service")
    assert cache.get(SERVICE, ns, "plain") is None


def test_worker_targets_are_the_watchers_plus_the_services():
    assert {t.resource for t in dependent_targets([], ENV)} >= {HTTPROUTE, GATEWAY, SERVICE}
    assert [t.resource for t in service_targets(["a", "b"])] == [LLMISVC, LLMISVC]


@pytest.mark.parametrize(
    ("version", "wanted", "expected"),
    [("10", "9", True), ("9", "10", False), ("10", "10", True), ("abc", "abc", True), ("abc", "abd", False)],
)
def test_resource_versions_compare_as_integers_when_they_are(version, wanted, expected):
    assert at_least(version, wanted) is expected


def test_the_cache_keeps_crds_without_their_schemas(api, cache):
    """What a pass and the trigger rules read of a CRD (group, names, versions served, Established) is
    kept; the OpenAPI schemas, 11 MiB of KServe's two CRDs once decoded, are not (issue 21: memory)."""
    stored = api.get(CRD, "", LLMISVC.crd_name)
    assert all("schema" in version for version in stored["spec"]["versions"]), "the server keeps them"
    cached = cache.get(CRD, "", LLMISVC.crd_name)
    assert cached is not None
    assert all("schema" not in version for version in cached["spec"]["versions"])
    served = [(v["name"], v["served"]) for v in cached["spec"]["versions"]]
    assert served == [(v["name"], v["served"]) for v in stored["spec"]["versions"]]
    assert cached["spec"]["group"] == stored["spec"]["group"]
    assert cached["spec"]["names"] == stored["spec"]["names"]
    assert crd_established(cached)
    assert cache.is_installed(LLMISVC)


@pytest.mark.parametrize(
    "crd",
    [
        {"metadata": {"name": "x"}},
        {"spec": None},
        {"spec": {"versions": None}},
        {"spec": {"versions": ["v1", {"name": "v1", "served": True}]}},
    ],
)
def test_a_crd_with_no_schema_to_drop_is_kept_as_it_is(crd):
    assert without_schemas(crd) is crd


def test_the_cache_keeps_objects_without_their_managed_fields(api, ns, cache):
    created = api.create(HTTPROUTE, route("r", ns))
    assert created["metadata"].get("managedFields"), "the API server records who set which field"
    until(lambda: cache.get(HTTPROUTE, ns, "r") is not None, "the route in the cache")
    assert "managedFields" not in cache.get(HTTPROUTE, ns, "r")["metadata"]
