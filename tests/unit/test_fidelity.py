"""The comparison of the fidelity test (``llmisvc_devstack.fidelity``): what two runs may differ in is
ignored, anything else is reported, so ``tests/integration/test_kserve_fidelity.py`` can fail."""

from __future__ import annotations

import copy
from typing import Any

from llmisvc_devstack import fidelity

NAMES_A = {"ns-a": "<namespace>", "kserve-a": "<kserve-namespace>"}
NAMES_B = {"ns-b": "<namespace>", "kserve-b": "<kserve-namespace>"}


def _route(namespace: str, kserve_namespace: str, uid: str, rv: str) -> dict[str, Any]:
    return {
        "kind": "HTTPRoute",
        "metadata": {
            "name": "svc-kserve-route",
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": rv,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [{"manager": uid}],
            "ownerReferences": [{"kind": "LLMInferenceService", "name": "svc", "uid": uid}],
        },
        "spec": {"parentRefs": [{"name": "gw", "namespace": kserve_namespace}]},
        "status": {"parents": [{"controllerName": uid}]},
    }


def _service(time: str, reason: str = "Ready") -> dict[str, Any]:
    conditions = [
        {"type": "RouterReady", "status": "True", "reason": reason, "lastTransitionTime": time},
        {"type": "MainWorkloadReady", "status": time, "lastTransitionTime": time},  # the workload's
    ]
    return {"status": {"conditions": conditions, "url": "http://203.0.113.10/"}}


def _snapshot(route: dict[str, Any] | None, service: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    return {"svc": fidelity.snapshot(service, {"HTTPRoute": route}, names)}


def test_uids_timestamps_namespaces_and_workload_conditions_are_ignored() -> None:
    """Issue 21: "uids, timestamps and generated names aside"; only the router's objects and conditions."""
    kserve = _snapshot(_route("ns-a", "kserve-a", "u1", "1"), _service("t1"), NAMES_A)
    router = _snapshot(_route("ns-b", "kserve-b", "u2", "7"), _service("t2"), NAMES_B)
    assert fidelity.differences(kserve, router) == []


def test_a_changed_field_is_reported_with_its_path() -> None:
    """A field the two controllers write differently is one line naming the service, object and path."""
    changed = _route("ns-b", "kserve-b", "u2", "7")
    changed["spec"]["parentRefs"][0]["name"] = "other"
    kserve = _snapshot(_route("ns-a", "kserve-a", "u1", "1"), _service("t1"), NAMES_A)
    router = _snapshot(changed, _service("t1"), NAMES_B)
    assert fidelity.differences(kserve, router) == ['svc HTTPRoute.spec.parentRefs[0].name: "gw" != "other"']


def test_a_missing_object_and_a_changed_condition_are_reported() -> None:
    """An object only one controller creates, and a router condition that differs, are differences."""
    kserve = _snapshot(_route("ns-a", "kserve-a", "u1", "1"), _service("t1"), NAMES_A)
    router = _snapshot(None, _service("t1", reason="Other"), NAMES_B)
    lines = fidelity.differences(kserve, router)
    assert lines[0].startswith("svc HTTPRoute: {") and lines[0].endswith("!= null")
    assert lines[1] == 'svc conditions.RouterReady.reason: "Ready" != "Other"'
    assert len(lines) == 2
    assert fidelity.differences(kserve, copy.deepcopy(kserve)) == []
