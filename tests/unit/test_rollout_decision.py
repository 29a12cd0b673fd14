"""The rollout's decision table (issue 22, ``llmisvc_core/rollout/decision.py``): pause when the weights
are not the rollout's any more, roll back on a failed gate or gates pending too long, wait, advance,
succeed. Each row of the table is a case here, in the table's order."""

from __future__ import annotations

import pytest

from llmisvc_core.rollout import decision
from llmisvc_core.rollout.decision import Advance, Decision, Pause, Progress, RollBack, Succeed, Wait
from llmisvc_core.rollout.gates import Gate, GateState, MemberObservation
from llmisvc_core.rollout.plan import RolloutPlan, parse_plan
from llmisvc_core.rollout.weights import Weights

PLAN = parse_plan({"steps": [{"weight": 10}, {"weight": 50}, {"weight": 100}], "gate_timeout_seconds": 120})
AT_10 = Weights(stable=90, candidate=10)
START = Weights(stable=100, candidate=0)
OK = [Gate(name="canary RouterReady", state=GateState.PASSED)]
PENDING = [*OK, Gate(name="prometheus", state=GateState.PENDING, message="the query returned no value")]
FAILED = [*OK, Gate(name="prometheus", state=GateState.FAILED, message="err = 0.3, must be at most 0.05")]


def obs(name: str, weight: int, *, group: str | None = "g", exists: bool = True) -> MemberObservation:
    return MemberObservation(name=name, group=group, weight=weight, exists=exists)


def progress(next_step: int, expected: Weights = AT_10, last_good: Weights = START) -> Progress:
    return Progress(next_step=next_step, expected=expected, last_good=last_good)


CASES = [
    pytest.param(
        PLAN,
        progress(1),
        obs("stable", 90),
        obs("canary", 10, exists=False),
        OK,
        0,
        Pause(reason="canary is gone"),
        id="member_gone_pauses",
    ),
    pytest.param(
        PLAN,
        progress(1),
        obs("stable", 90, group="h"),
        obs("canary", 10),
        OK,
        0,
        Pause(reason="stable left group g (its group is h)"),
        id="member_left_group_pauses",
    ),
    pytest.param(
        PLAN,
        progress(1),
        obs("stable", 90),
        obs("canary", 30),
        FAILED,
        0,
        Pause(reason="weights edited by someone else: canary has weight 30, the rollout set 10"),
        id="edited_weights_pause_before_any_gate",
    ),
    pytest.param(
        PLAN,
        progress(2),
        obs("stable", 90),
        obs("canary", 10),
        FAILED,
        0,
        RollBack(weights=START, reason="gate failed: prometheus (err = 0.3, must be at most 0.05)"),
        id="failed_gate_rolls_back_to_last_good",
    ),
    pytest.param(
        PLAN.model_copy(update={"rollback": "stable"}),
        progress(2, last_good=AT_10),
        obs("stable", 90),
        obs("canary", 10),
        FAILED,
        0,
        RollBack(weights=START, reason="gate failed: prometheus (err = 0.3, must be at most 0.05)"),
        id="failed_gate_rolls_back_to_stable",
    ),
    pytest.param(
        PLAN,
        progress(1),
        obs("stable", 90),
        obs("canary", 10),
        PENDING,
        119.9,
        Wait(reason="waiting for gates: prometheus (the query returned no value)"),
        id="pending_waits",
    ),
    pytest.param(
        PLAN,
        progress(1),
        obs("stable", 90),
        obs("canary", 10),
        PENDING,
        120,
        RollBack(
            weights=START, reason="gates pending for over 120s: prometheus (the query returned no value)"
        ),
        id="pending_too_long_rolls_back",
    ),
    pytest.param(
        PLAN,
        progress(0, expected=START),
        obs("stable", 100),
        obs("canary", 0),
        OK,
        0,
        Advance(step=0, weights=AT_10),
        id="first_step",
    ),
    pytest.param(
        PLAN,
        progress(1),
        obs("stable", 90),
        obs("canary", 10),
        OK,
        500,
        Advance(step=1, weights=Weights(stable=50, candidate=50)),
        id="passing_gates_advance",
    ),
    pytest.param(
        PLAN,
        progress(3, expected=Weights(stable=0, candidate=100)),
        obs("stable", 0),
        obs("canary", 100),
        OK,
        0,
        Succeed(),
        id="last_step_dwelt_succeeds",
    ),
]


@pytest.mark.parametrize(("plan", "where", "stable", "candidate", "gates", "pending", "expected"), CASES)
def test_rollout_decision_table(
    plan: RolloutPlan,
    where: Progress,
    stable: MemberObservation,
    candidate: MemberObservation,
    gates: list[Gate],
    pending: float,
    expected: Decision,
) -> None:
    assert decision.decide(plan, "g", where, stable, candidate, gates, pending) == expected


def test_rollout_decision_zero_timeout_never_waits() -> None:
    plan = PLAN.model_copy(update={"gate_timeout_seconds": 0})
    got = decision.decide(plan, "g", progress(1), obs("stable", 90), obs("canary", 10), PENDING, 0)
    assert isinstance(got, RollBack)
