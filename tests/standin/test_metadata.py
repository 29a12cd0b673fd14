"""Server-set metadata: resourceVersion, generation, namespace from the URL, immutable system fields."""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from .helpers import GATEWAY, configmap, http, route


def test_generation_is_bumped_only_on_spec_changes(custom):
    created = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    assert created["metadata"]["generation"] == 1
    labelled = custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"metadata": {"labels": {"a": "b"}}}
    )
    assert labelled["metadata"]["generation"] == 1
    status = custom.patch_namespaced_custom_object_status(
        *GATEWAY, "default", "httproutes", "r", {"status": {"parents": []}}
    )
    assert status["metadata"]["generation"] == 1
    spec = custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"spec": {"hostnames": ["h"]}}
    )
    assert spec["metadata"]["generation"] == 2
    same = custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"spec": {"hostnames": ["h"]}}
    )
    assert same["metadata"]["generation"] == 2


def test_resource_version_increases_globally_across_resources(core, custom):
    a = core.create_namespaced_config_map("default", configmap("a")).metadata.resource_version
    b = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))["metadata"][
        "resourceVersion"
    ]
    c = core.patch_namespaced_config_map("a", "default", {"data": {"x": "1"}}).metadata.resource_version
    assert int(a) < int(b) < int(c)


def test_a_no_op_update_keeps_the_resource_version(custom):
    created = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    again = custom.replace_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r", created)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_the_namespace_comes_from_the_url(standin):
    body = configmap("a")
    code, created, _ = http(f"{standin.url}/api/v1/namespaces/team/configmaps", "POST", body)
    assert code == 201 and created["metadata"]["namespace"] == "team"


def test_a_body_namespace_other_than_the_url_namespace_is_400_bad_request(standin):
    body = {"metadata": {"name": "a", "namespace": "elsewhere"}}
    code, status, _ = http(f"{standin.url}/api/v1/namespaces/default/configmaps", "POST", body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )


def test_system_metadata_cannot_be_overwritten_by_an_update(custom):
    created = custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    forged = {
        **created,
        "metadata": {
            **created["metadata"],
            "uid": "forged",
            "generation": 99,
            "creationTimestamp": "2000-01-01T00:00:00Z",
        },
    }
    updated = custom.replace_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r", forged)
    for key in ("uid", "generation", "creationTimestamp"):
        assert updated["metadata"][key] == created["metadata"][key]


def test_an_invalid_name_is_422(core):
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("default", configmap("Not_Valid"))
    assert exc.value.status == 422
