"""What a rollout does next, from what it expects and what it reads: the decision table.

In the order the rows are tried:

1. a service is gone or left the group, or its weight is not the one the rollout last wrote (someone else
   edited it): **pause**, with the reason; the rollout never overwrites another writer's weights;
2. a gate failed: **roll back** (to the last good weights, or everything to the stable service);
3. a gate is pending: **wait**, or **roll back** once the gates have been pending for the plan's
   ``gate_timeout_seconds``;
4. every gate passed: **advance** to the next step, or **succeed** when the last step has dwelt.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmisvc_core.rollout import gates as gate_rules
from llmisvc_core.rollout import weights as weight_rules
from llmisvc_core.rollout.gates import Gate, GateState, MemberObservation
from llmisvc_core.rollout.plan import RolloutPlan
from llmisvc_core.rollout.weights import Weights


class Progress(BaseModel):
    """Where the rollout is: the next step to take (``len(steps)`` once the last one is written), the
    weights it last wrote (``expected``) and those under which the gates last passed (``last_good``)."""

    model_config = ConfigDict(frozen=True)

    next_step: int = 0
    expected: Weights
    last_good: Weights


class Advance(BaseModel):
    kind: Literal["advance"] = "advance"
    step: int
    weights: Weights


class Wait(BaseModel):
    kind: Literal["wait"] = "wait"
    reason: str


class RollBack(BaseModel):
    kind: Literal["roll-back"] = "roll-back"
    weights: Weights
    reason: str


class Pause(BaseModel):
    kind: Literal["pause"] = "pause"
    reason: str


class Succeed(BaseModel):
    kind: Literal["succeed"] = "succeed"


Decision = Annotated[Advance | Wait | RollBack | Pause | Succeed, Field(discriminator="kind")]


def member_problem(group: str, member: MemberObservation, weight: int) -> str | None:
    """Why the rollout may not write this service's weight (it last wrote ``weight``), or None."""
    if not member.exists:
        return f"{member.name} is gone"
    if member.group != group:
        return f"{member.name} left group {group} (its group is {member.group or 'none'})"
    if member.weight != weight:
        edited = f"{member.name} has weight {member.weight}, the rollout set {weight}"
        return f"weights edited by someone else: {edited}"
    return None


def ownership_problem(
    group: str, expected: Weights, stable: MemberObservation, candidate: MemberObservation
) -> str | None:
    """Why the rollout may not write the pair's weights any more, or None."""
    return member_problem(group, stable, expected.stable) or member_problem(
        group, candidate, expected.candidate
    )


def decide(
    plan: RolloutPlan,
    group: str,
    progress: Progress,
    stable: MemberObservation,
    candidate: MemberObservation,
    gates: list[Gate],
    pending_seconds: float,
) -> Decision:
    """The next move (module docstring); ``pending_seconds``: how long the gates have been pending
    without a pass in between (0 when they were not pending at the last check)."""
    problem = ownership_problem(group, progress.expected, stable, candidate)
    if problem is not None:
        return Pause(reason=problem)
    target = weight_rules.rollback_target(plan, progress.last_good)
    if any(g.state == GateState.FAILED for g in gates):
        return RollBack(
            weights=target, reason="gate failed: " + gate_rules.summarize(gates, GateState.FAILED)
        )
    if any(g.state == GateState.PENDING for g in gates):
        pending = gate_rules.summarize(gates, GateState.PENDING)
        if pending_seconds >= plan.gate_timeout_seconds:
            return RollBack(
                weights=target, reason=f"gates pending for over {plan.gate_timeout_seconds}s: {pending}"
            )
        return Wait(reason=f"waiting for gates: {pending}")
    if progress.next_step >= len(plan.steps):
        return Succeed()
    return Advance(step=progress.next_step, weights=weight_rules.step_weights(plan, progress.next_step))
