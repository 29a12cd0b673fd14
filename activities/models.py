"""Inputs and results of the activities (one model each way, so fields can be added compatibly).

What travels here is what lands in the workflow history, so it is kept to what a person reading the
history needs: the writes a pass makes, the conditions it sets, and a digest of what it read (kinds, names,
resourceVersions), never whole objects read from the cluster.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, RootModel

from llmisvc_cache.model import SeenVersion
from llmisvc_core.merge.rendered_validation import Verdict
from llmisvc_core.planner.drift import Drift
from llmisvc_core.planner.plan import ObjectRef, Outcome, Phase, WriteOp
from llmisvc_core.world.events import PlannedEvent

#: At most this many entries of the read digest reach the history; the rest are counted.
DIGEST_LIMIT = 40


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


class PhaseWrites(BaseModel):
    """The writes of one phase, in the order KServe makes them, with what the plan saw of their targets
    (so a write activity can tell a stale plan)."""

    phase: Phase
    writes: list[WriteOp]
    targets: list[PlannedTarget] = Field(default_factory=list)


class Gone(BaseModel):
    """The service is gone: the workflow ends."""

    kind: Literal["gone"] = "gone"
    live_reads: int = 0  # requests to the API server (cache misses outside every selector)


class HandedOff(BaseModel):
    """The service left this deployment's selection (``activities.management``): the workflow ends
    without writing anything."""

    kind: Literal["handed-off"] = "handed-off"
    reason: str
    live_reads: int = 0


class InvalidSpec(BaseModel):
    """A spec the router cannot read: nothing is planned; the status that says why is handed to the
    status writer (``evaluate_conditions``), and the pass ends as one that could not complete."""

    kind: Literal["invalid-spec"] = "invalid-spec"
    uid: str | None = None
    message: str  # ``InvalidLLMInferenceService: LLMInferenceService ns/name: field …``
    #: The router's part of the status to write (``activities.invalid_spec.router_part``), or None when
    #: the stored one already says it (and in shadow mode).
    status: dict[str, Any] | None = None
    live_reads: int = 0


class PassReport(BaseModel):
    """What a pass planned from the world tells the workflow, whether or not it writes."""

    uid: str | None = None
    generation: int | None = None
    outcome: Outcome = Outcome.RECONCILED
    message: str | None = None
    conditions: dict[str, ConditionState] = Field(default_factory=dict)
    url: str | None = None
    #: ``Kind namespace/name@resourceVersion`` of every object the plan read (absent ones: ``@-``).
    reads: list[str] = Field(default_factory=list)
    reads_left_out: int = 0
    live_reads: int = 0


class Shadowed(PassReport):
    """Shadow mode (``activities.management``): nothing is to be written; ``drift`` says what differs."""

    kind: Literal["shadowed"] = "shadowed"
    drift: Drift


class Planned(PassReport):
    """The plan of one pass: its writes by phase and the status, as small as the history can hold."""

    kind: Literal["planned"] = "planned"
    #: The phases that write, in KServe's order (``llmisvc_core.planner.phases``).
    phases: list[PhaseWrites] = Field(default_factory=list)
    #: The status to write (merged into the stored one), or None when the stored status already says it.
    status: dict[str, Any] | None = None
    #: The router's part of the stored status the plan was made from (``status_merge.router_basis``);
    #: None in plans made before it was recorded.
    status_basis: str | None = None
    #: The API server's verdict on a merged spec the workflow had none for, asked by this pass
    #: (``activities.rendered_check``): the workflow keeps it while it is final.
    verdict: Verdict | None = None
    #: The Events the plan decided on (``PassPlan.events``); the workflow records those the pass before
    #: did not plan.
    events: list[PlannedEvent] = Field(default_factory=list)


class PassResult(RootModel[Gone | HandedOff | InvalidSpec | Shadowed | Planned]):
    """``fetch_gateways``' result, one of five, told apart by ``kind``."""

    root: Gone | HandedOff | InvalidSpec | Shadowed | Planned = Field(discriminator="kind")


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
    #: The service's ``metadata.generation`` the status was planned from: a live one that differs (the
    #: spec changed since, and this attempt may be a retry long after) is planned again before writing.
    generation: int | None = None
    #: The router's part of the stored status the status was planned from: another one there (a newer
    #: pass wrote it while this attempt waited) is planned again before writing, not written over.
    status_basis: str | None = None
    #: Events to record on the service (the plan's new ones); with neither status nor ``rejected``, the
    #: status is left as it is.
    events: list[PlannedEvent] = Field(default_factory=list)


class EvaluateResult(BaseModel):
    written: bool
    outcome: Outcome | None = None  # set when re-planned after a refused write
    message: str | None = None
    conditions: dict[str, ConditionState] = Field(default_factory=dict)
    url: str | None = None


class StopInput(BaseModel):
    key: ServiceKey
    stopped: bool
