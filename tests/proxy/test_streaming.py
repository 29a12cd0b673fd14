"""Watch streams flow event by event, end when told (fault rules, cut_watches) and end as told."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable

import pytest

from llmisvc_devstack.proxy import ApiProxy

from .clients import Client
from .upstream import FakeUpstream, configmap

WATCH = "/api/v1/namespaces/ns/configmaps?watch=true"


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def open_watch(client: Client, upstream: FakeUpstream, watches: int = 1) -> http.client.HTTPResponse:
    stream = client.open("GET", WATCH)
    assert stream.status == 200
    wait_for(lambda: upstream.open_watches() == watches)
    return stream


def event(stream: http.client.HTTPResponse) -> dict[str, object]:
    line = stream.readline()
    assert line.endswith(b"\n"), line
    return dict(json.loads(line))


def test_watch_events_reach_the_client_one_by_one(client: Client, upstream: FakeUpstream) -> None:
    stream = open_watch(client, upstream)
    for name in ("a", "b", "c"):
        upstream.emit("ADDED", configmap(name))  # the next is sent only once this one arrived
        assert event(stream)["object"]["metadata"]["name"] == name  # type: ignore[index]


def test_a_watch_the_upstream_ends_ends_cleanly_and_the_connection_serves_on(
    client: Client, upstream: FakeUpstream
) -> None:
    stream = open_watch(client, upstream)
    upstream.emit("ADDED", configmap("a"))
    upstream.end_watches()
    assert stream.read().count(b"\n") == 1  # read to the final chunk: no IncompleteRead
    assert client.get("/api/v1/namespaces/ns/configmaps").status == 200


def test_drop_watch_after_ends_the_stream_cleanly_after_that_many_events(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream
) -> None:
    rule = proxy.faults.inject(verb="watch", resource="configmaps", drop_watch_after=2, times=1)
    stream = open_watch(client, upstream)
    upstream.emit("ADDED", configmap("a"))
    upstream.emit("ADDED", configmap("b"))
    upstream.emit("ADDED", configmap("c"))
    events = [json.loads(line) for line in stream.read().splitlines()]
    assert [e["object"]["metadata"]["name"] for e in events] == ["a", "b"]
    assert rule.fired == 1
    after = client.get("/api/v1/namespaces/ns/configmaps")  # the same client connection serves on
    assert after.status == 200
    # on a new upstream connection: the watch's was closed with the rest of its stream unread
    assert after.headers["X-Upstream-Connection"] != stream.getheader("X-Upstream-Connection")


def test_drop_watch_after_zero_ends_the_stream_before_any_event(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream
) -> None:
    proxy.faults.inject(verb="watch", drop_watch_after=0, times=1)
    stream = client.open("GET", WATCH)
    assert stream.status == 200
    assert stream.read() == b""


def test_drop_abruptly_cuts_the_connection_without_the_final_chunk(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream
) -> None:
    proxy.faults.inject(verb="watch", drop_watch_after=1, drop_abruptly=True, times=1)
    stream = open_watch(client, upstream)
    upstream.emit("ADDED", configmap("a"))
    upstream.emit("ADDED", configmap("b"))
    assert event(stream)["type"] == "ADDED"
    with pytest.raises(http.client.IncompleteRead):
        stream.read()


def test_a_drop_rule_leaves_requests_that_are_not_watches_alone(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream
) -> None:
    upstream.objects[("ns", "a")] = configmap("a")
    proxy.faults.inject(drop_watch_after=0)
    answer = client.get("/api/v1/namespaces/ns/configmaps")
    assert answer.status == 200 and len(answer.json()["items"]) == 1


def test_cut_watches_ends_every_open_watch_cleanly_and_says_how_many(
    proxy: ApiProxy, upstream: FakeUpstream, ca_file: str
) -> None:
    clients = [Client(proxy.url, ca_file) for _ in range(3)]
    streams = [open_watch(c, upstream, watches=i + 1) for i, c in enumerate(clients)]
    plain = Client(proxy.url, ca_file)
    assert plain.get("/api/v1/namespaces/ns/configmaps").status == 200  # idle keep-alive: not a watch
    assert proxy.open_watches() == 3
    assert proxy.cut_watches() == 3
    for stream in streams:
        assert stream.read() == b""  # ended with the final chunk
    wait_for(lambda: proxy.open_watches() == 0)
    assert clients[0].get("/api/v1/namespaces/ns/configmaps").status == 200
    assert proxy.cut_watches() == 0
    for c in [*clients, plain]:
        c.close()


def test_cut_watches_abruptly_ends_them_without_the_final_chunk(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream
) -> None:
    stream = open_watch(client, upstream)
    upstream.emit("ADDED", configmap("a"))
    assert event(stream)["type"] == "ADDED"
    assert proxy.cut_watches(abruptly=True) == 1
    with pytest.raises(http.client.IncompleteRead):
        stream.read()


def test_a_watch_is_counted_once_when_it_starts(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream
) -> None:
    open_watch(client, upstream)
    assert proxy.counter.count(verb="watch", resource="configmaps", code=200) == 1
    assert proxy.counter.records(verb="watch")[0].namespace == "ns"


def test_a_watch_whose_client_hung_up_is_ended_without_waiting_for_an_event(
    proxy: ApiProxy, upstream: FakeUpstream, ca_file: str
) -> None:
    leaving = Client(proxy.url, ca_file)
    open_watch(leaving, upstream)
    assert proxy.open_watches() == 1
    leaving.close()
    wait_for(lambda: proxy.open_watches() == 0)
    assert proxy.cut_watches() == 0
