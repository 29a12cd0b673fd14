"""Shadow mode's pass decision: the plan made as usual, turned into a report of what differs instead of
writes to carry out (``activities.management``). The workflow writes nothing for such a decision."""

from __future__ import annotations

from typing import Any

from activities.models import PassDecision
from llmisvc_core.planner import drift
from llmisvc_core.planner.plan import Phase, WriteOp
from llmisvc_core.world.snapshot import Reader


def decision(
    planned: PassDecision,
    writes: dict[Phase, list[WriteOp]],
    live: Reader,
    stored_status: dict[str, Any],
    planned_status: dict[str, Any],
) -> PassDecision:
    """``planned`` without its writes, status and Events (nothing is to be written or told, and the
    history keeps only what it needs), with the drift: the objects those writes would change and the
    status lines."""
    ops = [op for phase in Phase for op in writes.get(phase, [])]
    report = drift.pass_drift(ops, live, stored_status, planned_status)
    update = {"shadow": True, "writes": {}, "status": None, "drift": report, "events": []}
    return planned.model_copy(update=update)
