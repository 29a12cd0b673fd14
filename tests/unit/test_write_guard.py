"""What a write activity checks before each write (activities.write_guard): the rules that keep a retried
or late write off an object that is not the one planned, named after the rule."""

from __future__ import annotations

from typing import Any

import pytest

from activities.models import PlannedTarget
from activities.write_guard import (
    StalePlanError,
    check_manifest_owner,
    check_target,
    delete_preconditions,
    planned_targets,
)
from llmisvc_core.models.kube import HTTPROUTE, ObjectKey
from llmisvc_core.planner.plan import ObjectRef, WriteOp
from tests.workflows.fake_cluster import FakeCluster

OWNER = "svc-uid"
REF = ObjectRef.of(ObjectKey(HTTPROUTE, "ns", "r"))


def route(uid: str, rv: str, controller: str | None = OWNER) -> dict[str, Any]:
    refs = [{"kind": "LLMInferenceService", "name": "s", "uid": controller, "controller": True}]
    return {
        "apiVersion": HTTPROUTE.api_version,
        "kind": "HTTPRoute",
        "metadata": {"name": "r", "namespace": "ns", "uid": uid, "resourceVersion": rv}
        | ({"ownerReferences": refs} if controller else {}),
    }


def create_op() -> WriteOp:
    manifest = route("", "", OWNER)
    del manifest["metadata"]["uid"], manifest["metadata"]["resourceVersion"]
    return WriteOp(apply=manifest)


def update_op(rv: str) -> WriteOp:
    manifest = route("", rv, OWNER)
    del manifest["metadata"]["uid"]
    return WriteOp(apply=manifest)


DELETE = WriteOp(delete=REF)
PLANNED_ABSENT = PlannedTarget(ref=REF)
PLANNED_OURS = PlannedTarget(ref=REF, uid="u1", resource_version="5")

STALE = {
    "a-create-finds-the-object-there-now": (create_op(), PLANNED_ABSENT, route("u9", "7")),
    "an-update-finds-another-object": (update_op("5"), PLANNED_OURS, route("u9", "5")),
    "an-update-finds-a-newer-version": (update_op("5"), PLANNED_OURS, route("u1", "6")),
    "an-update-finds-the-object-gone": (update_op("5"), PLANNED_OURS, None),
    "a-delete-finds-a-replacement-of-the-same-name": (DELETE, PLANNED_OURS, route("u9", "8", None)),
    "a-delete-finds-the-object-no-longer-ours": (DELETE, PLANNED_OURS, route("u1", "6", None)),
    "a-delete-finds-it-controlled-by-another": (DELETE, PLANNED_OURS, route("u1", "6", "other")),
}


@pytest.mark.parametrize(("op", "planned", "live"), STALE.values(), ids=STALE.keys())
def test_a_write_whose_target_changed_since_the_plan_is_stale(op, planned, live):
    with pytest.raises(StalePlanError):
        check_target(op, planned, live, OWNER)


STILL_GOOD = {
    "a-create-still-finds-nothing": (create_op(), PLANNED_ABSENT, None),
    "an-update-finds-the-planned-version": (update_op("5"), PLANNED_OURS, route("u1", "5")),
    "a-delete-finds-ours-with-only-its-status-changed": (DELETE, PLANNED_OURS, route("u1", "9")),
    "a-delete-finds-it-gone-already": (DELETE, PLANNED_OURS, None),
}


@pytest.mark.parametrize(("op", "planned", "live"), STILL_GOOD.values(), ids=STILL_GOOD.keys())
def test_a_write_whose_target_is_as_planned_goes_ahead(op, planned, live):
    assert check_target(op, planned, live, OWNER) == live


def test_a_delete_carries_the_uid_and_the_version_last_seen_to_be_ours():
    assert delete_preconditions(PLANNED_OURS, None) == ("u1", "5")  # first attempt: the plan's read
    assert delete_preconditions(PLANNED_OURS, route("u1", "9")) == ("u1", "9")  # a retry: checked live


def test_a_manifest_for_another_owner_is_never_written():
    with pytest.raises(StalePlanError, match="controller uid"):
        check_manifest_owner(WriteOp(apply=route("", "", "old-uid")), OWNER)
    check_manifest_owner(create_op(), OWNER)


def test_a_delete_is_planned_at_the_version_the_plan_read_not_a_newer_one_the_watch_brought():
    view = FakeCluster()
    stored = view.put(route("u1", "", OWNER))
    key = ObjectKey(HTTPROUTE, "ns", "r")
    newer = str(int(stored["metadata"]["resourceVersion"]) + 5)
    [target] = planned_targets([DELETE], view, {key: newer})
    assert (target.uid, target.resource_version) == (stored["metadata"]["uid"], newer)
    [absent] = planned_targets([create_op()], FakeCluster(), {key: "-"})
    assert (absent.uid, absent.resource_version) == (None, None)
