"""Splitting a plan into the phases the orchestrator carries out one after the other, in KServe's order:
the scheduler's objects (EPP Service, InferencePool v1, InferencePool v1alpha2), then the HTTPRoute, then,
when the route switches its pool backends to the v1 API group, that switch as a phase of its own so the
migration shows in the workflow history."""

from __future__ import annotations

from typing import Any

from llmisvc_core.models.kube import HTTPROUTE, POOL_V1, POOL_V1ALPHA2, SERVICE, ResourceType
from llmisvc_core.models.llmisvc import POOL_MIGRATED_ANNOTATION
from llmisvc_core.planner.plan import PassPlan, Phase, WriteOp
from llmisvc_core.world.snapshot import Reader

#: The order KServe writes the scheduler's objects in (R-SCH-2).
SCHEDULER_ORDER: tuple[ResourceType, ...] = (SERVICE, POOL_V1, POOL_V1ALPHA2)


def split_into_phases(plan: PassPlan, before: Reader) -> dict[Phase, list[WriteOp]]:
    """The plan's writes per phase; ``before`` is the snapshot the plan was made from."""
    ops = [WriteOp(apply=m) for m in plan.apply] + [WriteOp(delete=d) for d in plan.delete]
    phases: dict[Phase, list[WriteOp]] = {phase: [] for phase in Phase}
    for op in sorted(ops, key=_rank):
        phases[_phase_of(op, before)].append(op)
    return {phase: writes for phase, writes in phases.items() if writes}


def _rank(op: WriteOp) -> int:
    type_ = op.key().type
    return SCHEDULER_ORDER.index(type_) if type_ in SCHEDULER_ORDER else len(SCHEDULER_ORDER)


def _phase_of(op: WriteOp, before: Reader) -> Phase:
    type_ = op.key().type
    if type_ != HTTPROUTE:
        return Phase.SCHEDULER
    return Phase.MIGRATION if op.apply is not None and starts_migration(op.apply, before) else Phase.ROUTES


def starts_migration(manifest: dict[str, Any], before: Reader) -> bool:
    """The route update sets the one-way v1 lock on a live route that did not have it yet."""
    meta = manifest.get("metadata", {})
    if (meta.get("annotations") or {}).get(POOL_MIGRATED_ANNOTATION) != "v1":
        return False
    current = before.get(HTTPROUTE, meta.get("namespace") or "", meta.get("name") or "")
    if current is None:
        return False
    return ((current.get("metadata") or {}).get("annotations") or {}).get(POOL_MIGRATED_ANNOTATION) != "v1"
