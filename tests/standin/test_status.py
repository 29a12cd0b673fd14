"""The status subresource: /status writes change only status; main-resource writes keep stored status."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.builders.kube import deployment

from .helpers import GATEWAY, gateway, http, llmisvc

SERVING = ("serving.kserve.io", "v1alpha2")


def test_status_subresource_writes_change_only_status(custom):
    custom.create_namespaced_custom_object(*SERVING, "default", "llminferenceservices", llmisvc("m"))
    body = {"spec": {"changed": True}, "metadata": {"labels": {"x": "y"}}, "status": {"url": "http://m"}}
    written = custom.patch_namespaced_custom_object_status(
        *SERVING, "default", "llminferenceservices", "m", body
    )
    assert written["status"] == {"url": "http://m"}
    assert written["spec"] == llmisvc("m")["spec"] and "labels" not in written["metadata"]


def test_main_resource_writes_keep_the_stored_status(custom):
    created = custom.create_namespaced_custom_object(
        *SERVING, "default", "llminferenceservices", llmisvc("m")
    )
    custom.patch_namespaced_custom_object_status(
        *SERVING, "default", "llminferenceservices", "m", {"status": {"url": "u"}}
    )
    patched = custom.patch_namespaced_custom_object(
        *SERVING,
        "default",
        "llminferenceservices",
        "m",
        {"status": {"url": "hacked"}, "spec": {"replicas": 3}},
    )
    assert patched["status"] == {"url": "u"} and patched["spec"]["replicas"] == 3
    current = custom.get_namespaced_custom_object(*SERVING, "default", "llminferenceservices", "m")
    replaced = custom.replace_namespaced_custom_object(
        *SERVING, "default", "llminferenceservices", "m", {**current, "status": {}}
    )
    assert replaced["status"] == {"url": "u"}
    assert created["metadata"]["uid"] == replaced["metadata"]["uid"]


def test_status_in_a_create_body_is_dropped_for_resources_with_a_status_subresource(custom):
    created = custom.create_namespaced_custom_object(
        *SERVING, "default", "llminferenceservices", {**llmisvc("m"), "status": {"url": "x"}}
    )
    assert "status" not in created


def test_status_replace_with_put(custom):
    created = custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("g"))
    changed_spec = {**created["spec"], "gatewayClassName": "other"}
    body = {**created, "spec": changed_spec, "status": {"addresses": [{"value": "1.2.3.4"}]}}
    replaced = custom.replace_namespaced_custom_object_status(*GATEWAY, "default", "gateways", "g", body)
    assert replaced["status"]["addresses"][0]["value"] == "1.2.3.4" and replaced["spec"] == created["spec"]


def test_a_resource_without_status_subresource_has_no_status_url(standin, core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    assert http(f"{standin.url}/api/v1/namespaces/default/configmaps/c/status")[0] == 404


def test_typed_deployment_status_round_trip(api_client):
    apps: Any = client.AppsV1Api(api_client)
    apps.create_namespaced_deployment("default", deployment("d"))
    apps.patch_namespaced_deployment_status("d", "default", {"status": {"readyReplicas": 2}})
    assert apps.read_namespaced_deployment_status("d", "default").status.ready_replicas == 2
