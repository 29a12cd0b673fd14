"""Inputs and results of the activities (one model each way, so fields can be added compatibly)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from router_core.passes import ObjectRef, PassPlan
from router_core.phases import WriteOp


class ServiceKey(BaseModel):
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class PreconditionReport(BaseModel):
    """``check_preconditions``: does the service exist, and are the kinds it needs served?"""

    exists: bool
    uid: str | None = None
    generation: int | None = None
    stopped: bool = False
    missing: list[str] = Field(default_factory=list)
    installed: list[str] = Field(default_factory=list)  # router_core.kube.TYPES_BY_NAME keys


class FetchInput(BaseModel):
    key: ServiceKey
    installed: list[str]


class ClusterSnapshot(BaseModel):
    """``fetch_gateways``: the service and every object the pass reads (absent ones are absent)."""

    service: dict[str, Any] | None
    objects: list[dict[str, Any]] = Field(default_factory=list)
    installed: list[str] = Field(default_factory=list)
    reads: int = 0


class RejectedWrite(BaseModel):
    ref: ObjectRef
    error: str


class PlanInput(BaseModel):
    snapshot: ClusterSnapshot
    now: str
    rejected: list[RejectedWrite] = Field(default_factory=list)


class ApplyInput(BaseModel):
    """Writes of one phase, in the order KServe makes them."""

    key: ServiceKey
    writes: list[WriteOp] = Field(default_factory=list)


class ApplyResult(BaseModel):
    written: int = 0
    rejected: RejectedWrite | None = None  # the API server refused a write (4xx): the phase stops there


class StatusInput(BaseModel):
    key: ServiceKey
    uid: str | None
    status: dict[str, Any]


class StatusResult(BaseModel):
    written: bool


class StopInput(BaseModel):
    key: ServiceKey
    stopped: bool


class PlanResult(BaseModel):
    plan: PassPlan
    phases: dict[str, list[WriteOp]] = Field(default_factory=dict)  # router_core.phases.Phase values
