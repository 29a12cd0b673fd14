"""Events through two APIs over one store: events.k8s.io/v1 and core v1 convert as a real server does.

A write through either API is read through both with that API's field names, and core v1 Events
take the field selectors ``kubectl describe`` sends (``involvedObject.*``), as well as type/reason.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from kubernetes import client

from apiserver_standin.kubeconfig import write_kubeconfig
from tests.tools import KUBECTL

from .helpers import configmap, http, new_watch

REGARDING = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "cm", "uid": "u-1"}


def events_event(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "llmisvc-router",
        "reportingInstance": "router-0",
        "action": "Reconcile",
        "reason": "Created",
        "type": "Normal",
        "note": "created HTTPRoute default/cm",
        "regarding": REGARDING,
        **fields,
    }


def core_event(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": REGARDING,
        "reason": "Failed",
        "message": "it failed",
        "type": "Warning",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:05:00Z",
        "count": 4,
        **fields,
    }


def core_url(standin: Any, name: str = "") -> str:
    return f"{standin.url}/api/v1/namespaces/default/events" + (f"/{name}" if name else "")


def events_url(standin: Any, name: str = "") -> str:
    return f"{standin.url}/apis/events.k8s.io/v1/namespaces/default/events" + (f"/{name}" if name else "")


def test_an_event_written_through_events_k8s_io_reads_through_core_v1_with_core_field_names(standin):
    series = {"count": 3, "lastObservedTime": "2026-01-01T00:02:00.000000Z"}
    code, _, _ = http(events_url(standin), "POST", events_event("e1", series=series))
    assert code == 201
    code, event, _ = http(core_url(standin, "e1"))
    assert code == 200
    assert event["apiVersion"] == "v1"
    assert event["involvedObject"] == REGARDING
    assert event["message"] == "created HTTPRoute default/cm"
    assert event["reportingComponent"] == "llmisvc-router"
    assert event["reportingInstance"] == "router-0"
    assert event["series"] == series
    assert (event["reason"], event["type"], event["action"]) == ("Created", "Normal", "Reconcile")
    assert event["eventTime"] == "2026-01-01T00:00:00.000000Z"
    assert not {"regarding", "note", "reportingController"} & event.keys()


def test_an_event_written_through_core_v1_reads_through_events_k8s_io_with_its_field_names(standin):
    assert http(core_url(standin), "POST", core_event("e2"))[0] == 201
    code, event, _ = http(events_url(standin, "e2"))
    assert code == 200
    assert event["apiVersion"] == "events.k8s.io/v1"
    assert event["regarding"] == REGARDING
    assert event["note"] == "it failed"
    assert event["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert event["deprecatedFirstTimestamp"] == "2026-01-01T00:00:00Z"
    assert event["deprecatedLastTimestamp"] == "2026-01-01T00:05:00Z"
    assert event["deprecatedCount"] == 4
    assert not {"involvedObject", "message", "source", "count", "firstTimestamp"} & event.keys()


def test_a_patch_through_events_k8s_io_is_seen_through_core_v1(standin):
    http(events_url(standin), "POST", events_event("e3"))
    patch = {"series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}, "note": "again"}
    code, patched, _ = http(events_url(standin, "e3"), "PATCH", patch, "application/merge-patch+json")
    assert code == 200
    assert (patched["note"], patched["series"]["count"]) == ("again", 2)
    _, event, _ = http(core_url(standin, "e3"))
    assert (event["message"], event["series"]["count"]) == ("again", 2)
    assert event["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]


def test_both_apis_list_the_same_events_and_a_delete_through_one_removes_it_from_both(standin):
    http(events_url(standin), "POST", events_event("e4"))
    http(core_url(standin), "POST", core_event("e5"))
    names = {api: [e["metadata"]["name"] for e in http(url(standin))[1]["items"]] for api, url in
             (("core", core_url), ("events", events_url))}  # fmt: skip
    assert names == {"core": ["e4", "e5"], "events": ["e4", "e5"]}
    assert http(core_url(standin, "e4"), "DELETE")[0] == 200
    assert http(events_url(standin, "e4"))[0] == 404


def test_a_core_v1_watch_sees_events_written_through_events_k8s_io_in_core_form(standin, api_client):
    rv = http(core_url(standin))[1]["metadata"]["resourceVersion"]
    http(events_url(standin), "POST", events_event("watched"))
    http(events_url(standin), "POST", events_event("elsewhere", regarding={**REGARDING, "name": "other"}))
    w = new_watch()
    stream = w.stream(
        client.CoreV1Api(api_client).list_namespaced_event,
        "default",
        resource_version=rv,
        field_selector="involvedObject.name=cm",
        timeout_seconds=2,
    )
    seen = [(e["type"], e["raw_object"]) for e in stream]
    assert [(kind, obj["metadata"]["name"]) for kind, obj in seen] == [("ADDED", "watched")]
    assert seen[0][1]["message"] == "created HTTPRoute default/cm" and "note" not in seen[0][1]


def _names(url: str, selector: str) -> set[str]:
    code, body, _ = http(f"{url}?fieldSelector={selector}")
    assert code == 200, body
    return {item["metadata"]["name"] for item in body["items"]}


@pytest.fixture
def three_events(standin):
    other = {**REGARDING, "name": "other", "uid": "u-2", "kind": "Service"}
    http(events_url(standin), "POST", events_event("router-created"))
    http(
        events_url(standin),
        "POST",
        events_event("router-warn", type="Warning", reason="Refused", regarding=other),
    )
    http(core_url(standin), "POST", core_event("kubelet-failed"))
    return standin


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        # what kubectl describe sends (kubectl 1.32: name, namespace, kind and uid)
        (
            "involvedObject.name=cm,involvedObject.namespace=default,involvedObject.kind=ConfigMap,"
            "involvedObject.uid=u-1",
            {"router-created", "kubelet-failed"},
        ),
        ("involvedObject.apiVersion=v1,involvedObject.kind!=ConfigMap", {"router-warn"}),
        ("type=Warning", {"router-warn", "kubelet-failed"}),
        ("reason=Created", {"router-created"}),
        ("reportingComponent=llmisvc-router", {"router-created", "router-warn"}),
        ("source=kubelet", {"kubelet-failed"}),
        ("metadata.name=router-warn,type=Warning", {"router-warn"}),
    ],
)
def test_core_v1_events_take_the_involved_object_type_and_reason_field_selectors(
    three_events, selector, names
):
    assert _names(core_url(three_events), selector) == names


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        ("regarding.name=cm,regarding.uid=u-1", {"router-created", "kubelet-failed"}),
        ("reportingController=llmisvc-router,type=Warning", {"router-warn"}),
        ("reason!=Created", {"router-warn", "kubelet-failed"}),
    ],
)
def test_events_k8s_io_takes_the_same_field_selectors_under_its_own_names(three_events, selector, names):
    assert _names(events_url(three_events), selector) == names


@pytest.mark.parametrize(
    ("url", "label"),
    [(core_url, "regarding.name"), (events_url, "involvedObject.name"), (events_url, "source")],
)
def test_each_events_api_refuses_the_other_apis_field_labels(standin, url, label):
    code, body, _ = http(f"{url(standin)}?fieldSelector={label}=x")
    assert code == 400
    assert f'field label not supported: "{label}"' in body["message"]


def test_other_resources_do_not_take_event_field_labels(standin):
    code, _, _ = http(f"{standin.url}/api/v1/namespaces/default/configmaps?fieldSelector=type=Warning")
    assert code == 400


def kubectl(standin: Any, tmp_path: Any, *args: str) -> str:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", standin.url)
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"), *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_kubectl_describe_lists_the_events_written_through_events_k8s_io(standin, core, tmp_path):
    created = core.create_namespaced_config_map("default", configmap("cm"))
    regarding = {**REGARDING, "uid": created.metadata.uid}
    series = {"count": 3, "lastObservedTime": "2026-01-01T00:02:00.000000Z"}
    http(events_url(standin), "POST", events_event("cm.1", regarding=regarding, series=series))
    http(events_url(standin), "POST", events_event("cm.2", regarding=REGARDING, note="an older cm"))
    events = kubectl(standin, tmp_path, "describe", "configmap", "cm").split("Events:", 1)[1]
    assert "Normal  Created" in events
    assert "(x3 over" in events
    assert "llmisvc-router  created HTTPRoute default/cm" in events
    assert "an older cm" not in events  # another object of the same name (another uid)


@pytest.mark.parametrize("resource", ["events", "events.events.k8s.io"])
def test_kubectl_get_events_prints_the_event_columns_whichever_api(three_events, tmp_path, resource):
    http(
        events_url(three_events),
        "POST",
        events_event("series", series={"count": 5, "lastObservedTime": "2026-01-01T00:09:00.000000Z"}),
    )
    out = kubectl(three_events, tmp_path, "get", resource, "-o", "wide", "--sort-by", ".metadata.name")
    rows = [line.split() for line in out.splitlines()]
    assert rows[0] == [
        "LAST", "SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST", "SEEN",
        "COUNT", "NAME",
    ]  # fmt: skip
    by_name = {row[-1]: row for row in rows[1:]}
    # deprecated source, first/last timestamps and count of a core Event
    assert by_name["kubelet-failed"][1:5] == ["Warning", "Failed", "configmap/cm", "kubelet,"]
    assert by_name["kubelet-failed"][-2] == "4"
    # reporting controller and instance as the source; a singleton counts 1; a series its count
    assert by_name["router-created"][4:6] == ["llmisvc-router,", "router-0"]
    assert by_name["router-created"][-2] == "1"
    assert by_name["series"][-2] == "5"
    assert by_name["router-warn"][3] == "service/other"
