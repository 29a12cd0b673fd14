"""Discovery and the registry of installed resources (CRDs installed and removed at run time)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from apiserver_standin.testing import running_apiserver
from llmisvc_devstack.controlplane import crds
from tests.builders import inference_pool

from .helpers import dynamic_client, gateway_class, http, llmisvc, route


def test_discovery_serves_version_core_and_group_documents(standin):
    assert http(f"{standin.url}/version")[1]["gitVersion"].startswith("v1.")
    assert http(f"{standin.url}/api")[1]["versions"] == ["v1"]
    core = {r["name"] for r in http(f"{standin.url}/api/v1")[1]["resources"]}
    assert {"namespaces", "services", "configmaps", "secrets", "serviceaccounts", "events"} <= core
    groups = {g["name"]: g for g in http(f"{standin.url}/apis")[1]["groups"]}
    assert {"apps", "apiextensions.k8s.io", "serving.kserve.io", "inference.networking.x-k8s.io"} <= set(
        groups
    )
    apps = http(f"{standin.url}/apis/apps")[1]
    assert apps["kind"] == "APIGroup" and apps["preferredVersion"]["groupVersion"] == "apps/v1"
    resources = http(f"{standin.url}/apis/serving.kserve.io/v1alpha2")[1]["resources"]
    assert {r["name"] for r in resources} == {
        "llminferenceservices",
        "llminferenceservices/status",
        "llminferenceserviceconfigs",
        "llminferenceserviceconfigs/status",
    }


def test_typed_client_reads_the_version(api_client):
    assert client.VersionApi(api_client).get_code().major == "1"


def test_only_the_selected_project_crds_are_installed():
    with running_apiserver(crds="pool-v1") as server:
        groups = {g["name"] for g in http(f"{server.url}/apis")[1]["groups"]}
        assert "inference.networking.k8s.io" in groups
        assert (
            not {"gateway.networking.k8s.io", "inference.networking.x-k8s.io", "serving.kserve.io"} & groups
        )
        custom = client.CustomObjectsApi(server.client)
        with pytest.raises(ApiException) as missing:
            custom.create_namespaced_custom_object(
                "gateway.networking.k8s.io", "v1", "default", "httproutes", route("r")
            )
        assert missing.value.status == 404
        custom.create_namespaced_custom_object(
            "inference.networking.k8s.io", "v1", "default", "inferencepools", inference_pool("p")
        )


def test_writes_to_a_resource_that_is_not_installed_are_404_like_a_real_server():
    with running_apiserver(crds="none") as server:
        code, body, _ = http(
            f"{server.url}/apis/serving.kserve.io/v1alpha2/namespaces/default/llminferenceservices",
            "POST",
            llmisvc("x"),
        )
        assert code == 404
        assert body["kind"] == "Status" and body["reason"] == "NotFound"
        assert http(f"{server.url}/apis/serving.kserve.io")[0] == 404


def test_removing_a_crd_at_run_time_uninstalls_it_and_its_objects(standin, custom):
    custom.create_namespaced_custom_object(
        "serving.kserve.io", "v1alpha2", "default", "llminferenceservices", llmisvc("a")
    )
    assert standin.remove_crds("kserve") == [
        "llminferenceservices.serving.kserve.io",
        "llminferenceserviceconfigs.serving.kserve.io",
    ]
    assert http(f"{standin.url}/apis/serving.kserve.io/v1alpha2")[0] == 404
    with pytest.raises(ApiException) as missing:
        custom.list_namespaced_custom_object(
            "serving.kserve.io", "v1alpha2", "default", "llminferenceservices"
        )
    assert missing.value.status == 404
    standin.install_crds("llmisvc")
    listed = custom.list_namespaced_custom_object(
        "serving.kserve.io", "v1alpha2", "default", "llminferenceservices"
    )
    assert listed["items"] == []  # deleting a CRD deletes its objects


def test_creating_a_crd_object_installs_its_group_and_deleting_it_uninstalls():
    with running_apiserver(crds="none") as server:
        ext: Any = client.ApiextensionsV1Api(server.client)
        manifest = crds.manifest(crds.select("gatewayclass")[0])
        created = ext.create_custom_resource_definition(manifest)
        assert {c.type for c in created.status.conditions} >= {"Established", "NamesAccepted"}
        assert (
            http(f"{server.url}/apis/gateway.networking.k8s.io/v1")[1]["resources"][0]["namespaced"] is False
        )
        client.CustomObjectsApi(server.client).create_cluster_custom_object(
            "gateway.networking.k8s.io", "v1", "gatewayclasses", gateway_class("istio")
        )
        ext.delete_custom_resource_definition(manifest["metadata"]["name"])
        assert http(f"{server.url}/apis/gateway.networking.k8s.io")[0] == 404


def test_a_crd_whose_name_is_not_plural_dot_group_is_invalid(standin):
    manifest = crds.manifest(crds.select("httproute")[0])
    manifest["metadata"]["name"] = "wrong.example.com"
    code, body, _ = http(
        f"{standin.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "POST", manifest
    )
    assert code == 422 and body["reason"] == "Invalid"


def test_dynamic_client_discovers_and_uses_custom_resources(standin):
    dyn = dynamic_client(standin.client)
    routes = dyn.resources.get(api_version="gateway.networking.k8s.io/v1", kind="HTTPRoute")
    routes.create(
        body=route("r"),
        namespace="default",
    )
    assert [r.metadata.name for r in routes.get(namespace="default").items] == ["r"]
    pools = dyn.resources.get(api_version="inference.networking.x-k8s.io/v1alpha2", kind="InferencePool")
    assert pools.namespaced is True


def test_openapi_v3_advertises_server_side_field_validation(standin):
    root = http(f"{standin.url}/openapi/v3")[1]["paths"]
    doc = http(standin.url + root["apis/gateway.networking.k8s.io/v1"]["serverRelativeURL"])[1]
    patch = doc["paths"]["/apis/gateway.networking.k8s.io/v1/namespaces/{namespace}/httproutes/{name}"][
        "patch"
    ]
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert patch["x-kubernetes-group-version-kind"]["kind"] == "HTTPRoute"
