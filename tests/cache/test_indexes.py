"""The cache's indexes (client-go's ``AddIndexers``/``ByIndex``): kept in step with every put, relist and
removal, in every loop of a kind, and run again on request when what they read of other objects changed."""

from __future__ import annotations

from llmisvc_cache.model import WatchTarget
from llmisvc_cache.store import TargetStore
from llmisvc_core.models import kube
from tests.builders import Wire
from tests.builders.kube import obj
from tests.watcher.cluster import CacheWorld

CLASS = "class"


def gateway(name: str, cls: str, namespace: str = "ns") -> Wire:
    return obj(kube.GATEWAY, name, namespace, spec={"gatewayClassName": cls})


def by_class(gw: Wire) -> list[str]:
    return [gw["spec"]["gatewayClassName"]]


def names(found: list[Wire]) -> list[str]:
    return [o["metadata"]["name"] for o in found]


def test_an_index_follows_every_put_and_removal() -> None:
    store = TargetStore()
    store.add_index(CLASS, by_class)
    store.put(("ns", "a"), gateway("a", "istio"))
    store.put(("ns", "b"), gateway("b", "istio"))
    assert names(store.by_index(CLASS, "istio")) == ["a", "b"]
    store.put(("ns", "a"), gateway("a", "envoy"))
    assert names(store.by_index(CLASS, "istio")) == ["b"]
    assert names(store.by_index(CLASS, "envoy")) == ["a"]
    store.remove(("ns", "b"), "2")
    assert store.by_index(CLASS, "istio") == []


def test_a_relist_replaces_the_index_with_the_listed_objects() -> None:
    store = TargetStore()
    store.add_index(CLASS, by_class)
    store.put(("ns", "gone"), gateway("gone", "istio"))
    store.replace_all({("ns", "kept"): gateway("kept", "istio")})
    assert names(store.by_index(CLASS, "istio")) == ["kept"]


def test_an_index_added_late_indexes_what_the_store_holds() -> None:
    store = TargetStore()
    store.put(("ns", "a"), gateway("a", "istio"))
    store.add_index(CLASS, by_class)
    assert names(store.by_index(CLASS, "istio")) == ["a"]


def test_reindex_runs_the_index_function_again_for_one_object() -> None:
    seen = {"suffix": "1"}
    store = TargetStore()
    store.add_index(CLASS, lambda gw: [gw["spec"]["gatewayClassName"] + seen["suffix"]])
    store.put(("ns", "a"), gateway("a", "istio"))
    seen["suffix"] = "2"
    assert store.by_index(CLASS, "istio2") == []
    store.reindex(("ns", "a"))
    assert names(store.by_index(CLASS, "istio2")) == ["a"]
    assert store.by_index(CLASS, "istio1") == []


def test_the_cache_indexes_every_loop_of_a_kind_and_answers_across_them() -> None:
    world = CacheWorld()
    cache = world.cache
    cache.add([WatchTarget(kube.GATEWAY, "other")])  # a second loop of Gateways, added after the index
    cache.add_index(kube.GATEWAY, CLASS, by_class)
    loops = [loop for loop in cache.loops if loop.target.resource == kube.GATEWAY]
    loops[0].store.put(("ns", "a"), gateway("a", "istio"))
    loops[1].store.put(("other", "b"), gateway("b", "istio", "other"))
    assert names(cache.by_index(kube.GATEWAY, CLASS, "istio")) == ["a", "b"]
    assert names(cache.list_all(kube.GATEWAY)) == ["a", "b"]
