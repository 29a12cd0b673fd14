"""Fault rules answer as the real server would, wait, hang, commit, and pick their requests."""

from __future__ import annotations

import contextlib
import http.client
import threading
import time

import pytest

from llmisvc_devstack.proxy import ApiProxy, FaultRule

from .clients import Answer, Client
from .tls import Pki
from .upstream import FakeUpstream, configmap

CONFIGMAPS = "/api/v1/namespaces/ns/configmaps"


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (500, "InternalError"),
        (503, "ServiceUnavailable"),
        (504, "Timeout"),
        (409, "Conflict"),
        (422, "Invalid"),
        (403, "Forbidden"),
        (404, "NotFound"),
        (410, "Expired"),
    ],
)
def test_a_status_fault_is_answered_as_the_real_servers_status(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream, code: int, reason: str
) -> None:
    proxy.faults.inject(verb="list", resource="configmaps", status=code, message="injected")
    answer = client.get(CONFIGMAPS)
    assert answer.status == code
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "injected",
        "reason": reason,
        "code": code,
    }
    assert upstream.requests == []  # the request never reached the server


def test_429_carries_retry_after_in_its_header_and_details(client: Client, proxy: ApiProxy) -> None:
    proxy.faults.inject(verb="list", status=429, retry_after=3)
    answer = client.get(CONFIGMAPS)
    assert answer.status == 429
    assert answer.headers["Retry-After"] == "3"
    body = answer.json()
    assert body["reason"] == "TooManyRequests"
    assert body["details"]["retryAfterSeconds"] == 3


def test_a_fault_without_a_message_names_its_rule(client: Client, proxy: ApiProxy) -> None:
    rule = proxy.faults.inject(status=500)
    assert client.get(CONFIGMAPS).json()["message"] == f"injected fault {rule.id}"


def test_commit_forwards_the_write_then_answers_the_error(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream
) -> None:
    proxy.faults.inject(verb="create", resource="configmaps", status=500, commit=True, times=1)
    answer = client.request("POST", CONFIGMAPS, body=configmap("a"))
    assert answer.status == 500 and answer.json()["reason"] == "InternalError"
    assert ("ns", "a") in upstream.objects  # the write landed
    assert proxy.counter.count(verb="create", code=500) == 1
    assert client.get(f"{CONFIGMAPS}/a").status == 200  # and the connection serves on


def test_commit_on_a_read_answers_without_forwarding(
    client: Client, proxy: ApiProxy, upstream: FakeUpstream
) -> None:
    proxy.faults.inject(verb="list", status=503, commit=True)
    assert client.get(CONFIGMAPS).status == 503
    assert upstream.requests == []


def test_a_delay_holds_the_request_back_then_forwards_it(client: Client, proxy: ApiProxy) -> None:
    proxy.faults.inject(verb="list", delay=0.3, times=1)
    started = time.monotonic()
    assert client.get(CONFIGMAPS).status == 200
    assert time.monotonic() - started >= 0.3


def answer_in_thread(client: Client, path: str) -> tuple[threading.Thread, list[Answer]]:
    answers: list[Answer] = []
    thread = threading.Thread(target=lambda: answers.append(client.get(path)))
    thread.start()
    return thread, answers


def test_a_hung_request_waits_until_released(client: Client, proxy: ApiProxy) -> None:
    rule = proxy.faults.inject(verb="list", hang=True, times=1)
    thread, answers = answer_in_thread(client, CONFIGMAPS)
    time.sleep(0.3)
    assert answers == [] and rule.fired == 1
    assert proxy.faults.release(rule.id) == 1
    thread.join(timeout=5)
    assert [a.status for a in answers] == [200]


def test_a_hung_request_goes_on_after_its_hang_timeout(client: Client, proxy: ApiProxy) -> None:
    proxy.faults.inject(verb="list", hang=True, hang_timeout=0.3, status=504)
    started = time.monotonic()
    assert client.get(CONFIGMAPS).status == 504
    assert 0.3 <= time.monotonic() - started < 3


def test_clearing_the_rules_releases_hung_requests(client: Client, proxy: ApiProxy) -> None:
    proxy.faults.inject(verb="list", hang=True, status=503)
    thread, answers = answer_in_thread(client, CONFIGMAPS)
    time.sleep(0.2)
    proxy.faults.clear()
    thread.join(timeout=5)
    assert [a.status for a in answers] == [503]


def test_stopping_the_proxy_releases_hung_requests(proxy: ApiProxy, ca_file: str) -> None:
    proxy.faults.inject(hang=True)
    hung = Client(proxy.url, ca_file)

    def request() -> None:
        with contextlib.suppress(OSError, http.client.HTTPException):
            hung.get(CONFIGMAPS)  # released, it may be answered or cut off: either way it ends

    thread = threading.Thread(target=request)
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    proxy.stop()
    thread.join(timeout=5)
    assert not thread.is_alive() and time.monotonic() - started < 5


def test_times_limits_how_often_a_rule_fires(client: Client, proxy: ApiProxy) -> None:
    rule = proxy.faults.inject(verb="list", status=500, times=2)
    assert [client.get(CONFIGMAPS).status for _ in range(3)] == [500, 500, 200]
    assert rule.fired == 2


def test_a_probability_fires_on_that_share_of_requests(pki: Pki, upstream: FakeUpstream) -> None:
    cert = pki.serving("proxy")
    with ApiProxy(
        upstream.url, ca_file=pki.ca_file, certfile=cert.certfile, keyfile=cert.keyfile, fault_seed=7
    ).start() as proxy:
        rule = proxy.faults.inject(status=500, probability=0.3)
        c = Client(proxy.url, pki.ca_file)
        failed = sum(c.get(CONFIGMAPS).status == 500 for _ in range(200))
        c.close()
    assert failed == rule.fired
    assert 35 <= failed <= 85


def test_rules_pick_clients_by_user_agent_prefix_and_spare_excluded_ones(
    proxy: ApiProxy, ca_file: str
) -> None:
    proxy.faults.inject(status=500, user_agent="llmisvc-router/", exclude_user_agent="llmisvc-router/watcher")
    worker = Client(proxy.url, ca_file, agent="llmisvc-router/worker")
    watcher = Client(proxy.url, ca_file, agent="llmisvc-router/watcher")
    test = Client(proxy.url, ca_file, agent="integration-test")
    assert [c.get(CONFIGMAPS).status for c in (worker, watcher, test)] == [500, 200, 200]
    for c in (worker, watcher, test):
        c.close()


def test_requests_outside_the_resource_api_are_never_faulted(client: Client, proxy: ApiProxy) -> None:
    proxy.faults.inject(status=500)
    assert client.get("/big?size=10").status == 200
    assert client.get("/_proxy/healthz").status == 200


def test_the_first_matching_rule_fires(client: Client, proxy: ApiProxy) -> None:
    proxy.faults.inject(verb="get", status=404)
    first = proxy.faults.inject(verb="list", status=503, times=1)
    second = proxy.faults.inject(verb="list", status=500)
    assert [client.get(CONFIGMAPS).status for _ in range(2)] == [503, 500]
    assert (first.fired, second.fired) == (1, 1)


def test_rules_cross_process_boundaries_as_plain_data() -> None:
    rule = FaultRule(verb="create,update", resource="httproutes", status=409, times=2, id="r1")
    again = FaultRule.from_dict({k: v for k, v in rule.to_dict().items() if k != "fired"})
    assert again == rule
    with pytest.raises(ValueError, match="unknown fault rule fields"):
        FaultRule.from_dict({"verbs": "get"})


@pytest.mark.parametrize(
    "fields",
    [{"times": "2"}, {"status": 500.5}, {"delay": True}, {"hang": 1}, {"verb": ["get"]}],
    ids=["times-as-text", "status-as-float", "delay-as-bool", "hang-as-number", "verb-as-list"],
)
def test_a_rule_from_json_with_a_field_of_the_wrong_type_is_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="must be"):
        FaultRule.from_dict(fields)
