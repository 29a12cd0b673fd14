"""The pair's weights: what a step asks for, and where a rollback goes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from llmisvc_core.rollout.plan import RolloutPlan


class Weights(BaseModel):
    """``spec.router.route.weight`` of the stable and of the candidate service."""

    model_config = ConfigDict(frozen=True)

    stable: int
    candidate: int

    def describe(self) -> str:
        return f"stable {self.stable} / candidate {self.candidate}"


def share(total: int, percent: int) -> Weights:
    """``percent`` of ``total`` to the candidate, rounded half up to an integer, the rest to the stable
    service: the two always add up to ``total``."""
    candidate = (total * percent + 50) // 100
    return Weights(stable=total - candidate, candidate=candidate)


def step_weights(plan: RolloutPlan, index: int) -> Weights:
    """The weights of step ``index`` (0-based)."""
    return share(plan.total_weight, plan.steps[index].weight)


def promoted(plan: RolloutPlan) -> Weights:
    """Promotion: the candidate takes the pair's whole share."""
    return share(plan.total_weight, 100)


def rollback_target(plan: RolloutPlan, last_good: Weights) -> Weights:
    """Where a failed gate sends the pair: its last good weights, or everything to the stable service."""
    return last_good if plan.rollback == "last-good" else share(plan.total_weight, 0)
