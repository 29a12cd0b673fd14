"""The status of a spec the router cannot read or handle. Pure: the activities hand it to the status writer
(``evaluate_conditions``), stamped with the workflow's time.

``kubectl get llmisvc`` and ``kubectl describe`` then say why nothing happens: ``Ready`` and
``RouterReady`` False with a reason (``InvalidSpec``, or ``activities.payload_guard``'s for a spec too
large to handle) and a message naming the field; the status writer's Warning Event for the changed
``RouterReady`` says it too (``activities.service_status``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from llmisvc_core.world import conditions
from llmisvc_core.world.status_merge import (
    OWNED_CONDITIONS,
    OWNED_FIELDS,
    conditions_of,
    merge_status,
    type_of,
)

INVALID_SPEC = "InvalidSpec"


def timestamp(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(status: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in conditions_of(status) if type_of(c) == type_), None)


def same(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """The two conditions say the same (status, reason and message)."""
    fields = ("status", "reason", "message")
    return a is not None and b is not None and all(a.get(f) == b.get(f) for f in fields)


def invalid_spec_status(
    stored: dict[str, Any],
    message: str,
    now: datetime,
    reason: str = INVALID_SPEC,
    generation: int | None = None,
) -> dict[str, Any]:
    """``stored`` with Ready and RouterReady False for a spec the router cannot read or handle (``reason``),
    other conditions kept, and ``observedGeneration`` set to ``generation`` (when given): knative's
    post-processing marks every generation it processed, failed or not, so a client sees the answer is
    for the spec it wrote."""
    planned = []
    for type_ in (conditions.READY, conditions.ROUTER_READY):
        old = condition(stored, type_)
        new = {"type": type_, "status": "False", "reason": reason, "message": message}
        new["lastTransitionTime"] = (
            old["lastTransitionTime"] if same(old, new) and old and old.get("lastTransitionTime")
            else timestamp(now)
        )  # fmt: skip
        planned.append(new)
    kept = [c for c in conditions_of(stored) if type_of(c) in conditions.ROUTER_SUBCONDITIONS]
    planned_status: dict[str, Any] = {"conditions": [*planned, *kept]}
    if isinstance(generation, int) and not isinstance(generation, bool):
        planned_status["observedGeneration"] = generation
    return merge_status(stored, planned_status)


def router_part(stored: dict[str, Any], merged: dict[str, Any]) -> dict[str, Any]:
    """What of ``merged`` (:func:`invalid_spec_status`) the status writer merges into the stored status
    (``merge_status``): the router's conditions and ``observedGeneration``, and the routing fields as
    they are stored (this pass found no new ones). Other controllers' fields stay out of the history."""
    owned = [c for c in conditions_of(merged) if type_of(c) in OWNED_CONDITIONS]
    part = {k: stored[k] for k in OWNED_FIELDS if k in stored} | {"conditions": owned}
    if "observedGeneration" in merged:
        part["observedGeneration"] = merged["observedGeneration"]
    return part


def parse_time(now: str) -> datetime:
    """The workflow's ``now`` (``%Y-%m-%dT%H:%M:%SZ``, as it hands it to the activities)."""
    return datetime.strptime(now, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
