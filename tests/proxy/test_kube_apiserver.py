"""Through the proxy to the real kube-apiserver, with the official client: what the product will meet.

Every test has the proxy of ``tests/cluster.py`` in front of the session's control plane; the client is
the one the product uses (``kubernetes``, over urllib3), authenticated with a bearer token that passes
through the proxy unchanged.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch
from kubernetes.client.exceptions import ApiException

from tests.cluster import Cluster

from .clients import Client

AGENT = "proxy-test/kube"


@pytest.fixture
def api(cluster: Cluster) -> Iterator[k8s.ApiClient]:
    client = cluster.api_client(AGENT)
    yield client
    client.close()  # type: ignore[no-untyped-call]


@pytest.fixture
def core(api: k8s.ApiClient) -> k8s.CoreV1Api:
    return k8s.CoreV1Api(api)


def configmap(name: str, **data: str) -> k8s.V1ConfigMap:
    return k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name=name), data=data)


def names(events: list[dict[str, Any]]) -> list[str]:
    return [e["object"]["metadata"]["name"] for e in events]


def test_get_list_and_create_reach_the_real_server(cluster: Cluster, core: k8s.CoreV1Api) -> None:
    ns = cluster.namespace
    created = core.create_namespaced_config_map(ns, configmap("a", k="v"))
    assert created.metadata is not None and created.metadata.uid
    assert core.read_namespaced_config_map("a", ns).data == {"k": "v"}
    listed = core.list_namespaced_config_map(ns, label_selector="")
    assert "a" in [c.metadata.name for c in listed.items if c.metadata]
    counter = cluster.counter
    assert counter.count(verb="create", resource="configmaps", code=201, user_agent=AGENT) == 1
    assert counter.count(verb="get", resource="configmaps", code=200, user_agent=AGENT) == 1
    assert counter.count(verb="list", resource="configmaps", code=200, user_agent=AGENT) == 1
    record = counter.records(verb="create", user_agent=AGENT)[0]
    assert (record.namespace, record.name) == (ns, "a")


def test_a_create_answered_in_chunks_is_logged_with_the_name_it_stored(
    cluster: Cluster, core: k8s.CoreV1Api
) -> None:
    """kube-apiserver chunks any answer over 2 KiB (Go's net/http): the name of what a POST stored is
    read from it all the same, with ``generateName`` too."""
    created = core.create_namespaced_config_map(
        cluster.namespace,
        k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(generate_name="big-"), data={"k": "v" * 8192}),
    )
    assert created.metadata is not None and created.metadata.name
    record = cluster.counter.records(verb="create", resource="configmaps", user_agent=AGENT)[0]
    assert (record.name, record.code) == (created.metadata.name, 201)


def test_the_bearer_token_passes_through_so_rbac_is_the_servers(cluster: Cluster) -> None:
    worker = cluster.api_client(AGENT, role="worker")
    try:
        with pytest.raises(ApiException) as refused:
            k8s.CoreV1Api(worker).list_namespaced_secret(cluster.namespace)
    finally:
        worker.close()  # type: ignore[no-untyped-call]
    assert refused.value.status == 403
    assert "llmisvc-router-worker" in str(refused.value.body)
    assert cluster.counter.count(verb="list", resource="secrets", code=403) == 1


def test_a_watch_through_the_proxy_delivers_each_event(cluster: Cluster, core: k8s.CoreV1Api) -> None:
    seen: list[str] = []
    ready = threading.Event()

    def watch() -> None:
        watcher = k8s_watch.Watch()  # type: ignore[no-untyped-call]
        stream = watcher.stream(  # type: ignore[no-untyped-call]
            core.list_namespaced_config_map, cluster.namespace, timeout_seconds=20
        )
        ready.set()
        for event in stream:
            seen.append(f"{event['type']} {event['object'].metadata.name}")
            if len(seen) == 3:
                return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    ready.wait(5)
    deadline = time.monotonic() + 10
    while cluster.counter.count(verb="watch", resource="configmaps") == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    core.create_namespaced_config_map(cluster.namespace, configmap("w1"))
    core.patch_namespaced_config_map("w1", cluster.namespace, {"data": {"k": "v"}})
    core.delete_namespaced_config_map("w1", cluster.namespace)
    thread.join(timeout=20)
    assert seen == ["ADDED w1", "MODIFIED w1", "DELETED w1"]


def test_a_429_fault_reaches_the_client_with_retry_after(cluster: Cluster, core: k8s.CoreV1Api) -> None:
    cluster.faults.inject(verb="list", resource="configmaps", status=429, retry_after=2, times=1)
    # urllib3's default policy would wait out the Retry-After and ask again: see the 429 itself.
    unretried = cluster.api_client(AGENT, retries=False)
    try:
        with pytest.raises(ApiException) as throttled:
            k8s.CoreV1Api(unretried).list_namespaced_config_map(cluster.namespace)
    finally:
        unretried.close()  # type: ignore[no-untyped-call]
    assert throttled.value.status == 429
    assert throttled.value.headers is not None and throttled.value.headers["Retry-After"] == "2"
    body = json.loads(str(throttled.value.body))
    assert (body["reason"], body["details"]["retryAfterSeconds"]) == ("TooManyRequests", 2)
    assert core.list_namespaced_config_map(cluster.namespace).items == []  # once only


def test_commit_leaves_the_object_created_though_the_client_was_told_500(
    cluster: Cluster, core: k8s.CoreV1Api
) -> None:
    cluster.faults.inject(verb="create", resource="configmaps", status=500, commit=True, times=1)
    with pytest.raises(ApiException) as failed:
        core.create_namespaced_config_map(cluster.namespace, configmap("committed"))
    assert failed.value.status == 500 and json.loads(str(failed.value.body))["reason"] == "InternalError"
    direct = cluster.api_client("proxy-test/direct", direct=True)
    try:
        stored = k8s.CoreV1Api(direct).read_namespaced_config_map("committed", cluster.namespace)
    finally:
        direct.close()  # type: ignore[no-untyped-call]
    assert stored.metadata is not None and stored.metadata.name == "committed"


def raw_watch(core: k8s.CoreV1Api, namespace: str, **params: Any) -> Any:
    """A watch's HTTP response, unread: the stream as the server (and proxy) frame it."""
    return core.list_namespaced_config_map(namespace, watch=True, _preload_content=False, **params)


def read_events(response: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in response.read().splitlines() if line]


def test_drop_watch_after_ends_the_real_servers_watch_after_n_events(
    cluster: Cluster, core: k8s.CoreV1Api
) -> None:
    for i in range(4):
        core.create_namespaced_config_map(cluster.namespace, configmap(f"c{i}"))
    rule = cluster.faults.inject(verb="watch", resource="configmaps", drop_watch_after=2, times=1)
    started = time.monotonic()
    # From resourceVersion 0 the server sends every object as ADDED, then keeps the watch open.
    events = read_events(raw_watch(core, cluster.namespace, resource_version="0", timeout_seconds=30))
    assert len(events) == 2 and {e["type"] for e in events} == {"ADDED"}
    assert time.monotonic() - started < 10  # ended by the proxy, not the 30 s timeout
    assert rule.fired == 1
    assert core.list_namespaced_config_map(cluster.namespace).items  # the connection pool serves on


def test_cut_watches_ends_the_real_servers_watch_cleanly(cluster: Cluster, core: k8s.CoreV1Api) -> None:
    response = raw_watch(core, cluster.namespace, timeout_seconds=30)
    core.create_namespaced_config_map(cluster.namespace, configmap("before-cut"))
    deadline = time.monotonic() + 10
    while cluster.proxy.open_watches() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the ADDED event is on its way
    started = time.monotonic()
    assert cluster.proxy.cut_watches() == 1
    assert names(read_events(response)) == ["before-cut"]
    assert time.monotonic() - started < 5


def test_requests_are_counted_by_user_agent(cluster: Cluster) -> None:
    clients = {
        agent: cluster.api_client(agent) for agent in ("llmisvc-router/worker", "llmisvc-router/watcher", "t")
    }
    try:
        for agent, n in (("llmisvc-router/worker", 3), ("llmisvc-router/watcher", 2), ("t", 1)):
            for _ in range(n):
                k8s.CoreV1Api(clients[agent]).list_namespaced_config_map(cluster.namespace)
    finally:
        for client in clients.values():
            client.close()  # type: ignore[no-untyped-call]
    counter = cluster.counter
    assert counter.count(user_agent="llmisvc-router/") == 5
    assert counter.count(user_agent="llmisvc-router/watcher") == 2
    assert counter.count(verb="list", exclude_user_agent="llmisvc-router/") == 1


def authorized(cluster: Cluster) -> tuple[Client, dict[str, str]]:
    return Client(cluster.url, str(cluster.control.ca_file), agent=AGENT), {
        "Authorization": f"Bearer {cluster.plane.token('admin')}"
    }


def test_protobuf_and_table_answers_pass_through_unchanged(cluster: Cluster, core: k8s.CoreV1Api) -> None:
    core.create_namespaced_config_map(cluster.namespace, configmap("p", k="v"))
    client, auth = authorized(cluster)
    path = f"/api/v1/namespaces/{cluster.namespace}/configmaps/p"
    binary = client.request("GET", path, headers={**auth, "Accept": "application/vnd.kubernetes.protobuf"})
    table = client.request(
        "GET", path, headers={**auth, "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    )
    client.close()
    assert binary.status == 200 and binary.body.startswith(b"k8s\x00")  # the protobuf envelope's magic
    assert binary.headers["Content-Type"] == "application/vnd.kubernetes.protobuf"
    assert table.json()["kind"] == "Table" and table.json()["rows"][0]["cells"][0] == "p"


def test_a_protobuf_watch_is_cut_after_n_length_prefixed_events(
    cluster: Cluster, core: k8s.CoreV1Api
) -> None:
    for i in range(3):
        core.create_namespaced_config_map(cluster.namespace, configmap(f"pb{i}"))
    cluster.faults.inject(verb="watch", drop_watch_after=2, times=1)
    client, auth = authorized(cluster)
    accept = "application/vnd.kubernetes.protobuf;stream=watch"
    path = f"/api/v1/namespaces/{cluster.namespace}/configmaps?watch=true&resourceVersion=0&timeoutSeconds=30"
    started = time.monotonic()
    answer = client.request("GET", path, headers={**auth, "Accept": accept})
    client.close()
    assert answer.status == 200 and "protobuf" in answer.headers["Content-Type"]
    frames, at = [], 0
    while at < len(answer.body):
        size = int.from_bytes(answer.body[at : at + 4], "big")
        frames.append(answer.body[at + 4 : at + 4 + size])
        at += 4 + size
    assert len(frames) == 2 and at == len(answer.body)
    assert time.monotonic() - started < 10
