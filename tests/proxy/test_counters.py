"""Every proxied request is counted, by what kube-apiserver would call it and the code answered."""

from __future__ import annotations

from llmisvc_devstack.proxy import ApiProxy, RequestCounter, RequestRecord

from .clients import Client
from .upstream import FakeUpstream, configmap

CONFIGMAPS = "/api/v1/namespaces/ns/configmaps"


def test_every_proxied_request_is_counted_by_verb_resource_and_code(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream
) -> None:
    client.request("POST", CONFIGMAPS, body=configmap("a"))
    client.get(f"{CONFIGMAPS}/a")
    client.get(f"{CONFIGMAPS}/absent")
    client.get(CONFIGMAPS)
    counter = proxy.counter
    assert counter.count() == 4
    assert counter.count(verb="create", resource="configmaps", code=201) == 1
    assert counter.count(verb="get", code=200) == counter.count(verb="get", code=404) == 1
    assert counter.count(verb="list", group="", subresource="") == 1
    assert counter.writes() == 1 and counter.writes(resource="httproutes") == 0


def test_the_code_counted_is_the_one_the_client_was_answered(client: Client, proxy: ApiProxy) -> None:
    proxy.faults.inject(verb="list", status=503, times=1)
    proxy.faults.inject(verb="create", status=500, commit=True, times=1)
    client.get(CONFIGMAPS)
    client.request("POST", CONFIGMAPS, body=configmap("a"))
    assert [(r.verb, r.code) for r in proxy.counter.records()] == [("list", 503), ("create", 500)]


def test_requests_are_told_apart_by_user_agent_prefix(proxy: ApiProxy, ca_file: str) -> None:
    for agent, n in (("llmisvc-router/worker", 3), ("llmisvc-router/watcher", 2), ("integration-test", 1)):
        c = Client(proxy.url, ca_file, agent=agent)
        for _ in range(n):
            c.request("POST", CONFIGMAPS, body={"metadata": {"generateName": "x-"}})
        c.close()
    counter = proxy.counter
    assert counter.count(user_agent="llmisvc-router/") == 5
    assert counter.writes(user_agent="llmisvc-router/worker") == 3
    assert counter.count(exclude_user_agent="llmisvc-router/") == 1
    assert len(counter.records(user_agent="llmisvc-router/watcher", verb={"create", "update"})) == 2


def test_a_record_names_the_object_even_when_the_server_chose_its_name(
    client: Client, proxy: ApiProxy
) -> None:
    client.request("POST", CONFIGMAPS, body={"metadata": {"generateName": "gen-"}})
    client.get(f"{CONFIGMAPS}/gen-1")
    created, read = proxy.counter.records()
    assert (created.name, created.namespace, created.method, created.path) == (
        "gen-1",
        "ns",
        "POST",
        CONFIGMAPS,
    )
    assert read.name == "gen-1" and read.user_agent == "proxy-test" and read.time >= created.time


def test_control_requests_are_neither_counted_nor_faulted(client: Client, proxy: ApiProxy) -> None:
    proxy.faults.inject(status=500)
    assert client.get("/_proxy/requests").status == 200
    assert client.get("/_proxy/faults").status == 200
    assert proxy.counter.count() == 0


def test_a_reset_forgets_the_counts_and_the_log(client: Client, proxy: ApiProxy) -> None:
    client.get(CONFIGMAPS)
    proxy.counter.reset()
    assert proxy.counter.count() == 0 and proxy.counter.records() == []
    assert proxy.counter.snapshot() == {"total": 0, "counts": []}


def test_the_log_keeps_the_most_recent_requests_the_counts_all() -> None:
    counter = RequestCounter(keep=3)
    for i in range(5):
        counter.record(RequestRecord("get", "", "pods", "", "ns", f"p{i}", 200, "GET", "/", "a", float(i)))
    assert [r.name for r in counter.records()] == ["p2", "p3", "p4"]
    assert counter.count(verb="get") == 5
    assert [r["name"] for r in counter.recent(2)] == ["p3", "p4"]


def test_each_write_is_logged_with_the_body_sent_and_a_read_without_one(
    client: Client, proxy: ApiProxy
) -> None:
    client.request("POST", CONFIGMAPS, body=configmap("a", key="value"))
    client.request("PATCH", f"{CONFIGMAPS}/a", body={"data": {"key": "other"}})
    client.get(f"{CONFIGMAPS}/a")
    created, patched, read = proxy.counter.records()
    assert created.document() == configmap("a", key="value") and created.version == "v1"
    assert patched.document() == {"data": {"key": "other"}}
    assert (read.body, read.document()) == (b"", None)
    assert all("body" not in r for r in proxy.counter.recent())  # the control endpoint's log: no bodies


def test_a_dry_run_write_is_logged_as_one_and_not_counted(client: Client, proxy: ApiProxy) -> None:
    client.request("POST", f"{CONFIGMAPS}?dryRun=All", body=configmap("checked"))
    client.request("POST", CONFIGMAPS, body=configmap("stored"))
    assert [(r.name, r.dry_run) for r in proxy.counter.records()] == [("checked", True), ("stored", False)]
    assert proxy.counter.writes() == proxy.counter.count(verb="create") == 1
    assert [r.name for r in proxy.counter.records(dry_run=False)] == ["stored"]
    assert [r["dry_run"] for r in proxy.counter.recent()] == [True, False]
