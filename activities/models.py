"""Inputs and results of the activities (one model each way, so fields can be added compatibly).

What travels here is what lands in the workflow history, so it is kept to what a person reading the
history needs: the writes a pass makes, the conditions it sets, and a digest of what it read (kinds, names,
resourceVersions), never whole objects read from the cluster.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from llmisvc_cache.model import SeenVersion
from llmisvc_core.merge.rendered_validation import Verdict
from llmisvc_core.planner.drift import Drift
from llmisvc_core.planner.plan import ObjectRef, WriteOp
from llmisvc_core.world.events import PlannedEvent

#: At most this many entries of the read digest reach the history; the rest are counted.
DIGEST_LIMIT = 40


class PassOutcome(StrEnum):
    """How a pass ended: the core's outcomes, plus the service being gone and an activity error."""

    RECONCILED = "reconciled"
    PRECONDITION_NOT_MET = "precondition-not-met"
    INVALID_REFERENCES = "invalid-references"
    FAILED = "failed"
    GONE = "gone"
    ERROR = "error"
    HANDED_OFF = "handed-off"  # the service left this deployment's selection (activities.management)

    @property
    def settled(self) -> bool:
        """Nothing left to retry: the next pass waits for a trigger or the resync."""
        return self in (PassOutcome.RECONCILED, PassOutcome.GONE, PassOutcome.HANDED_OFF)


class ServiceKey(BaseModel):
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class ConditionState(BaseModel):
    """One condition of the planned status, as the UI and the ``status`` command show it."""

    status: str
    reason: str | None = None

    def __str__(self) -> str:
        return f"{self.status}({self.reason})" if self.reason else self.status


class RejectedWrite(BaseModel):
    ref: ObjectRef
    error: str


class PlannedTarget(BaseModel):
    """What a plan read of a write's target: its uid and resourceVersion (both None: it was absent).
    A write activity compares it with the live object before writing (``activities.write_guard``)."""

    ref: ObjectRef
    uid: str | None = None
    resource_version: str | None = None


class FetchInput(BaseModel):
    """``fetch_gateways``: read the world from the cache and plan the pass."""

    key: ServiceKey
    now: str  # stamps the conditions that change (workflow time, so the pass replays identically)
    #: Versions the triggers saw: the cache catches up with them before the pass plans.
    wait_for: list[SeenVersion] = Field(default_factory=list)
    #: The API server's last verdict on the service's merged spec (KServe #5918), kept by the workflow.
    verdict: Verdict | None = None


class PassDecision(BaseModel):
    """``fetch_gateways``' result: the plan of one pass, as small as the history can hold."""

    gone: bool = False
    uid: str | None = None
    generation: int | None = None
    outcome: PassOutcome = PassOutcome.RECONCILED
    message: str | None = None
    writes: dict[str, list[WriteOp]] = Field(default_factory=dict)  # llmisvc_core.planner.plan.Phase values
    #: What the plan saw of each write's target, so a write activity can tell a stale plan.
    targets: list[PlannedTarget] = Field(default_factory=list)
    #: The status to write (merged into the stored one), or None when the stored status already says it.
    status: dict[str, Any] | None = None
    conditions: dict[str, ConditionState] = Field(default_factory=dict)
    url: str | None = None
    #: ``Kind namespace/name@resourceVersion`` of every object the plan read (absent ones: ``@-``).
    reads: list[str] = Field(default_factory=list)
    reads_left_out: int = 0
    live_reads: int = 0  # requests to the API server (cache misses outside every selector)
    #: Shadow mode (``activities.management``): nothing is to be written; ``drift`` says what differs.
    shadow: bool = False
    drift: Drift | None = None
    #: The service left this deployment's selection: why. The workflow ends without writing anything.
    handoff: str | None = None
    #: The API server's verdict on a merged spec the workflow had none for, asked by this pass
    #: (``activities.rendered_check``): the workflow keeps it while it is final.
    verdict: Verdict | None = None
    #: The Events the plan decided on (``PassPlan.events``); the workflow records those the pass before
    #: did not plan.
    events: list[PlannedEvent] = Field(default_factory=list)

    @property
    def router_ready(self) -> str:
        cond = self.conditions.get("RouterReady")
        return cond.status if cond is not None else "Unknown"


class ApplyInput(BaseModel):
    """Writes of one phase, in the order KServe makes them, for the service with this uid."""

    key: ServiceKey
    uid: str | None = None
    writes: list[WriteOp] = Field(default_factory=list)
    #: What the plan saw of the targets of ``writes`` (empty in plans made before it was recorded).
    targets: list[PlannedTarget] = Field(default_factory=list)


class ApplyResult(BaseModel):
    written: int = 0
    rejected: RejectedWrite | None = None  # the API server refused a write (4xx): the phase stops there


class EvaluateInput(BaseModel):
    """``evaluate_conditions``: write the status after the writes (re-planned if a write was refused)."""

    key: ServiceKey
    uid: str | None
    now: str
    status: dict[str, Any] | None = None  # the planned status; None with ``rejected`` (re-plan)
    rejected: RejectedWrite | None = None
    verdict: Verdict | None = None  # the one the pass was planned with, for the re-plan
    #: Events to record on the service (the plan's new ones); with neither status nor ``rejected``, the
    #: status is left as it is.
    events: list[PlannedEvent] = Field(default_factory=list)


class EvaluateResult(BaseModel):
    written: bool
    outcome: PassOutcome | None = None  # set when re-planned after a refused write
    message: str | None = None
    conditions: dict[str, ConditionState] = Field(default_factory=dict)
    url: str | None = None


class StopInput(BaseModel):
    key: ServiceKey
    stopped: bool
