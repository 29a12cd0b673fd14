"""SchedulerWorkloadReady from the scheduler Deployment (spec R-SCH-4): catalogue rows 4.4."""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.models.core_objects import Deployment
from llmisvc_core.models.llmisvc import LLMInferenceServiceStatus
from llmisvc_core.pools import scheduler_workload
from llmisvc_core.world.conditions import Conditions

NOW = "2026-01-01T00:00:00Z"


def row(conds: Conditions, type_: str) -> tuple[str, str, str] | None:
    found = conds.get(type_)
    return None if found is None else (found.status, found.reason or "", found.message or "")


def deployment(available: int | None = None, *conditions: dict[str, Any]) -> Deployment:
    status = {"availableReplicas": available, "conditions": list(conditions)}
    return Deployment.from_wire({"metadata": {"name": "svc-kserve-router-scheduler"}, "status": status})


DEADLINE = {
    "type": "Progressing",
    "status": "False",
    "reason": "ProgressDeadlineExceeded",
    "message": "took too long",
}
AVAILABLE = {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}
UNAVAILABLE = {
    "type": "Available",
    "status": "False",
    "reason": "MinimumReplicasUnavailable",
    "message": "Deployment does not have minimum availability.",
}
ROLLOUT = ("False", "Progressing", "Deployment rollout in progress")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, ROLLOUT),
        (Deployment.from_wire({"metadata": {"name": "d"}}), ROLLOUT),
        (deployment(1, DEADLINE, UNAVAILABLE), ("True", "", "")),
        (deployment(0, UNAVAILABLE, DEADLINE), ("False", "ProgressDeadlineExceeded", "took too long")),
        (
            deployment(
                0, {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}, DEADLINE
            ),
            ("False", "ProgressDeadlineExceeded", "took too long"),
        ),
        (deployment(0, {**DEADLINE, "status": "True"}, AVAILABLE), ("True", "", "")),
        (deployment(0, AVAILABLE), ("True", "", "")),
        (
            deployment(0, UNAVAILABLE, AVAILABLE),
            ("False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
        ),
        (deployment(0, {"type": "Available", "status": "Unknown"}), ("False", "", "")),
        (deployment(0, {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}), ROLLOUT),
        (deployment(None), ROLLOUT),
    ],
    ids=[
        "just-created",
        "no-status",
        "available-replicas-win",
        "deadline-exceeded",
        "any-progressing-condition-counts",
        "deadline-needs-false",
        "available-true",
        "first-available-decides",
        "available-without-reason",
        "still-progressing",
        "no-conditions",
    ],
)
def test_r_sch_4_scheduler_workload_verdict(given, expected):
    assert scheduler_workload.scheduler_workload_verdict(given) == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (deployment(2), ("True", "", "")),
        (deployment(0, DEADLINE), ("False", "ProgressDeadlineExceeded", "took too long")),
        (
            deployment(0, UNAVAILABLE),
            ("False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
        ),
        (None, ROLLOUT),
    ],
    ids=["r-sch-4-1-true", "r-sch-4-2-deadline", "r-sch-4-3-available-reason", "r-sch-4-4-progressing"],
)
def test_r_sch_4_mark_scheduler_workload_catalogue_rows(given, expected):
    conds = Conditions(LLMInferenceServiceStatus(), NOW)
    scheduler_workload.mark_scheduler_workload(conds, given)
    assert row(conds, "SchedulerWorkloadReady") == expected
    found = conds.get("SchedulerWorkloadReady")
    assert found is not None and found.severity == "Info"
