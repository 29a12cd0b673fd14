"""The watcher on the real control plane: every change reaches the right workflows, exactly once per
burst, whatever happens to the watch streams (cut by the proxy, expired by an etcd compaction, refused)
and to the CRDs (installed late, removed)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import replace
from typing import Any

from llmisvc_watcher.model import ServiceSignal

from .harness import (
    FAST,
    GATEWAYS,
    POOLS_V1,
    ROUTES,
    SERVING,
    World,
    gateway,
    managed_labels,
    owner_reference,
    private_world,
    service,
    watching,
    wire,
)


def uid_of(world: World, name: str) -> str:
    body: Any = world.custom.get_namespaced_custom_object(*SERVING[:2], world.ns, SERVING[2], name)
    return str(body["metadata"]["uid"])


# --- LLMInferenceServices ---------------------------------------------------------------------------


async def test_every_service_found_at_start_up_gets_signal_with_start(world: World) -> None:
    team = world.namespace("team")
    world.create(SERVING, service("a"))
    world.create(SERVING, service("b"), namespace=team)
    async with watching(world) as h:
        await h.wait_for(lambda: len(h.signals()) >= 2)
        found = {(s.namespace, s.name, s.reason, s.start) for s in h.signals()}
        assert found == {
            (world.ns, "a", f"LLMInferenceService {world.ns}/a found", True),
            (team, "b", f"LLMInferenceService {team}/b found", True),
        }


async def test_a_created_or_modified_service_is_started_and_a_deleted_one_only_signalled(
    world: World,
) -> None:
    async with watching(world) as h:
        world.create(SERVING, service("a"))
        created = await h.wait_for_signal("a")
        assert (created.reason, created.start) == (f"LLMInferenceService {world.ns}/a created", True)
        world.patch(SERVING, "a", {"metadata": {"annotations": {"serving.kserve.io/stop": "true"}}})
        modified = await h.wait_for_signal("a", count=2)
        assert (modified.reason, modified.start) == (f"LLMInferenceService {world.ns}/a modified", True)
        world.delete(SERVING, "a")
        deleted = await h.wait_for_signal("a", count=3)
        assert (deleted.reason, deleted.start) == (f"LLMInferenceService {world.ns}/a deleted", False)


async def test_the_namespace_list_limits_the_services_watched(world: World) -> None:
    team_a, team_b = world.namespace("team-a"), world.namespace("team-b")
    async with watching(world, namespaces=[team_a]) as h:
        world.create(SERVING, service("other"), namespace=team_b)
        world.create(SERVING, service("mine"), namespace=team_a)
        await h.wait_for_signal("mine", team_a)
        await asyncio.sleep(0.3)
        assert h.signals("other", team_b) == []


# Objects valid under the real schemas (a ClusterIP Service needs ports; the v1 InferencePool CRD
# requires a selector, target ports and an endpoint picker).
SERVICE_SPEC = {"ports": [{"port": 80}]}
POOL_SPEC = {
    "selector": {"matchLabels": {"app": "model"}},
    "targetPorts": [{"number": 8000}],
    "endpointPickerRef": {"name": "epp", "port": {"number": 9002}},
}


# --- objects that change a service's routing ------------------------------------------------------


async def test_a_change_to_a_managed_object_signals_its_owner(world: World) -> None:
    ns = world.ns
    async with watching(world) as h:
        world.create(SERVING, service("a"))
        await h.wait_for_signal("a")
        meta = {"labels": managed_labels("a"), "ownerReferences": [owner_reference("a", uid_of(world, "a"))]}
        world.core.create_namespaced_service(
            ns, wire(metadata={"name": "a-epp-service", **meta}, spec=SERVICE_SPEC)
        )
        await h.wait_for_signal("a", count=2)
        deployment_spec = {
            "selector": {"matchLabels": {"app": "epp"}},
            "template": {
                "metadata": {"labels": {"app": "epp"}},
                "spec": {"containers": [{"name": "epp", "image": "epp:1"}]},
            },
        }
        world.apps.create_namespaced_deployment(
            ns, wire(metadata={"name": "a-kserve-router-scheduler", **meta}, spec=deployment_spec)
        )
        await h.wait_for_signal("a", count=3)
        world.create(POOLS_V1, {"metadata": {"name": "a-inference-pool", **meta}, "spec": POOL_SPEC})
        await h.wait_for_signal("a", count=4)
        world.create(ROUTES, {"metadata": {"name": "a-kserve-route", **meta}, "spec": {}})
        await h.wait_for_signal("a", count=5)
        assert [s.reason for s in h.signals("a")][1:] == [
            f"Service {ns}/a-epp-service created",
            f"Deployment {ns}/a-kserve-router-scheduler created",
            f"InferencePool {ns}/a-inference-pool created",
            f"HTTPRoute {ns}/a-kserve-route created",
        ]
        assert not any(s.start for s in h.signals("a")[1:])


async def test_an_unlabelled_service_signals_nobody(world: World) -> None:
    async with watching(world) as h:
        world.create(SERVING, service("a"))
        await h.wait_for_signal("a")
        world.core.create_namespaced_service(world.ns, wire(metadata={"name": "plain"}, spec=SERVICE_SPEC))
        await asyncio.sleep(0.3)
        assert len(h.signals("a")) == 1


async def test_a_gateway_change_signals_the_services_that_use_it(world: World) -> None:
    async with watching(world) as h:
        world.create(SERVING, service("uses-default", router={"route": {}}))
        world.create(SERVING, service("no-router"))
        await h.wait_for(lambda: len(h.signals()) == 2)
        world.create(GATEWAYS, gateway("kserve-ingress-gateway"), namespace=world.kserve)
        signal = await h.wait_for_signal("uses-default", count=2)
        assert (signal.reason, signal.start) == (
            f"Gateway {world.kserve}/kserve-ingress-gateway created",
            False,
        )
        await asyncio.sleep(0.2)
        assert len(h.signals("no-router")) == 1


async def test_a_referenced_route_and_its_gateway_signal_the_service(world: World) -> None:
    async with watching(world) as h:
        world.create(ROUTES, {"metadata": {"name": "mine"}, "spec": {"parentRefs": [{"name": "private"}]}})
        world.create(SERVING, service("a", router={"route": {"http": {"refs": [{"name": "mine"}]}}}))
        await h.wait_for_signal("a")
        # The route's creation may be handled once the cache already holds the service (the rules read
        # the cache, which can be ahead of the event): then it signals the service too.
        world.patch(ROUTES, "mine", {"spec": {"hostnames": ["example.com"]}})
        await h.wait_for(lambda: _has_reason(h.signals("a"), f"HTTPRoute {world.ns}/mine modified"))
        world.create(GATEWAYS, gateway("private"))
        await h.wait_for(lambda: _has_reason(h.signals("a"), f"Gateway {world.ns}/private created"))


def _has_reason(signals: list[ServiceSignal], reason: str) -> bool:
    return any(reason in s.reason.split("; ") for s in signals)


async def test_a_pool_named_by_a_pool_ref_signals_the_service(world: World) -> None:
    async with watching(world) as h:
        world.create(SERVING, service("a", router={"scheduler": {"pool": {"ref": {"name": "shared"}}}}))
        await h.wait_for_signal("a")
        world.create(POOLS_V1, {"metadata": {"name": "shared"}, "spec": POOL_SPEC})
        assert (await h.wait_for_signal("a", count=2)).reason == f"InferencePool {world.ns}/shared created"


async def test_the_router_configmap_signals_every_service(world: World) -> None:
    other = world.namespace("other")
    async with watching(world) as h:
        world.create(SERVING, service("a"))
        world.create(SERVING, service("b"), namespace=other)
        await h.wait_for(lambda: len(h.signals()) == 2)
        ingress = {"ingressGateway": "x", "kserveIngressGateway": "edge/gw"}
        body = wire(metadata={"name": "inferenceservice-config"}, data={"ingress": json.dumps(ingress)})
        world.core.create_namespaced_config_map(world.kserve, body)
        await h.wait_for(lambda: len(h.signals()) == 4)
        assert {s.reason for s in h.signals()[2:]} == {
            f"ConfigMap {world.kserve}/inferenceservice-config created"
        }
        world.core.create_namespaced_config_map(world.kserve, wire(metadata={"name": "unrelated"}))
        await asyncio.sleep(0.3)
        assert len(h.signals()) == 4


# --- never missing a change -------------------------------------------------------------------------


async def test_a_dropped_watch_stream_is_resumed_without_losing_a_change(world: World) -> None:
    faults = world.cluster.faults
    async with watching(world, tuning=replace(FAST, watch_timeout_seconds=1)) as h:
        graceful = faults.inject(verb="watch", resource="llminferenceservices", drop_watch_after=1, times=4)
        abrupt = faults.inject(
            verb="watch", resource="llminferenceservices", drop_watch_after=1, drop_abruptly=True, times=4
        )
        await h.wait_for(lambda: graceful.fired >= 1)  # the stream open before the faults has ended
        names = [f"svc-{i}" for i in range(8)]
        for name in names:
            world.create(SERVING, service(name))
        await h.wait_for(lambda: all(h.signals(n) for n in names))
        await h.wait_for(lambda: abrupt.fired >= 1)
        assert all(len(h.signals(n)) == 1 for n in names), [(s.name, s.reason) for s in h.signals()]
        assert not any("relist" in s.reason for s in h.signals())  # resumed, not relisted


async def test_watches_cut_by_the_proxy_resume_without_losing_or_repeating_a_change(world: World) -> None:
    proxy = world.cluster.proxy
    async with watching(world) as h:
        for i, abruptly in enumerate((False, True)):
            await h.wait_for(lambda: proxy.open_watches() > 0)
            assert proxy.cut_watches(abruptly=abruptly) > 0
            world.create(SERVING, service(f"after-cut-{i}"))
            await h.wait_for_signal(f"after-cut-{i}")
        await asyncio.sleep(0.3)
        assert [s.name for s in h.signals()] == ["after-cut-0", "after-cut-1"]
        assert not any("relist" in s.reason for s in h.signals())


async def test_a_relist_after_an_etcd_compaction_delivers_what_changed_while_the_watch_was_down(
    world: World,
) -> None:
    """kube-apiserver restarted after a compaction has no events older than its restart: the watcher's
    watch from before answers 410 Gone (as an ERROR event in the stream) and the relist finds the rest."""
    tuning = replace(FAST, watch_timeout_seconds=1)
    for name in ("kept", "changed", "removed"):
        world.create(SERVING, service(name))
    async with watching(world, tuning=tuning) as h:
        await h.wait_for(lambda: len(h.signals()) == 3)
        # Keep the watcher from watching (each stream ends after 1s), change the world, forget the log.
        outage = world.cluster.faults.inject(verb="watch", resource="llminferenceservices", status=503)
        await h.wait_for(lambda: outage.fired >= 2, timeout=5)
        world.create(SERVING, service("added"))
        world.patch(SERVING, "changed", {"spec": {"model": {"uri": "hf://org/other"}}})
        world.delete(SERVING, "removed")
        world.cluster.control.compact_etcd()
        await asyncio.to_thread(world.cluster.control.apiserver.restart)
        world.cluster.faults.remove(outage.id)
        await h.wait_for(lambda: len(h.signals()) == 6, timeout=20)
        late = {(s.name, s.reason, s.start) for s in h.signals()[3:]}
        ns = world.ns
        assert late == {
            ("added", f"LLMInferenceService {ns}/added created (seen on relist)", True),
            ("changed", f"LLMInferenceService {ns}/changed modified (seen on relist)", True),
            ("removed", f"LLMInferenceService {ns}/removed deleted (seen on relist)", False),
        }
        assert len(h.signals("kept")) == 1


async def test_a_410_gone_answer_to_the_watch_request_also_relists(world: World) -> None:
    faults = world.cluster.faults
    async with watching(world, tuning=replace(FAST, watch_timeout_seconds=1)) as h:
        world.create(SERVING, service("a", router={"route": {"http": {"refs": [{"name": "r"}]}}}))
        await h.wait_for_signal("a")
        outage = faults.inject(verb="watch", resource="httproutes", status=503)
        await h.wait_for(lambda: outage.fired >= 1)
        world.create(ROUTES, {"metadata": {"name": "r"}, "spec": {}})
        gone = faults.inject(verb="watch", resource="httproutes", status=410, times=1)
        faults.remove(outage.id)
        signal = await h.wait_for_signal("a", count=2)
        assert signal.reason == f"HTTPRoute {world.ns}/r created (seen on relist)"
        assert gone.fired == 1


async def test_the_watcher_keeps_retrying_while_the_api_server_fails(world: World) -> None:
    world.cluster.faults.inject(verb="list", resource="llminferenceservices", status=500, times=4)
    world.cluster.faults.inject(verb="list", resource="gateways", status=503, times=3)
    world.create(SERVING, service("a"))
    async with watching(world, wait_ready=False) as h:
        signal = await h.wait_for_signal("a")
        assert signal.start


# --- CRDs installed after start-up or removed (the private plane: the shared one keeps every CRD) -------
# In this order the private plane installs the large KServe CRD (~20 s) once for the three.


async def test_a_crd_installed_after_start_up_is_watched_at_once_and_signals_every_service() -> None:
    slow_retry = replace(FAST, backoff_first=20.0, backoff_cap=30.0)
    with private_world("llmisvc,gateway-api") as world:
        async with watching(world, tuning=slow_retry) as h:
            world.create(SERVING, service("a", router={"scheduler": {"pool": {"ref": {"name": "shared"}}}}))
            world.create(SERVING, service("b"))
            await h.wait_for(lambda: len(h.signals()) == 2)
            started = time.monotonic()
            await asyncio.to_thread(world.cluster.control.install_crds, "pool-v1")
            # The CRD's creation, then its becoming Established (kube-apiserver serves the kind from then
            # on), each signal every service, unless the two fall into one coalescing window.
            crd = "CustomResourceDefinition inferencepools.inference.networking.k8s.io"
            established = f"{crd} modified"

            def told(name: str) -> bool:
                return any(established in s.reason for s in h.signals(name))

            await h.wait_for(lambda: told("a") and told("b"))
            assert all(s.reason.startswith(crd) for s in h.signals()[2:]), h.signals()
            await asyncio.sleep(0.3)  # the pool loop was woken by the CRD event and lists now
            before = len(h.signals("a"))
            world.create(POOLS_V1, {"metadata": {"name": "shared"}, "spec": POOL_SPEC})
            assert (
                await h.wait_for_signal("a", count=before + 1)
            ).reason == f"InferencePool {world.ns}/shared created"
            assert time.monotonic() - started < 10  # not the 20 s backoff of a loop left asleep


async def test_removing_the_service_crd_signals_every_service_as_deleted() -> None:
    with private_world("llmisvc,gateway-api") as world:
        async with watching(world, namespaces=[world.ns]) as h:
            world.create(SERVING, service("a"))
            await h.wait_for_signal("a")
            await asyncio.to_thread(world.cluster.control.remove_crds, "llmisvc")
            deleted = await h.wait_for_signal("a", count=2)
            assert deleted.start is False
            assert f"LLMInferenceService {world.ns}/a deleted" in deleted.reason


async def test_services_are_watched_once_their_crd_is_installed() -> None:
    with private_world("gateway-api") as world:
        async with watching(world, wait_ready=False) as h:
            await asyncio.sleep(0.5)
            await asyncio.to_thread(world.cluster.control.install_crds, "llmisvc")
            await asyncio.sleep(0.3)
            world.create(SERVING, service("a"))
            signal = await h.wait_for_signal("a")
            assert signal.start


# --- no storms, clean stops ---------------------------------------------------------------------------


async def test_a_burst_of_changes_makes_one_signal_and_a_quiet_cluster_none(world: World) -> None:
    # kube-apiserver sends a bookmark 2 s before a watch's timeout (none to a watch shorter than that):
    # with 3 s watches each loop gets a bookmark and a new watch every 3 s.
    tuning = replace(FAST, debounce_seconds=1.0, watch_timeout_seconds=3)
    async with watching(world, tuning=tuning) as h:
        world.create(SERVING, service("a", router={"route": {}}))
        await h.wait_for_signal("a")
        for i in range(5):
            world.patch(SERVING, "a", {"metadata": {"labels": {"step": str(i)}}})
        world.create(GATEWAYS, gateway("kserve-ingress-gateway"), namespace=world.kserve)
        signal = await h.wait_for_signal("a", count=2)
        assert signal.start
        assert signal.reason == (
            f"LLMInferenceService {world.ns}/a modified; "
            f"Gateway {world.kserve}/kserve-ingress-gateway created"
        )
        watches = world.cluster.counter.count(verb="watch", code=200)
        await asyncio.sleep(4.0)  # bookmarks and ended watches: none of it is a change
        assert world.cluster.counter.count(verb="watch", code=200) > watches, "no watch ended and resumed"
        assert len(h.signals("a")) == 2


async def test_stop_ends_every_watch_thread_within_seconds(world: World) -> None:
    async with watching(world) as h:
        assert any(t.name.startswith("watch ") for t in threading.enumerate())
        started = time.monotonic()
        h.stop.set()
        await asyncio.wait_for(h.task, 5)
        assert time.monotonic() - started < 5
    assert not [t.name for t in threading.enumerate() if t.name.startswith("watch ")]
