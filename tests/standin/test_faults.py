"""Fault injection (in-process API) and request counters."""

from __future__ import annotations

import threading
import time

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from apiserver_standin.faults import FaultInjector, FaultRule
from apiserver_standin.requestinfo import parse

from .helpers import GATEWAY, configmap, eventually, route


def test_a_rule_fires_the_given_number_of_times_then_stops(standin, core):
    rule = standin.faults.inject(verb="create", resource="configmaps", status=503, times=2)
    for _ in range(2):
        with pytest.raises(ApiException) as exc:
            core.create_namespaced_config_map("default", configmap("a"))
        assert exc.value.status == 503
    core.create_namespaced_config_map("default", configmap("a"))
    assert rule.fired == 2 and rule.exhausted


def test_a_rule_matches_on_group_namespace_name_and_subresource(standin, custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("a"))
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("b"))
    standin.faults.inject(
        verb="patch",
        group="gateway.networking.k8s.io",
        resource="httproutes",
        namespace="default",
        name="b",
        subresource="status",
        status=500,
    )
    custom.patch_namespaced_custom_object_status(
        *GATEWAY, "default", "httproutes", "a", {"status": {"parents": []}}
    )
    custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "b", {"spec": {"hostnames": ["h"]}}
    )
    with pytest.raises(ApiException) as exc:
        custom.patch_namespaced_custom_object_status(
            *GATEWAY, "default", "httproutes", "b", {"status": {"parents": []}}
        )
    assert exc.value.status == 500


def test_a_rule_matches_one_clients_requests_by_user_agent_prefix(standin, core):
    rule = standin.faults.inject(verb="create", resource="configmaps", user_agent="worker/", status=503)
    core.create_namespaced_config_map("default", configmap("a"))  # another client: not matched
    worker = standin.api_client("worker/1")
    try:
        with pytest.raises(ApiException) as exc:
            client.CoreV1Api(worker).create_namespaced_config_map("default", configmap("b"))  # type: ignore[arg-type]
    finally:
        worker.close()
    assert exc.value.status == 503 and rule.fired == 1


def test_a_probabilistic_rule_fires_for_some_requests_only():
    injector = FaultInjector(seed=7)
    injector.inject(verb="get", probability=0.5, status=500)
    info = parse("GET", "/api/v1/namespaces/default/configmaps/a", watch=False)
    fired = sum(injector.evaluate(info) is not None for _ in range(200))
    assert 60 < fired < 140


def test_a_committed_write_is_stored_even_though_the_client_is_told_it_failed(standin, custom):
    standin.faults.inject(verb="create", resource="httproutes", status=500, commit=True, times=1)
    with pytest.raises(ApiException) as exc:
        custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    assert exc.value.status == 500
    assert (
        custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")["metadata"]["name"] == "r"
    )


def test_an_uncommitted_failed_write_stores_nothing(standin, custom):
    standin.faults.inject(verb="create", resource="httproutes", status=409, times=1)
    with pytest.raises(ApiException):
        custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    assert custom.list_namespaced_custom_object(*GATEWAY, "default", "httproutes")["items"] == []


def test_a_delay_slows_the_matching_requests(standin, core):
    standin.faults.inject(verb="list", resource="configmaps", delay=0.3, times=1)
    started = time.monotonic()
    core.list_namespaced_config_map("default")
    assert time.monotonic() - started >= 0.3
    started = time.monotonic()
    core.list_namespaced_config_map("default")
    assert time.monotonic() - started < 0.3


def test_a_hanging_request_waits_until_released(standin, core):
    rule = standin.faults.inject(verb="get", resource="configmaps", hang=True, times=1)
    core.create_namespaced_config_map("default", configmap("a"))
    result: list[str] = []
    reader = threading.Thread(
        target=lambda: result.append(core.read_namespaced_config_map("a", "default").metadata.name)
    )
    reader.start()
    time.sleep(0.3)
    assert result == [] and reader.is_alive()
    standin.faults.release(rule.id)
    reader.join(timeout=5)
    assert result == ["a"]


def test_rules_can_be_listed_removed_and_cleared(standin):
    first = standin.faults.inject(verb="get", status=500)
    standin.faults.add(FaultRule(verb="list", status=500))
    assert [r.verb for r in standin.faults.rules()] == ["get", "list"]
    assert standin.faults.remove(first.id) and not standin.faults.remove(first.id)
    standin.faults.clear()
    assert standin.faults.rules() == []


def test_unknown_rule_fields_are_rejected():
    with pytest.raises(ValueError):
        FaultRule.from_dict({"verb": "get", "colour": "red"})


def test_every_request_is_counted_by_verb_resource_and_code(standin, core, custom):
    standin.counter.reset()
    core.create_namespaced_config_map("default", configmap("a"))
    core.read_namespaced_config_map("a", "default")
    with pytest.raises(ApiException):
        core.read_namespaced_config_map("missing", "default")
    custom.list_namespaced_custom_object(*GATEWAY, "default", "httproutes")
    counter = standin.counter
    assert counter.count(verb="create", resource="configmaps", code=201) == 1
    assert counter.count(verb="get", resource="configmaps") == 2
    assert counter.count(verb="get", resource="configmaps", code=404) == 1
    assert counter.count(verb="list", group="gateway.networking.k8s.io", resource="httproutes") == 1
    assert counter.writes() == 1 and counter.writes(resource="httproutes") == 0
    snapshot = counter.snapshot()
    assert snapshot["total"] == 4
    row = next(r for r in snapshot["counts"] if r["verb"] == "create")
    assert (row["resource"], row["code"], row["count"]) == ("configmaps", 201, 1)
    assert row["user_agent"].startswith("OpenAPI-Generator")
    records = counter.records(verb="get", code=404)
    assert [r.name for r in records] == ["missing"] and records[0].user_agent
    counter.reset()
    assert counter.count() == 0


def test_a_no_op_reconcile_pass_can_be_asserted_to_write_nothing(standin, custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    standin.counter.reset()
    custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")
    assert standin.counter.writes() == 0
    eventually(lambda: standin.counter.count(verb="get") == 1)
