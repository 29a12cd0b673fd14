"""Watch: event streams, resumption from a resourceVersion, 410 Gone and relist, bookmarks, selectors."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from apiserver_standin.testing import running_apiserver

from .helpers import configmap, dynamic_client, new_watch, route


def collect(stream: Any, count: int, w: Any) -> list[tuple[str, str]]:
    seen = []
    for event in stream:
        if event["type"] != "BOOKMARK":
            seen.append((event["type"], event["object"].metadata.name))
        if len(seen) >= count:
            w.stop()
    return seen


def test_watch_streams_added_modified_and_deleted_events_from_a_resource_version(core):
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", configmap("a"))
    core.patch_namespaced_config_map("a", "default", {"data": {"k": "v"}})
    core.delete_namespaced_config_map("a", "default")
    w = new_watch()
    stream = w.stream(core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=5)
    assert collect(stream, 3, w) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watch_without_resource_version_starts_with_the_current_objects(core):
    core.create_namespaced_config_map("default", configmap("a"))
    w = new_watch()
    stream = w.stream(core.list_namespaced_config_map, "default", timeout_seconds=5)
    assert collect(stream, 1, w) == [("ADDED", "a")]


def test_events_written_while_a_watch_waits_are_delivered(core):
    w = new_watch()
    stream = w.stream(core.list_namespaced_config_map, "default", timeout_seconds=5)
    writer = threading.Timer(0.2, lambda: core.create_namespaced_config_map("default", configmap("late")))
    writer.start()
    try:
        assert collect(stream, 1, w) == [("ADDED", "late")]
    finally:
        writer.join()


def test_a_dropped_watch_is_resumed_from_the_last_resource_version_without_losing_events(standin, core):
    for i in range(4):
        core.create_namespaced_config_map("default", configmap(f"cm-{i}"))
    standin.faults.inject(verb="watch", resource="configmaps", drop_watch_after=2, times=1)
    w = new_watch()
    # No timeout_seconds: the client resumes by itself from the last resourceVersion it saw.
    names = [name for _, name in collect(w.stream(core.list_namespaced_config_map, "default"), 4, w)]
    assert names == ["cm-0", "cm-1", "cm-2", "cm-3"]
    assert standin.counter.count(verb="watch", resource="configmaps") == 2


def test_an_abruptly_cut_watch_can_be_resumed_by_the_client(standin, core):
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    for i in range(3):
        core.create_namespaced_config_map("default", configmap(f"cm-{i}"))
    standin.faults.inject(
        verb="watch", resource="configmaps", drop_watch_after=1, drop_abruptly=True, times=1
    )
    w = new_watch()
    seen = []
    with pytest.raises(Exception):  # noqa: B017 - urllib3 reports the cut connection in its own way
        for event in w.stream(
            core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=5
        ):
            seen.append(event["object"].metadata.name)
    w2 = new_watch()
    resumed = w2.stream(
        core.list_namespaced_config_map, "default", resource_version=w.resource_version, timeout_seconds=5
    )
    assert seen + [name for _, name in collect(resumed, 2, w2)] == ["cm-0", "cm-1", "cm-2"]


def test_a_too_old_resource_version_gets_410_gone_and_a_relist_recovers(standin, core):
    old_rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", configmap("a"))
    standin.store.compact()
    w = new_watch()
    with pytest.raises(ApiException) as exc:
        list(w.stream(core.list_namespaced_config_map, "default", resource_version=old_rv, timeout_seconds=5))
    assert exc.value.status == 410
    relisted = core.list_namespaced_config_map("default")
    assert [c.metadata.name for c in relisted.items] == ["a"]
    core.create_namespaced_config_map("default", configmap("b"))
    w2 = new_watch()
    stream = w2.stream(
        core.list_namespaced_config_map,
        "default",
        resource_version=relisted.metadata.resource_version,
        timeout_seconds=5,
    )
    assert collect(stream, 1, w2) == [("ADDED", "b")]


def test_the_bounded_event_log_answers_410_expired_in_stream():
    with running_apiserver(crds="none", watch_log_size=3) as server:
        url = f"{server.url}/api/v1/namespaces/default/configmaps"
        core_rv = server.store.current_rv()
        for i in range(5):
            info: Any = server.registry.lookup("", "v1", "configmaps")
            server.store.create(info, "default", configmap(f"c{i}"))
        with urllib.request.urlopen(
            f"{url}?watch=1&resourceVersion={core_rv}&timeoutSeconds=2", timeout=5
        ) as resp:
            event = json.loads(resp.readline())
        assert event["type"] == "ERROR"
        assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"


def test_watch_sends_bookmarks_when_allowed(core):
    w = new_watch()
    started = time.monotonic()
    for event in w.stream(
        core.list_namespaced_config_map, "default", allow_watch_bookmarks=True, timeout_seconds=3
    ):
        if event["type"] == "BOOKMARK":
            assert int(event["raw_object"]["metadata"]["resourceVersion"]) > 0
            w.stop()
    assert time.monotonic() - started < 2.5


def test_a_watch_with_a_label_selector_sees_objects_leave_as_deleted_and_return_as_added(core):
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", configmap("a", {"app": "x"}))
    core.create_namespaced_config_map("default", configmap("other"))
    core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"app": "y"}}})
    core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"app": "x"}}})
    w = new_watch()
    stream = w.stream(
        core.list_namespaced_config_map,
        "default",
        resource_version=rv,
        label_selector="app=x",
        timeout_seconds=5,
    )
    assert collect(stream, 3, w) == [("ADDED", "a"), ("DELETED", "a"), ("ADDED", "a")]


def test_a_watch_with_a_field_selector_sees_only_that_name(core):
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    for name in ("a", "b"):
        core.create_namespaced_config_map("default", configmap(name))
    w = new_watch()
    stream = w.stream(
        core.list_namespaced_config_map,
        "default",
        resource_version=rv,
        field_selector="metadata.name=b",
        timeout_seconds=5,
    )
    assert collect(stream, 1, w) == [("ADDED", "b")]


def test_timeout_seconds_ends_the_stream(core):
    started = time.monotonic()
    events = list(new_watch().stream(core.list_namespaced_config_map, "default", timeout_seconds=1))
    assert events == [] and 0.9 < time.monotonic() - started < 3


def test_watch_1_and_all_namespaces_watch_over_raw_http(standin, core):
    core.create_namespaced_config_map("team", configmap("a"))
    with urllib.request.urlopen(
        f"{standin.url}/api/v1/configmaps?watch=1&timeoutSeconds=1", timeout=5
    ) as resp:
        assert resp.headers["Transfer-Encoding"] == "chunked"
        lines = [json.loads(line) for line in resp.read().splitlines() if line]
    assert [(e["type"], e["object"]["metadata"]["namespace"]) for e in lines] == [("ADDED", "team")]


def test_dynamic_client_watch_of_a_custom_resource(standin):
    routes = dynamic_client(standin.client).resources.get(
        api_version="gateway.networking.k8s.io/v1", kind="HTTPRoute"
    )
    routes.create(body=route("r"), namespace="default")
    for event in routes.watch(namespace="default", timeout=2):
        assert (event["type"], event["object"].metadata.name) == ("ADDED", "r")
        break
