"""Deletion: finalizers and deletionTimestamp, ownerReference cascade (GC), preconditions, collections."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from .helpers import GATEWAY, configmap, gateway, route


def owned_by(obj: dict[str, Any], *owners: dict[str, Any]) -> dict[str, Any]:
    refs = [
        {
            "apiVersion": o["apiVersion"],
            "kind": o["kind"],
            "name": o["metadata"]["name"],
            "uid": o["metadata"]["uid"],
        }
        for o in owners
    ]
    return {**obj, "metadata": {**obj["metadata"], "ownerReferences": refs}}


def names(custom: Any, plural: str) -> list[str]:
    return [
        i["metadata"]["name"]
        for i in custom.list_namespaced_custom_object(*GATEWAY, "default", plural)["items"]
    ]


def test_finalizers_hold_an_object_with_a_deletion_timestamp_until_they_are_removed(custom):
    body = {**route("r"), "metadata": {"name": "r", "finalizers": ["example.com/hold"]}}
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", body)
    marked = custom.delete_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")
    assert marked["metadata"]["deletionTimestamp"]
    held = custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")
    assert held["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
    with pytest.raises(ApiException) as exc:  # no new finalizers on an object being deleted
        custom.patch_namespaced_custom_object(
            *GATEWAY, "default", "httproutes", "r", {"metadata": {"finalizers": ["example.com/hold", "new"]}}
        )
    assert exc.value.status == 422
    custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"metadata": {"finalizers": None}}
    )
    with pytest.raises(ApiException) as gone:
        custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")
    assert gone.value.status == 404


def test_deleting_an_owner_deletes_its_dependents_transitively(core, custom):
    owner = custom.create_namespaced_custom_object(
        "serving.kserve.io", "v1alpha2", "default", "llminferenceservices", {"metadata": {"name": "m"}}
    )
    child = custom.create_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", owned_by(route("child"), owner)
    )
    grandchild = core.create_namespaced_config_map(
        "default", owned_by(configmap("grandchild") | {"apiVersion": "v1", "kind": "ConfigMap"}, child)
    )
    unrelated = core.create_namespaced_config_map("default", configmap("unrelated"))
    custom.delete_namespaced_custom_object(
        "serving.kserve.io", "v1alpha2", "default", "llminferenceservices", "m"
    )
    assert names(custom, "httproutes") == []
    remaining = [c.metadata.name for c in core.list_namespaced_config_map("default").items]
    assert remaining == [unrelated.metadata.name]
    assert grandchild.metadata.name not in remaining


def test_a_dependent_with_finalizers_is_marked_not_removed_by_the_cascade(custom):
    owner = custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("g"))
    body = owned_by(route("r"), owner)
    body["metadata"]["finalizers"] = ["hold"]
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", body)
    custom.delete_namespaced_custom_object(*GATEWAY, "default", "gateways", "g")
    assert custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")["metadata"][
        "deletionTimestamp"
    ]


def test_a_dependent_that_another_live_owner_holds_survives_without_the_deleted_owner(custom):
    a = custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("a"))
    b = custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("b"))
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", owned_by(route("r"), a, b))
    custom.delete_namespaced_custom_object(*GATEWAY, "default", "gateways", "a")
    refs = custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")["metadata"][
        "ownerReferences"
    ]
    assert [r["name"] for r in refs] == ["b"]


def test_orphan_propagation_keeps_dependents_and_strips_the_owner_reference(custom):
    owner = custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("g"))
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", owned_by(route("r"), owner))
    custom.delete_namespaced_custom_object(*GATEWAY, "default", "gateways", "g", propagation_policy="Orphan")
    kept = custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")
    assert "ownerReferences" not in kept["metadata"]


def test_a_delete_precondition_that_does_not_match_is_409(custom):
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", route("r"))
    options = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="someone-else"))
    with pytest.raises(ApiException) as exc:
        custom.delete_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r", body=options)
    assert exc.value.status == 409


def test_delete_of_a_missing_object_is_404(core):
    with pytest.raises(ApiException) as exc:
        core.delete_namespaced_config_map("nope", "default")
    assert exc.value.status == 404


def test_deletecollection_deletes_only_what_the_selector_matches(core):
    core.create_namespaced_config_map("default", configmap("a", {"app": "x"}))
    core.create_namespaced_config_map("default", configmap("b", {"app": "x"}))
    core.create_namespaced_config_map("default", configmap("c", {"app": "y"}))
    core.delete_collection_namespaced_config_map("default", label_selector="app=x")
    assert [c.metadata.name for c in core.list_namespaced_config_map("default").items] == ["c"]


def test_deleting_a_namespace_deletes_what_it_contains(core):
    core.create_namespace({"metadata": {"name": "team"}})
    core.create_namespaced_config_map("team", configmap("a"))
    core.create_namespaced_config_map("default", configmap("b"))
    core.delete_namespace("team")
    assert [c.metadata.name for c in core.list_config_map_for_all_namespaces().items] == ["b"]
