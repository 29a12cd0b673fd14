"""Garbage collection with propagation policies, driven by the official Python client and raw HTTP.

Expectations from Kubernetes' "Garbage Collection" and "Use Cascading Deletion" documentation:
``Background`` (the default) deletes the owner at once and its dependents afterwards;
``Foreground`` leaves the owner with ``deletionTimestamp`` and the ``foregroundDeletion``
finalizer until the dependents with ``blockOwnerDeletion: true`` are gone; ``Orphan`` adds the
``orphan`` finalizer, strips the owner's references from its dependents, then deletes the owner.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from apiserver_standin.server import StandinApiServer
from apiserver_standin.testing import running_apiserver

from .helpers import GATEWAY, eventually, gateway, http, route

ROUTES = f"/apis/{GATEWAY[0]}/{GATEWAY[1]}/namespaces/default/httproutes"
GATEWAYS = f"/apis/{GATEWAY[0]}/{GATEWAY[1]}/namespaces/default/gateways"


@pytest.fixture
def slow_gc() -> Iterator[StandinApiServer]:
    """A stand-in whose garbage collector looks at an owner 1 s after its deletion (default 0.1 s),
    so a test can see the state between the DELETE and the cascade without racing it."""
    with running_apiserver(crds="all", gc_delay=1.0) as server:
        yield server


def owned(name: str, owner: dict[str, Any], block: bool = False, **meta: Any) -> dict[str, Any]:
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    body = route(name)
    return {**body, "metadata": {**body["metadata"], **meta, "ownerReferences": [ref]}}


def get(custom: Any, plural: str, name: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = custom.get_namespaced_custom_object(*GATEWAY, "default", plural, name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return found


def create(custom: Any, plural: str, body: dict[str, Any]) -> dict[str, Any]:
    created: dict[str, Any] = custom.create_namespaced_custom_object(*GATEWAY, "default", plural, body)
    return created


def test_background_is_the_default_and_the_dependents_go_after_the_delete_returns(slow_gc):
    custom = client.CustomObjectsApi(slow_gc.client)
    owner = create(custom, "gateways", gateway("g"))
    create(custom, "httproutes", owned("r", owner))

    custom.delete_namespaced_custom_object(*GATEWAY, "default", "gateways", "g")

    assert get(custom, "gateways", "g") is None
    assert get(custom, "httproutes", "r") is not None  # not yet: the collector runs in the background
    eventually(lambda: get(custom, "httproutes", "r") is None)


def test_foreground_holds_the_owner_until_its_blocking_dependents_are_gone(slow_gc):
    custom = client.CustomObjectsApi(slow_gc.client)
    owner = create(custom, "gateways", gateway("g"))
    create(custom, "httproutes", owned("r", owner, block=True, finalizers=["example.com/hold"]))

    marked: Any = custom.delete_namespaced_custom_object(
        *GATEWAY, "default", "gateways", "g", propagation_policy="Foreground"
    )

    assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert marked["metadata"]["deletionTimestamp"]
    held = eventually(
        lambda: (get(custom, "httproutes", "r") or {}).get("metadata", {}).get("deletionTimestamp")
    )
    assert held and get(custom, "gateways", "g") is not None  # the dependent's finalizer blocks it
    custom.patch_namespaced_custom_object(
        *GATEWAY, "default", "httproutes", "r", {"metadata": {"finalizers": None}}
    )
    eventually(lambda: get(custom, "httproutes", "r") is None and get(custom, "gateways", "g") is None)


def test_foreground_does_not_wait_for_dependents_that_do_not_block(standin):
    custom = client.CustomObjectsApi(standin.client)
    owner = create(custom, "gateways", gateway("g"))
    create(custom, "httproutes", owned("free", owner, finalizers=["example.com/hold"]))

    custom.delete_namespaced_custom_object(
        *GATEWAY, "default", "gateways", "g", propagation_policy="Foreground"
    )

    eventually(lambda: get(custom, "gateways", "g") is None)
    free = get(custom, "httproutes", "free")
    assert free is not None and free["metadata"]["deletionTimestamp"]


def test_orphan_adds_its_finalizer_then_strips_the_references_and_removes_the_owner(slow_gc):
    custom = client.CustomObjectsApi(slow_gc.client)
    owner = create(custom, "gateways", gateway("g"))
    create(custom, "httproutes", owned("r", owner))

    marked: Any = custom.delete_namespaced_custom_object(
        *GATEWAY, "default", "gateways", "g", propagation_policy="Orphan"
    )

    assert marked["metadata"]["finalizers"] == ["orphan"] and marked["metadata"]["deletionTimestamp"]
    eventually(lambda: get(custom, "gateways", "g") is None)
    kept = get(custom, "httproutes", "r")
    assert kept is not None and "ownerReferences" not in kept["metadata"]


def test_delete_options_in_a_json_body_choose_the_policy(standin):
    custom = client.CustomObjectsApi(standin.client)
    owner = create(custom, "gateways", gateway("g"))
    create(custom, "httproutes", owned("r", owner))
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"}

    code, answer, _ = http(f"{standin.url}{GATEWAYS}/g", "DELETE", options)

    assert code == 200 and answer["metadata"]["finalizers"] == ["orphan"]
    eventually(lambda: get(custom, "gateways", "g") is None)
    assert "ownerReferences" not in (get(custom, "httproutes", "r") or {}).get(
        "metadata", {"ownerReferences": 1}
    )


def test_a_uid_precondition_that_does_not_match_is_409_with_the_real_message(standin):
    created = create(client.CustomObjectsApi(standin.client), "httproutes", route("r"))
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "someone-else"}}

    code, answer, _ = http(f"{standin.url}{ROUTES}/r", "DELETE", options)

    assert (code, answer["reason"]) == (409, "Conflict")
    uid = created["metadata"]["uid"]
    assert answer["message"] == (
        'Operation cannot be fulfilled on httproutes.gateway.networking.k8s.io "r": '
        f"Precondition failed: UID in precondition: someone-else, UID in object meta: {uid}"
    )


def test_a_resource_version_precondition_that_does_not_match_is_409(standin):
    created = create(client.CustomObjectsApi(standin.client), "httproutes", route("r"))
    rv = created["metadata"]["resourceVersion"]
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"resourceVersion": "1"}}

    code, answer, _ = http(f"{standin.url}{ROUTES}/r", "DELETE", options)

    assert code == 409
    assert answer["message"].endswith(
        f"Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: {rv}"
    )


def test_preconditions_that_match_let_the_delete_through(standin):
    custom = client.CustomObjectsApi(standin.client)
    created = create(custom, "httproutes", route("r"))
    meta = created["metadata"]
    preconditions = {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": preconditions}

    code, _, _ = http(f"{standin.url}{ROUTES}/r", "DELETE", options)

    assert code == 200
    assert get(custom, "httproutes", "r") is None


def test_delete_collection_honours_the_propagation_policy(standin):
    custom = client.CustomObjectsApi(standin.client)
    owner = create(custom, "gateways", gateway("g"))
    create(custom, "httproutes", owned("r", owner))

    custom.delete_collection_namespaced_custom_object(
        *GATEWAY, "default", "gateways", propagation_policy="Orphan"
    )

    eventually(lambda: get(custom, "gateways", "g") is None)
    kept = get(custom, "httproutes", "r")
    assert kept is not None and "ownerReferences" not in kept["metadata"]
