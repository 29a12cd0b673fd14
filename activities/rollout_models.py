"""Inputs and results of the rollout activities (one model each way). They carry names, weights,
resourceVersions and condition states: never whole objects."""

from __future__ import annotations

from pydantic import BaseModel, Field

from llmisvc_core.rollout.gates import MemberObservation
from llmisvc_core.rollout.weights import Weights


class RolloutMembers(BaseModel):
    """The two services a rollout moves traffic between, in one group of one namespace."""

    namespace: str
    group: str
    stable: str
    candidate: str


class MembersObservation(BaseModel):
    stable: MemberObservation
    candidate: MemberObservation

    @property
    def weights(self) -> Weights:
        return Weights(stable=self.stable.weight, candidate=self.candidate.weight)


class WriteWeightsInput(BaseModel):
    """Move the pair from ``expected`` (what the rollout last wrote) to ``target``."""

    members: RolloutMembers
    expected: Weights
    target: Weights


class WriteWeightsResult(BaseModel):
    """``written``: the services patched (none when both had the target already, after a retry or a
    restart). ``edited``: why nothing more was written, when someone else changed a weight meanwhile."""

    written: list[str] = Field(default_factory=list)
    edited: str | None = None


class MetricQueryInput(BaseModel):
    url: str
    query: str
    timeout_seconds: float = 5.0


class RolloutEventInput(BaseModel):
    """An Event on both services: ``type`` Normal or Warning, ``reason`` CamelCase, ``note`` in words."""

    members: RolloutMembers
    type: str = "Normal"
    reason: str
    note: str
