"""Deletion: finalizers and deletionTimestamp, ownerReference cascade (GC), preconditions, collections."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from .helpers import GATEWAY, configmap, eventually, gateway, route


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
    # The garbage collector works in the background: wait for the cascade, as on a real cluster.
    eventually(lambda: names(custom, "httproutes") == [])

    def remaining() -> list[str]:
        return [c.metadata.name for c in core.list_namespaced_config_map("default").items]

    eventually(lambda: remaining() == [unrelated.metadata.name])
    assert grandchild.metadata.name not in remaining()


def test_a_dependent_with_finalizers_is_marked_not_removed_by_the_cascade(custom):
    owner = custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("g"))
    body = owned_by(route("r"), owner)
    body["metadata"]["finalizers"] = ["hold"]
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", body)
    custom.delete_namespaced_custom_object(*GATEWAY, "default", "gateways", "g")
    marked = eventually(
        lambda: custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")["metadata"].get(
            "deletionTimestamp"
        )
    )
    assert marked


def test_a_dependent_that_another_live_owner_holds_survives_without_the_deleted_owner(custom):
    a = custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("a"))
    b = custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("b"))
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", owned_by(route("r"), a, b))
    custom.delete_namespaced_custom_object(*GATEWAY, "default", "gateways", "a")

    def owners() -> list[str]:
        meta = custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")["metadata"]
        return [r["name"] for r in meta["ownerReferences"]]

    eventually(lambda: owners() == ["b"])


def test_orphan_propagation_keeps_dependents_and_strips_the_owner_reference(custom):
    owner = custom.create_namespaced_custom_object(*GATEWAY, "default", "gateways", gateway("g"))
    custom.create_namespaced_custom_object(*GATEWAY, "default", "httproutes", owned_by(route("r"), owner))
    custom.delete_namespaced_custom_object(*GATEWAY, "default", "gateways", "g", propagation_policy="Orphan")
    kept = eventually(
        lambda: (
            "ownerReferences"
            not in custom.get_namespaced_custom_object(*GATEWAY, "default", "httproutes", "r")["metadata"]
        )
    )
    assert kept


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
    eventually(lambda: [c.metadata.name for c in core.list_config_map_for_all_namespaces().items] == ["b"])
    eventually(lambda: "team" not in [n.metadata.name for n in core.list_namespace().items])


def test_a_deleted_namespace_is_terminating_with_its_contents_until_the_controller_empties_it(core):
    created = core.create_namespace({"metadata": {"name": "team"}})
    assert created.spec.finalizers == ["kubernetes"] and created.status.phase == "Active"
    core.create_namespaced_config_map("team", configmap("a"))
    core.delete_namespace("team")
    terminating = core.read_namespace("team")
    assert terminating.status.phase == "Terminating" and terminating.metadata.deletion_timestamp
    assert [c.metadata.name for c in core.list_namespaced_config_map("team").items] == ["a"]
    core.delete_namespaced_config_map("a", "team")  # what `kubectl delete -f` does next: still there


def test_creating_in_a_terminating_namespace_is_403_forbidden(core):
    core.create_namespace({"metadata": {"name": "team"}})
    core.create_namespaced_config_map("team", configmap("keep"))
    core.delete_namespace("team")
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("team", configmap("late"))
    assert exc.value.status == 403
    body = json.loads(str(exc.value.body))
    assert body["reason"] == "Forbidden"
    assert body["message"] == (
        'configmaps "late" is forbidden: unable to create new content in namespace team '
        "because it is being terminated"
    )


def test_a_namespace_waits_for_the_finalizers_of_its_contents(core):
    core.create_namespace({"metadata": {"name": "team"}})
    held = {**configmap("held"), "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    core.create_namespaced_config_map("team", held)
    core.delete_namespace("team")
    eventually(lambda: core.read_namespaced_config_map("held", "team").metadata.deletion_timestamp)
    assert core.read_namespace("team").status.phase == "Terminating"
    core.patch_namespaced_config_map("held", "team", {"metadata": {"finalizers": None}})
    eventually(lambda: "team" not in [n.metadata.name for n in core.list_namespace().items])


def test_the_namespace_controller_keeps_working_after_emptying_a_namespace(core):
    def removed(name: str) -> bool:
        return name not in [n.metadata.name for n in core.list_namespace().items]

    for name in ("first", "second"):
        core.create_namespace({"metadata": {"name": name}})
        core.create_namespaced_config_map(name, configmap("a"))
        core.delete_namespace(name)
        eventually(functools.partial(removed, name))


def test_the_system_namespaces_may_not_be_deleted(core):
    with pytest.raises(ApiException) as exc:
        core.delete_namespace("default")
    assert exc.value.status == 403
    assert json.loads(str(exc.value.body))["message"] == (
        'namespaces "default" is forbidden: this namespace may not be deleted'
    )
