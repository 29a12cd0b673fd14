"""The control endpoint drives the proxy from another process, under the stand-in client's names."""

from __future__ import annotations

import threading
import time
import urllib.error

import pytest

from llmisvc_devstack.proxy import ApiProxy, ControlClient

from .clients import Answer, Client
from .upstream import FakeUpstream

CONFIGMAPS = "/api/v1/namespaces/ns/configmaps"


@pytest.fixture
def control(proxy: ApiProxy, ca_file: str) -> ControlClient:
    return ControlClient(proxy.url, ca_file=ca_file)


def test_faults_are_added_listed_and_cleared_through_the_control_endpoint(
    control: ControlClient, client: Client
) -> None:
    rule = control.add_fault(verb="list", status=503, times=1)
    assert rule["status"] == 503 and rule["id"]
    assert client.get(CONFIGMAPS).status == 503
    assert [(r["id"], r["fired"]) for r in control.faults()] == [(rule["id"], 1)]
    control.clear_faults()
    assert control.faults() == []


def test_one_fault_is_removed_by_its_id(control: ControlClient) -> None:
    kept, removed = control.add_fault(verb="get", status=500), control.add_fault(verb="list", status=500)
    control.remove_fault(removed["id"])
    assert [r["id"] for r in control.faults()] == [kept["id"]]


def test_a_hung_request_is_released_through_the_control_endpoint(
    control: ControlClient, client: Client
) -> None:
    rule = control.add_fault(verb="list", hang=True)
    answers: list[Answer] = []
    thread = threading.Thread(target=lambda: answers.append(client.get(CONFIGMAPS)))
    thread.start()
    time.sleep(0.2)
    control.release(rule["id"])
    thread.join(timeout=5)
    assert [a.status for a in answers] == [200]


def test_the_requests_are_read_and_reset_through_the_control_endpoint(
    control: ControlClient, client: Client
) -> None:
    client.get(CONFIGMAPS)
    client.get(f"{CONFIGMAPS}/a")
    assert control.count() == 2
    assert control.count(verb="list", user_agent="proxy-") == 1
    assert control.count(exclude_user_agent="proxy-") == 0
    requests = control.requests(recent=10)
    assert requests["total"] == 2 and [r["verb"] for r in requests["recent"]] == ["list", "get"]
    control.reset_requests()
    assert control.requests()["total"] == 0


def test_watches_are_cut_through_the_control_endpoint(
    control: ControlClient, client: Client, upstream: FakeUpstream
) -> None:
    stream = client.open("GET", f"{CONFIGMAPS}?watch=true")
    deadline = time.monotonic() + 5
    while upstream.open_watches() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert control.cut_watches() == 1
    assert stream.read() == b""


def test_a_rule_with_unknown_fields_is_refused_with_400(control: ControlClient) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        control.add_fault(verbs="get")
    assert refused.value.code == 400


def test_an_unknown_control_path_is_404(client: Client) -> None:
    answer = client.get("/_proxy/nothing")
    assert answer.status == 404 and answer.json()["kind"] == "Status"


def test_health_is_reported_through_the_control_endpoint(control: ControlClient) -> None:
    assert control.healthy()
