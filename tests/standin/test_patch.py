"""Patches: JSON merge (RFC 7386), JSON patch (RFC 6902), strategic merge, server-side apply."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from apiserver_standin.errors import ApiError
from apiserver_standin.patches import json_patch, merge_patch, strategic_merge
from apiserver_standin.server import StandinApiServer

from .helpers import GATEWAY, configmap, dynamic_client, http, route


@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [  # examples from RFC 7386 appendix A
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ],
)
def test_merge_patch_follows_rfc_7386(target, patch, result):
    assert merge_patch(target, patch) == result


def test_json_patch_applies_each_operation_and_leaves_the_input_alone():
    doc = {"a": {"b": [1, 2]}, "c": "x"}
    ops = [
        {"op": "add", "path": "/a/b/-", "value": 3},
        {"op": "replace", "path": "/c", "value": "y"},
        {"op": "copy", "from": "/c", "path": "/d"},
        {"op": "move", "from": "/d", "path": "/e~1f"},
        {"op": "remove", "path": "/a/b/0"},
        {"op": "test", "path": "/a/b", "value": [2, 3]},
    ]
    assert json_patch(doc, ops) == {"a": {"b": [2, 3]}, "c": "y", "e/f": "y"}
    assert doc == {"a": {"b": [1, 2]}, "c": "x"}


def test_json_patch_failed_test_or_missing_path_is_422():
    for ops in ([{"op": "test", "path": "/a", "value": 2}], [{"op": "remove", "path": "/zz"}]):
        with pytest.raises(ApiError) as exc:
            json_patch({"a": 1}, ops)
        assert exc.value.code == 422


def test_strategic_merge_merges_lists_of_named_items_and_drops_directives():
    live = {
        "containers": [
            {"name": "a", "image": "1", "ports": [{"containerPort": 80}]},
            {"name": "b", "image": "1"},
        ]
    }
    patch = {
        "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
        "containers": [{"name": "a", "image": "2"}],
    }
    assert strategic_merge(live, patch) == {
        "containers": [
            {"name": "a", "image": "2", "ports": [{"containerPort": 80}]},
            {"name": "b", "image": "1"},
        ]
    }
    assert (
        strategic_merge(live, {"containers": [{"name": "b", "$patch": "delete"}]})["containers"][0]["name"]
        == "a"
    )


def test_merge_patch_through_the_api_merges_maps_and_null_deletes(custom):
    custom.create_namespaced_custom_object(
        *GATEWAY,
        "default",
        "httproutes",
        {**route("r"), "metadata": {"name": "r", "labels": {"a": "1", "b": "2"}}},
    )
    patched = custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"metadata": {"labels": {"a": None, "c": "3"}}}
    )
    assert patched["metadata"]["labels"] == {"b": "2", "c": "3"}


def test_json_patch_through_the_api_with_a_failed_test_is_422(standin, custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    url = f"{standin.url}/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/r"
    ok = [{"op": "add", "path": "/spec/hostnames", "value": ["h"]}]
    assert http(url, "PATCH", ok, "application/json-patch+json")[0] == 200
    code, body, _ = http(
        url,
        "PATCH",
        [{"op": "test", "path": "/spec/hostnames/0", "value": "other"}],
        "application/json-patch+json",
    )
    assert code == 422 and body["reason"] == "Invalid"


def test_typed_strategic_merge_patch_keeps_unpatched_fields(core):
    core.create_namespaced_config_map("default", configmap("c", a="1", b="2"))
    assert core.patch_namespaced_config_map("c", "default", {"data": {"b": "3"}}).data == {"a": "1", "b": "3"}


def test_a_stale_resource_version_in_a_patch_body_is_409(custom):
    created = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"spec": {"hostnames": ["a"]}}
    )
    stale = {
        "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]},
        "spec": {"hostnames": ["b"]},
    }
    with pytest.raises(ApiException) as exc:
        custom.patch_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r", stale)
    assert exc.value.status == 409


def test_unknown_patch_content_type_is_415(standin, core):
    core.create_namespaced_config_map("default", configmap("c"))
    code, body, _ = http(
        f"{standin.url}/api/v1/namespaces/default/configmaps/c", "PATCH", {"data": {}}, "text/plain"
    )
    assert code == 415 and body["kind"] == "Status"


def test_server_side_apply_creates_then_merges_and_drops_fields_it_no_longer_applies(standin):
    dyn = dynamic_client(standin.client)
    routes = dyn.resources.get(api_version="gateway.networking.k8s.io/v1", kind="HTTPRoute")
    first = {**route("r"), "metadata": {"name": "r", "labels": {"owner": "me", "extra": "x"}}}
    created = routes.server_side_apply(body=first, namespace="default", field_manager="mgr").to_dict()
    assert created["metadata"]["labels"] == {"owner": "me", "extra": "x"}
    assert created["metadata"]["managedFields"][0]["manager"] == "mgr"
    # Another writer's field survives; the applier's dropped label disappears.
    routes.patch(
        body={"metadata": {"annotations": {"other": "y"}}},
        name="r",
        namespace="default",
        content_type="application/merge-patch+json",
    )
    second = {**route("r"), "metadata": {"name": "r", "labels": {"owner": "me"}}}
    applied = routes.server_side_apply(body=second, namespace="default", field_manager="mgr").to_dict()
    assert applied["metadata"]["labels"] == {"owner": "me"}
    assert applied["metadata"]["annotations"] == {"other": "y"}
    again = routes.server_side_apply(body=second, namespace="default", field_manager="mgr").to_dict()
    assert (
        again["metadata"]["resourceVersion"] == applied["metadata"]["resourceVersion"]
    )  # no-op apply writes nothing


def test_server_side_apply_without_field_manager_is_400(standin):
    url = f"{standin.url}/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/r"
    code, body, _ = http(url, "PATCH", route("r"), "application/apply-patch+yaml")
    assert code == 400 and body["reason"] == "BadRequest"


def test_strategic_merge_patch_of_a_custom_resource_is_415_as_on_a_real_server(standin, custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    routes = dynamic_client(standin.client).resources.get(
        api_version="gateway.networking.k8s.io/v1", kind="HTTPRoute"
    )
    with pytest.raises(Exception) as refused:  # the dynamic client's default patch is strategic
        routes.patch(body={"spec": {"hostnames": ["h"]}}, name="r", namespace="default")
    assert getattr(refused.value, "status", None) == 415
    body = json.loads(refused.value.body)  # type: ignore[attr-defined]
    assert (body["reason"], body["message"]) == (
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    )
    patched = routes.patch(
        body={"spec": {"hostnames": ["h"]}},
        name="r",
        namespace="default",
        content_type="application/merge-patch+json",
    )
    assert patched.spec.hostnames == ["h"] and patched.spec.parentRefs[0].name == "gw"


def test_server_side_apply_accepts_yaml_and_keeps_timestamps_as_strings(standin):
    url = f"{standin.url}/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/r"
    body = b"""
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r
  annotations:
    at: 2020-01-01T00:00:00Z
spec: {}
"""
    code, created, _ = http(f"{url}?fieldManager=yaml-user", "PATCH", body, "application/apply-patch+yaml")
    assert code == 201 and created["metadata"]["annotations"] == {"at": "2020-01-01T00:00:00Z"}


def apply_as(
    standin: StandinApiServer, manager: str, hostnames: list[str], force: bool = False
) -> tuple[int, Any]:
    url = f"{standin.url}/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/r"
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    body = {**route("r"), "spec": {**route("r")["spec"], "hostnames": hostnames}}
    code, answer, _ = http(url + query, "PATCH", body, "application/apply-patch+yaml")
    return code, answer


def test_server_side_apply_of_a_field_another_manager_owns_is_a_409_conflict(standin):
    assert apply_as(standin, "alice", ["a.example"])[0] == 201
    code, answer = apply_as(standin, "bob", ["b.example"])
    assert (code, answer["reason"]) == (409, "Conflict")
    assert answer["message"] == 'Apply failed with 1 conflict: conflict with "alice": .spec.hostnames'
    assert answer["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".spec.hostnames"}
    ]


def test_server_side_apply_with_force_takes_the_field_over(standin):
    apply_as(standin, "alice", ["a.example"])
    code, answer = apply_as(standin, "bob", ["b.example"], force=True)
    assert code == 200 and answer["spec"]["hostnames"] == ["b.example"]
    owners = {e["manager"]: e["fieldsV1"] for e in answer["metadata"]["managedFields"]}
    assert "f:hostnames" in owners["bob"]["f:spec"] and "f:hostnames" not in owners["alice"]["f:spec"]
    code, answer = apply_as(standin, "alice", ["a.example"])  # now bob's: alice conflicts with bob
    assert code == 409 and answer["message"].endswith('conflict with "bob": .spec.hostnames')


def test_server_side_apply_of_the_same_value_shares_the_field(standin):
    apply_as(standin, "alice", ["a.example"])
    assert apply_as(standin, "bob", ["a.example"])[0] == 200
