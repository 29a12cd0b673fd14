"""Messages of the rollout workflow: its input (the pair, the plan, and the state it carries across
continue-as-new), its status (the ``status`` query, and the answer of every control update) and its
result. The workflow id is the router's id function's, with ``rollout/<group>`` as the name, so one group
has one rollout at a time."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from activities.rollout_models import RolloutMembers
from llmisvc_core.rollout.decision import Progress
from llmisvc_core.rollout.gates import Gate
from llmisvc_core.rollout.plan import RolloutPlan
from llmisvc_core.rollout.weights import Weights
from workflows.models import workflow_id

ROLLOUT_WORKFLOW_NAME = "RolloutWorkflow"
ROLLOUT = "rollout"
#: The timeline kept in the state (and answered by ``status``): a plan has at most 100 steps, so this
#: holds every step of one, a rollback and the pauses around them.
MAX_TIMELINE = 256


def rollout_workflow_id(namespace: str, group: str, cluster: str = "") -> str:
    """``llmisvc/[<cluster>/]<namespace>/rollout/<group>``: the service workflows' id with
    ``rollout/<group>`` for the name (a service name holds no ``/``, so the two never meet)."""
    return workflow_id(namespace, f"{ROLLOUT}/{group}", cluster)


class RolloutPhase(StrEnum):
    RUNNING = "running"  # dwelling at a step, or about to check the gates
    WAITING = "waiting"  # gates pending
    PAUSED = "paused"  # by a person, or because the weights are not the rollout's any more
    SUCCEEDED = "succeeded"
    ROLLED_BACK = "rolled-back"
    ABORTED = "aborted"

    @property
    def ended(self) -> bool:
        return self in (RolloutPhase.SUCCEEDED, RolloutPhase.ROLLED_BACK, RolloutPhase.ABORTED)


class TimelineEntry(BaseModel):
    """A write of the weights (or the start): when, which step (0: before the first), and why."""

    at: datetime
    step: int
    weights: Weights
    note: str


class Command(StrEnum):
    PROMOTE = "promote"
    ABORT = "abort"


class RolloutState(BaseModel):
    """Carried across continue-as-new. ``progress`` is None until the rollout has read its start."""

    phase: RolloutPhase = RolloutPhase.RUNNING
    reason: str = ""
    progress: Progress | None = None
    initial: Weights | None = None
    gates: list[Gate] = Field(default_factory=list)
    pending_since: datetime | None = None
    dwell_until: datetime | None = None
    dwell_left_seconds: float | None = None  # a dwell frozen by a pause
    #: The pause came from an edit by someone else: a resume takes the weights as they are now.
    adopt_weights: bool = False
    command: Command | None = None
    command_reason: str = ""
    timeline: list[TimelineEntry] = Field(default_factory=list)


class RolloutInput(BaseModel):
    members: RolloutMembers
    plan: RolloutPlan
    state: RolloutState | None = None


class RolloutStatus(BaseModel):
    """What ``llmisvc-router rollout status`` prints: the pair, where the rollout is, the gates."""

    namespace: str
    group: str
    stable: str
    candidate: str
    phase: RolloutPhase
    reason: str = ""
    step: int  # steps written so far
    steps: list[int]  # the candidate's percent at each step
    weights: Weights | None = None
    gates: list[Gate] = Field(default_factory=list)
    timeline: list[TimelineEntry] = Field(default_factory=list)


class ControlRequest(BaseModel):
    """A person's pause, resume, promote or abort; ``by`` ends up in the reason and the Events."""

    by: str = "llmisvc-router rollout"


class RolloutResult(BaseModel):
    phase: RolloutPhase
    reason: str
    weights: Weights | None = None
