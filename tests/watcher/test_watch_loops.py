"""The watcher against the API server stand-in: every change reaches the right workflows, exactly once
per burst, whatever happens to the watch streams."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from kubernetes import client as k8s

from apiserver_standin.server import StandinApiServer
from apiserver_standin.testing import running_apiserver

from .harness import (
    FAST,
    GATEWAYS,
    POOLS_V1,
    ROUTES,
    SERVING,
    Harness,
    gateway,
    managed_labels,
    owner_reference,
    service,
    watching,
    wire,
)


@pytest.fixture
def server() -> Iterator[StandinApiServer]:
    with running_apiserver(crds="all", bookmark_interval=0.2) as standin:
        yield standin


def uid_of(h: Harness, name: str, namespace: str = "ns") -> str:
    body: Any = h.custom.get_namespaced_custom_object(*SERVING[:2], namespace, SERVING[2], name)
    return str(body["metadata"]["uid"])


def reasons(h: Harness, name: str, namespace: str = "ns") -> list[str]:
    return [s.reason for s in h.signals(name, namespace)]


# --- LLMInferenceServices ---------------------------------------------------------------------------


async def test_every_service_found_at_start_up_gets_signal_with_start(server):
    setup = k8s.CustomObjectsApi(server.client)
    for namespace, name in (("ns", "a"), ("team", "b")):
        setup.create_namespaced_custom_object(*SERVING[:2], namespace, SERVING[2], service(name))
    async with watching(server) as h:
        await h.wait_for(lambda: len(h.signals()) >= 2)
        found = {(s.namespace, s.name, s.reason, s.start) for s in h.signals()}
        assert found == {
            ("ns", "a", "LLMInferenceService ns/a found", True),
            ("team", "b", "LLMInferenceService team/b found", True),
        }


async def test_a_created_or_modified_service_is_started_and_a_deleted_one_only_signalled(server):
    async with watching(server) as h:
        h.create(SERVING, service("a"))
        created = await h.wait_for_signal("a")
        assert (created.reason, created.start) == ("LLMInferenceService ns/a created", True)
        h.patch(SERVING, "a", {"metadata": {"annotations": {"serving.kserve.io/stop": "true"}}})
        modified = await h.wait_for_signal("a", count=2)
        assert (modified.reason, modified.start) == ("LLMInferenceService ns/a modified", True)
        h.delete(SERVING, "a")
        deleted = await h.wait_for_signal("a", count=3)
        assert (deleted.reason, deleted.start) == ("LLMInferenceService ns/a deleted", False)


async def test_the_namespace_list_limits_the_services_watched(server):
    async with watching(server, namespaces=["team-a"]) as h:
        h.create(SERVING, service("other"), namespace="team-b")
        h.create(SERVING, service("mine"), namespace="team-a")
        await h.wait_for_signal("mine", "team-a")
        await asyncio.sleep(0.3)
        assert h.signals("other", "team-b") == []


# Objects valid under the real schemas (a ClusterIP Service needs ports; the v1 InferencePool CRD
# requires a selector, target ports and an endpoint picker).
SERVICE_SPEC = {"ports": [{"port": 80}]}
POOL_SPEC = {
    "selector": {"matchLabels": {"app": "model"}},
    "targetPorts": [{"number": 8000}],
    "endpointPickerRef": {"name": "epp", "port": {"number": 9002}},
}


# --- objects that change a service's routing ------------------------------------------------------


async def test_a_change_to_a_managed_object_signals_its_owner(server):
    async with watching(server) as h:
        h.create(SERVING, service("a"))
        await h.wait_for_signal("a")
        meta = {"labels": managed_labels("a"), "ownerReferences": [owner_reference("a", uid_of(h, "a"))]}
        h.core.create_namespaced_service(
            "ns", wire(metadata={"name": "a-epp-service", **meta}, spec=SERVICE_SPEC)
        )
        await h.wait_for_signal("a", count=2)
        deployment_spec = {
            "selector": {"matchLabels": {"app": "epp"}},
            "template": {
                "metadata": {"labels": {"app": "epp"}},
                "spec": {"containers": [{"name": "epp", "image": "epp:1"}]},
            },
        }
        h.apps.create_namespaced_deployment(
            "ns", wire(metadata={"name": "a-kserve-router-scheduler", **meta}, spec=deployment_spec)
        )
        await h.wait_for_signal("a", count=3)
        h.create(POOLS_V1, {"metadata": {"name": "a-inference-pool", **meta}, "spec": POOL_SPEC})
        await h.wait_for_signal("a", count=4)
        h.create(ROUTES, {"metadata": {"name": "a-kserve-route", **meta}, "spec": {}})
        await h.wait_for_signal("a", count=5)
        assert reasons(h, "a")[1:] == [
            "Service ns/a-epp-service created",
            "Deployment ns/a-kserve-router-scheduler created",
            "InferencePool ns/a-inference-pool created",
            "HTTPRoute ns/a-kserve-route created",
        ]
        assert not any(s.start for s in h.signals("a")[1:])


async def test_an_unlabelled_service_signals_nobody(server):
    async with watching(server) as h:
        h.create(SERVING, service("a"))
        await h.wait_for_signal("a")
        h.core.create_namespaced_service("ns", wire(metadata={"name": "plain"}, spec=SERVICE_SPEC))
        await asyncio.sleep(0.3)
        assert len(h.signals("a")) == 1


async def test_a_gateway_change_signals_the_services_that_use_it(server):
    async with watching(server) as h:
        h.create(SERVING, service("uses-default", router={"route": {}}))
        h.create(SERVING, service("no-router"))
        await h.wait_for(lambda: len(h.signals()) == 2)
        h.create(GATEWAYS, gateway("kserve-ingress-gateway"), namespace="kserve")
        signal = await h.wait_for_signal("uses-default", count=2)
        assert (signal.reason, signal.start) == ("Gateway kserve/kserve-ingress-gateway created", False)
        await asyncio.sleep(0.2)
        assert len(h.signals("no-router")) == 1


async def test_a_referenced_route_and_its_gateway_signal_the_service(server):
    async with watching(server) as h:
        h.create(ROUTES, {"metadata": {"name": "mine"}, "spec": {"parentRefs": [{"name": "private"}]}})
        h.create(SERVING, service("a", router={"route": {"http": {"refs": [{"name": "mine"}]}}}))
        await h.wait_for_signal("a")
        h.patch(ROUTES, "mine", {"spec": {"hostnames": ["example.com"]}})
        assert (await h.wait_for_signal("a", count=2)).reason == "HTTPRoute ns/mine modified"
        h.create(GATEWAYS, gateway("private"))
        assert (await h.wait_for_signal("a", count=3)).reason == "Gateway ns/private created"


async def test_a_pool_named_by_a_pool_ref_signals_the_service(server):
    async with watching(server) as h:
        h.create(SERVING, service("a", router={"scheduler": {"pool": {"ref": {"name": "shared"}}}}))
        await h.wait_for_signal("a")
        h.create(POOLS_V1, {"metadata": {"name": "shared"}, "spec": POOL_SPEC})
        assert (await h.wait_for_signal("a", count=2)).reason == "InferencePool ns/shared created"


async def test_the_router_configmap_signals_every_service(server):
    async with watching(server) as h:
        h.create(SERVING, service("a"))
        h.create(SERVING, service("b"), namespace="other")
        await h.wait_for(lambda: len(h.signals()) == 2)
        ingress = {"ingressGateway": "x", "kserveIngressGateway": "edge/gw"}
        body = wire(metadata={"name": "inferenceservice-config"}, data={"ingress": json.dumps(ingress)})
        h.core.create_namespaced_config_map("kserve", body)
        await h.wait_for(lambda: len(h.signals()) == 4)
        assert {s.reason for s in h.signals()[2:]} == {"ConfigMap kserve/inferenceservice-config created"}
        h.core.create_namespaced_config_map("kserve", wire(metadata={"name": "unrelated"}))
        await asyncio.sleep(0.3)
        assert len(h.signals()) == 4


# --- never missing a change -------------------------------------------------------------------------


async def test_a_dropped_watch_stream_is_resumed_without_losing_a_change(server):
    async with watching(server, tuning=replace(FAST, watch_timeout_seconds=1)) as h:
        graceful = server.faults.inject(
            verb="watch", resource="llminferenceservices", drop_watch_after=1, times=4
        )
        abrupt = server.faults.inject(
            verb="watch", resource="llminferenceservices", drop_watch_after=1, drop_abruptly=True, times=4
        )
        await h.wait_for(lambda: graceful.fired >= 1)  # the stream open before the faults has ended
        names = [f"svc-{i}" for i in range(8)]
        for name in names:
            h.create(SERVING, service(name))
        await h.wait_for(lambda: all(h.signals(n) for n in names))
        await h.wait_for(lambda: abrupt.fired >= 1)
        assert all(len(h.signals(n)) == 1 for n in names), [(s.name, s.reason) for s in h.signals()]
        assert not any("relist" in s.reason for s in h.signals())  # resumed, not relisted


async def test_a_relist_after_410_gone_delivers_what_changed_while_the_watch_was_down(server):
    tuning = replace(FAST, watch_timeout_seconds=1)
    h_setup = k8s.CustomObjectsApi(server.client)
    for name in ("kept", "changed", "removed"):
        h_setup.create_namespaced_custom_object(*SERVING[:2], "ns", SERVING[2], service(name))
    async with watching(server, tuning=tuning) as h:
        await h.wait_for(lambda: len(h.signals()) == 3)
        # Keep the watcher from watching (each stream ends after 1s), change the world, forget the log.
        outage = server.faults.inject(verb="watch", resource="llminferenceservices", status=503)
        await h.wait_for(lambda: outage.fired >= 2, timeout=5)
        h.create(SERVING, service("added"))
        h.patch(SERVING, "changed", {"spec": {"model": {"uri": "hf://org/other"}}})
        h.delete(SERVING, "removed")
        server.store.compact()
        server.faults.remove(outage.id)
        await h.wait_for(lambda: len(h.signals()) == 6)
        late = {(s.name, s.reason, s.start) for s in h.signals()[3:]}
        assert late == {
            ("added", "LLMInferenceService ns/added created (seen on relist)", True),
            ("changed", "LLMInferenceService ns/changed modified (seen on relist)", True),
            ("removed", "LLMInferenceService ns/removed deleted (seen on relist)", False),
        }
        assert len(h.signals("kept")) == 1


async def test_a_410_gone_answer_to_the_watch_request_also_relists(server):
    async with watching(server, tuning=replace(FAST, watch_timeout_seconds=1)) as h:
        h.create(SERVING, service("a", router={"route": {"http": {"refs": [{"name": "r"}]}}}))
        await h.wait_for_signal("a")
        outage = server.faults.inject(verb="watch", resource="httproutes", status=503)
        await h.wait_for(lambda: outage.fired >= 1)
        h.create(ROUTES, {"metadata": {"name": "r"}, "spec": {}})
        gone = server.faults.inject(verb="watch", resource="httproutes", status=410, times=1)
        server.faults.remove(outage.id)
        signal = await h.wait_for_signal("a", count=2)
        assert signal.reason == "HTTPRoute ns/r created (seen on relist)"
        assert gone.fired == 1


async def test_the_watcher_keeps_retrying_while_the_api_server_fails(server):
    server.faults.inject(verb="list", resource="llminferenceservices", status=500, times=4)
    server.faults.inject(verb="list", resource="gateways", status=503, times=3)
    k8s.CustomObjectsApi(server.client).create_namespaced_custom_object(
        *SERVING[:2], "ns", SERVING[2], service("a")
    )
    async with watching(server, wait_ready=False) as h:
        signal = await h.wait_for_signal("a")
        assert signal.start


# --- CRDs installed after start-up ------------------------------------------------------------------


async def test_a_crd_installed_after_start_up_is_watched_at_once_and_signals_every_service():
    slow_retry = replace(FAST, backoff_first=20.0, backoff_cap=30.0)
    with running_apiserver(crds="llmisvc,gateway-api", bookmark_interval=0.2) as server:
        async with watching(server, tuning=slow_retry) as h:
            h.create(SERVING, service("a", router={"scheduler": {"pool": {"ref": {"name": "shared"}}}}))
            h.create(SERVING, service("b"))
            await h.wait_for(lambda: len(h.signals()) == 2)
            started = time.monotonic()
            server.install_crds("pool-v1")
            await h.wait_for(lambda: len(h.signals()) == 4)
            crd_reason = "CustomResourceDefinition inferencepools.inference.networking.k8s.io created"
            assert {s.reason for s in h.signals()[2:]} == {crd_reason}
            await asyncio.sleep(0.3)  # the pool loop was woken by the CRD event and lists now
            h.create(POOLS_V1, {"metadata": {"name": "shared"}, "spec": POOL_SPEC})
            assert (await h.wait_for_signal("a", count=3)).reason == "InferencePool ns/shared created"
            assert time.monotonic() - started < 10  # not the 20 s backoff of a loop left asleep


async def test_services_are_watched_once_their_crd_is_installed():
    with running_apiserver(crds="gateway-api", bookmark_interval=0.2) as server:
        async with watching(server, wait_ready=False) as h:
            await asyncio.sleep(0.5)
            server.install_crds("llmisvc")
            await asyncio.sleep(0.3)
            h.create(SERVING, service("a"))
            signal = await h.wait_for_signal("a")
            assert signal.start


async def test_removing_the_service_crd_signals_every_service_as_deleted(server):
    async with watching(server, namespaces=["ns"]) as h:
        h.create(SERVING, service("a"))
        await h.wait_for_signal("a")
        server.remove_crds("llmisvc")
        deleted = await h.wait_for_signal("a", count=2)
        assert deleted.start is False
        assert "LLMInferenceService ns/a deleted" in deleted.reason


# --- no storms, clean stops ---------------------------------------------------------------------------


async def test_a_burst_of_changes_makes_one_signal_and_a_quiet_cluster_none(server):
    tuning = replace(
        FAST,
        debounce_seconds=0.3,
        watch_timeout_seconds=1,
    )
    async with watching(server, tuning=tuning) as h:
        h.create(SERVING, service("a", router={"route": {}}))
        await h.wait_for_signal("a")
        for i in range(5):
            h.patch(SERVING, "a", {"metadata": {"labels": {"step": str(i)}}})
        h.create(GATEWAYS, gateway("kserve-ingress-gateway"), namespace="kserve")
        signal = await h.wait_for_signal("a", count=2)
        assert signal.start
        assert signal.reason == (
            "LLMInferenceService ns/a modified; Gateway kserve/kserve-ingress-gateway created"
        )
        # Bookmarks every 0.2 s and a watch that ends every second: none of it is a change.
        await asyncio.sleep(2.5)
        assert len(h.signals("a")) == 2


async def test_stop_ends_every_watch_thread_within_seconds(server):
    async with watching(server) as h:
        assert any(t.name.startswith("watch ") for t in threading.enumerate())
        started = time.monotonic()
        h.stop.set()
        await asyncio.wait_for(h.task, 5)
        assert time.monotonic() - started < 5
    assert not [t.name for t in threading.enumerate() if t.name.startswith("watch ")]
