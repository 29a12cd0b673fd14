"""Field ownership of plain writes (``Update`` entries) and server-side apply conflicts with them.

Expectations from Kubernetes' server-side apply documentation: every create, update and patch is
recorded in ``managedFields`` under the request's ``fieldManager`` (default: the user agent up to
its first ``/``) with ``operation: Update``; applying a different value to a field such a manager
owns is ``409 Apply failed with 1 conflict: conflict with "m" using <apiVersion>: <field>``; with
``force=true`` the applier takes the field, and a later plain write takes it back without conflict.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from apiserver_standin.managed_fields import changed_paths, manager_of
from apiserver_standin.server import StandinApiServer

from .helpers import http, route

ROUTER_AGENT = "llmisvc-router/0.1.0"
GROUP, VERSION, PLURAL = "gateway.networking.k8s.io", "v1", "httproutes"
USING = f"using {GROUP}/{VERSION}"


@pytest.fixture
def router(standin: StandinApiServer) -> Any:
    """The custom-objects API of a client with the router's user agent, as its activities talk."""
    return client.CustomObjectsApi(standin.api_client(ROUTER_AGENT))


def owners(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def with_hostnames(hostnames: list[str]) -> dict[str, Any]:
    body = route("r")
    return {**body, "spec": {**body["spec"], "hostnames": hostnames}}


def apply(
    standin: StandinApiServer, manager: str, body: dict[str, Any], force: bool = False
) -> tuple[int, Any]:
    url = f"{standin.url}/apis/{GROUP}/{VERSION}/namespaces/default/{PLURAL}/r?fieldManager={manager}"
    code, answer, _ = http(
        url + ("&force=true" if force else ""), "PATCH", body, "application/apply-patch+yaml"
    )
    return code, answer


def test_the_manager_is_the_field_manager_else_the_user_agent_up_to_its_first_slash():
    assert manager_of("", "llmisvc-router/0.1.0 (linux)") == "llmisvc-router"
    assert manager_of("", "kubectl/v1.32.0 (linux/amd64) kubernetes/abc") == "kubectl"
    assert manager_of("kubectl-client-side-apply", "kubectl/v1.32.0") == "kubectl-client-side-apply"


def test_changed_paths_are_the_leaves_a_write_sets_and_those_it_drops():
    old = {
        "metadata": {"name": "r", "resourceVersion": "1", "labels": {"a": "1"}},
        "spec": {"x": 1, "y": [1]},
    }
    new = {
        "metadata": {"name": "r", "resourceVersion": "2", "labels": {"a": "1", "b": "2"}},
        "spec": {"y": [2]},
    }
    assert changed_paths(old, new) == (
        {("metadata", "labels", "b"), ("spec", "y")},
        {("spec", "x")},
    )


def test_a_create_by_the_router_records_an_update_entry_named_after_its_user_agent(router):
    created = router.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, with_hostnames(["a"]))
    entry = owners(created)[("llmisvc-router", "Update")]
    assert set(entry["f:spec"]) >= {"f:hostnames", "f:parentRefs", "f:rules"}
    assert created["metadata"]["managedFields"][0]["apiVersion"] == f"{GROUP}/{VERSION}"


def test_server_side_apply_over_a_field_the_router_replaced_is_a_409_naming_the_router(standin, router):
    created = router.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, with_hostnames(["a"]))
    replaced = {**created, "spec": {**created["spec"], "hostnames": ["b"]}}
    router.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "r", replaced)

    code, answer = apply(standin, "alice", with_hostnames(["c"]))

    assert (code, answer["reason"]) == (409, "Conflict")
    assert answer["message"] == (
        f'Apply failed with 1 conflict: conflict with "llmisvc-router" {USING}: .spec.hostnames'
    )
    assert answer["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": f'conflict with "llmisvc-router" {USING}',
            "field": ".spec.hostnames",
        }
    ]


def test_server_side_apply_of_the_value_the_router_wrote_shares_the_field(standin, router):
    router.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, with_hostnames(["a"]))
    code, answer = apply(standin, "alice", with_hostnames(["a"]))
    assert code == 200
    assert "f:hostnames" in owners(answer)[("alice", "Apply")]["f:spec"]
    assert "f:hostnames" in owners(answer)[("llmisvc-router", "Update")]["f:spec"]


def test_force_takes_the_field_and_the_routers_next_replace_takes_it_back(standin, router):
    router.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, with_hostnames(["a"]))
    code, answer = apply(standin, "alice", with_hostnames(["c"]), force=True)
    assert code == 200 and answer["spec"]["hostnames"] == ["c"]
    assert "f:hostnames" not in owners(answer)[("llmisvc-router", "Update")]["f:spec"]

    current = router.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "r")
    back = {**current, "spec": {**current["spec"], "hostnames": ["a"]}}
    stored = router.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "r", back)

    assert "f:hostnames" in owners(stored)[("llmisvc-router", "Update")]["f:spec"]
    assert "f:hostnames" not in owners(stored)[("alice", "Apply")]["f:spec"]
    code, answer = apply(standin, "alice", with_hostnames(["c"]))
    assert code == 409 and answer["message"].endswith(f'"llmisvc-router" {USING}: .spec.hostnames')


def test_a_merge_patch_takes_the_fields_it_changes_from_the_previous_writer(standin, router):
    router.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, with_hostnames(["a"]))
    editor = client.CustomObjectsApi(standin.api_client("kubectl/v1.32.0"))
    patched: Any = editor.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "r", {"spec": {"hostnames": ["b"]}}
    )
    assert "f:hostnames" in owners(patched)[("kubectl", "Update")]["f:spec"]
    assert "f:hostnames" not in owners(patched)[("llmisvc-router", "Update")]["f:spec"]


def test_conflicts_with_several_managers_are_listed_by_manager(standin, router):
    body = {**with_hostnames(["a"]), "metadata": {"name": "r", "labels": {"team": "x"}}}
    router.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
    assert (
        apply(standin, "bob", {**route("r"), "metadata": {"name": "r", "annotations": {"k": "v"}}})[0] == 200
    )

    change = {
        **with_hostnames(["z"]),
        "metadata": {"name": "r", "labels": {"team": "y"}, "annotations": {"k": "w"}},
    }
    code, answer = apply(standin, "alice", change)

    assert code == 409
    assert answer["message"] == (
        'Apply failed with 3 conflicts: conflicts with "bob":\n- .metadata.annotations.k\n'
        f'conflicts with "llmisvc-router" {USING}:\n- .metadata.labels.team\n- .spec.hostnames'
    )


def test_a_write_without_changes_records_nothing_new(router):
    created = router.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, with_hostnames(["a"]))
    again = router.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "r", created)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert again["metadata"]["managedFields"] == created["metadata"]["managedFields"]


def test_a_write_that_sets_managed_fields_to_one_empty_entry_clears_them(router):
    created = router.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, with_hostnames(["a"]))
    cleared = {**created, "metadata": {**created["metadata"], "managedFields": [{}]}}
    stored = router.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "r", cleared)
    assert "managedFields" not in stored["metadata"]
