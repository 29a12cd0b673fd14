"""Shadow mode's pass result: the plan made as usual, turned into a report of what differs instead of
writes to carry out (``activities.management``). The workflow writes nothing for such a result."""

from __future__ import annotations

from typing import Any

from activities.models import PassReport, Shadowed
from llmisvc_core.planner import drift
from llmisvc_core.planner.plan import Phase, WriteOp
from llmisvc_core.world.snapshot import Reader


def shadowed(
    report: PassReport,
    writes: dict[Phase, list[WriteOp]],
    live: Reader,
    stored_status: dict[str, Any],
    planned_status: dict[str, Any],
) -> Shadowed:
    """``report`` with the drift instead of writes, status and Events (nothing is to be written or told,
    and the history keeps only what it needs): the objects those writes would change and the status
    lines."""
    ops = [op for phase in Phase for op in writes.get(phase, [])]
    return Shadowed(**dict(report), drift=drift.pass_drift(ops, live, stored_status, planned_status))
