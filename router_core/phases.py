"""Splitting a plan into the phases the orchestrator carries out one after the other, in KServe's order:
the scheduler's objects (EPP Service, InferencePool v1, InferencePool v1alpha2), then the HTTPRoute, then,
when the route switches its pool backends to the v1 API group, that switch as a phase of its own so the
migration shows in the workflow history."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from router_core.kube import HTTPROUTE, POOL_V1, POOL_V1ALPHA2, SERVICE, ResourceType, key_of
from router_core.llmisvc import POOL_MIGRATED_ANNOTATION
from router_core.passes import ObjectRef, PassPlan
from router_core.state import Reader

#: The order KServe writes the scheduler's objects in (R-SCH-2).
SCHEDULER_ORDER: tuple[ResourceType, ...] = (SERVICE, POOL_V1, POOL_V1ALPHA2)


class Phase(StrEnum):
    SCHEDULER = "scheduler"
    ROUTES = "routes"
    MIGRATION = "migration"


class WriteOp(BaseModel):
    """One write: a full manifest to create/update, or an object to delete."""

    apply: dict[str, Any] | None = None
    delete: ObjectRef | None = None

    def describe(self) -> str:
        if self.delete is not None:
            return f"delete {self.delete.kind} {self.delete.namespace}/{self.delete.name}"
        meta = (self.apply or {}).get("metadata", {})
        verb = "update" if meta.get("resourceVersion") else "create"
        return f"{verb} {(self.apply or {}).get('kind')} {meta.get('namespace')}/{meta.get('name')}"


def split_into_phases(plan: PassPlan, before: Reader) -> dict[Phase, list[WriteOp]]:
    """The plan's writes per phase; ``before`` is the snapshot the plan was made from."""
    ops = [WriteOp(apply=m) for m in plan.apply] + [WriteOp(delete=d) for d in plan.delete]
    phases: dict[Phase, list[WriteOp]] = {phase: [] for phase in Phase}
    for op in sorted(ops, key=_rank):
        phases[_phase_of(op, before)].append(op)
    return {phase: writes for phase, writes in phases.items() if writes}


def _type_of(op: WriteOp) -> ResourceType:
    if op.apply is not None:
        key = key_of(op.apply)
    else:
        assert op.delete is not None
        key = key_of({"apiVersion": op.delete.api_version, "kind": op.delete.kind, "metadata": {}})
    if key is None:
        raise ValueError(f"a plan cannot write {op.describe()}")
    return key.type


def _rank(op: WriteOp) -> int:
    type_ = _type_of(op)
    return SCHEDULER_ORDER.index(type_) if type_ in SCHEDULER_ORDER else len(SCHEDULER_ORDER)


def _phase_of(op: WriteOp, before: Reader) -> Phase:
    type_ = _type_of(op)
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
