"""Verbs: create, get, list (pagination, all namespaces), replace, dry-run; through typed and custom APIs."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from .helpers import GATEWAY, configmap, gateway_class, http, llmisvc, route


def test_create_answers_201_with_uid_timestamp_resource_version_and_generation_1(standin, core):
    code, body, _ = http(f"{standin.url}/api/v1/namespaces/default/configmaps", "POST", configmap("a", k="v"))
    assert code == 201
    meta = body["metadata"]
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z") and int(meta["resourceVersion"]) > 0
    assert meta["generation"] == 1 and meta["namespace"] == "default"
    assert core.read_namespaced_config_map("a", "default").data == {"k": "v"}


def test_create_of_an_existing_name_is_409_already_exists(core):
    core.create_namespaced_config_map("default", configmap("a"))
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("default", configmap("a"))
    assert exc.value.status == 409
    assert '"reason":"AlreadyExists"' in str(exc.value.body).replace(" ", "")


def test_generate_name_gives_each_object_a_distinct_suffixed_name(custom):
    body = {**route(""), "metadata": {"generateName": "route-"}}
    names = {
        custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", body)["metadata"]["name"]
        for _ in range(5)
    }
    assert len(names) == 5 and all(n.startswith("route-") and len(n) == 11 for n in names)


def test_list_has_the_list_kind_and_a_resource_version(custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r1"))
    listed = custom.list_namespaced_custom_object(*GATEWAY, "default", "httproutes")
    assert listed["kind"] == "HTTPRouteList" and listed["apiVersion"] == "gateway.networking.k8s.io/v1"
    assert int(listed["metadata"]["resourceVersion"]) >= int(
        listed["items"][0]["metadata"]["resourceVersion"]
    )


def test_list_pages_with_limit_and_continue_cover_every_object_once(core):
    for i in range(7):
        core.create_namespaced_config_map("default", configmap(f"cm-{i}"))
    seen, token, pages = [], None, 0
    while True:
        page = core.list_namespaced_config_map("default", limit=3, _continue=token)
        seen += [item.metadata.name for item in page.items]
        pages += 1
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count > 0
    assert seen == [f"cm-{i}" for i in range(7)] and pages == 3


def test_list_without_namespace_spans_all_namespaces(core, custom):
    core.create_namespace({"metadata": {"name": "other"}})
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("a"))
    custom.create_namespaced_custom_object(*GATEWAY, "other", "httproutes", route("b"))
    items = custom.list_cluster_custom_object(*GATEWAY, "httproutes")["items"]
    assert {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items} == {
        ("default", "a"),
        ("other", "b"),
    }


def test_replace_of_a_custom_resource_requires_a_resource_version(custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    with pytest.raises(ApiException) as exc:
        custom.replace_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r", route("r"))
    assert exc.value.status == 422


def test_replace_with_a_stale_resource_version_is_409_conflict(custom):
    created = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    fresh = custom.replace_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {**created, "spec": {**created["spec"], "hostnames": ["a"]}}
    )
    assert fresh["spec"]["hostnames"] == ["a"]
    with pytest.raises(ApiException) as exc:
        custom.replace_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r", created)
    assert exc.value.status == 409 and "the object has been modified" in str(exc.value.body)


def test_replace_of_a_missing_object_is_404(core):
    with pytest.raises(ApiException) as exc:
        core.replace_namespaced_config_map("nope", "default", configmap("nope"))
    assert exc.value.status == 404


def test_dry_run_create_update_and_patch_validate_but_store_nothing(standin, custom):
    rv_before = standin.store.current_rv()
    dry = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"), dry_run="All")
    assert dry["metadata"]["name"] == "r"
    with pytest.raises(ApiException):
        custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")
    stored = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    rv = stored["metadata"]["resourceVersion"]
    changed = {**stored, "spec": {**stored["spec"], "hostnames": ["dry"]}}
    assert (
        custom.replace_namespaced_custom_object(
            *GATEWAY, "default", "httproutes", "r", changed, dry_run="All"
        )["metadata"]["generation"]
        == 2
    )
    patched = custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"spec": {"hostnames": ["patched"]}}, dry_run="All"
    )
    assert patched["spec"]["hostnames"] == ["patched"]
    current = custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")
    assert current["metadata"]["resourceVersion"] == rv and current["spec"] == stored["spec"]
    assert standin.store.current_rv() == rv_before + 1
    with pytest.raises(ApiException) as exc:
        custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"), dry_run="All")
    assert exc.value.status == 409  # dry run still validates


def test_cluster_scoped_resources_have_no_namespace(custom):
    created = custom.create_cluster_custom_object(
        *GATEWAY,
        "gatewayclasses",
        {**gateway_class("istio"), "metadata": {"name": "istio", "namespace": "x"}},
    )
    assert "namespace" not in created["metadata"]
    assert custom.get_cluster_custom_object(*GATEWAY, "gatewayclasses", "istio")["kind"] == "GatewayClass"


def test_typed_apps_api_round_trips_a_deployment(api_client):
    apps: Any = client.AppsV1Api(api_client)
    body = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    apps.create_namespaced_deployment("default", body)
    assert apps.read_namespaced_deployment("d", "default").spec.template.spec.containers[0].image == "i"
    assert [d.metadata.name for d in apps.list_deployment_for_all_namespaces().items] == ["d"]


def test_llminferenceservice_crud_through_custom_objects(custom):
    group = ("serving.kserve.io", "v1alpha2")
    custom.create_namespaced_custom_object(*group, "default", "llminferenceservices", llmisvc("m"))
    got = custom.get_namespaced_custom_object(*group, "default", "llminferenceservices", "m")
    assert got["kind"] == "LLMInferenceService"
    custom.delete_namespaced_custom_object(*group, "default", "llminferenceservices", "m")
    assert custom.list_namespaced_custom_object(*group, "default", "llminferenceservices")["items"] == []
