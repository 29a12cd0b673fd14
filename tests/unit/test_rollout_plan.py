"""The rollout plan (issue 22): its validation, one line naming the field, and the weights of each step.

No upstream has this; the weight bounds follow KServe's ``RouteSpec.Weight`` (int32, ``Minimum=0``,
proportional as Gateway API's backendRef weights: ``pkg/apis/serving/v1alpha2/llm_inference_service_types.go``
at ``aaac4e294``, #5727).
"""

from __future__ import annotations

from typing import Any

import pytest

from llmisvc_core.rollout import plan as plans
from llmisvc_core.rollout import weights
from llmisvc_core.rollout.weights import Weights


def _steps(*pairs: tuple[int, int]) -> list[dict[str, int]]:
    return [{"weight": w, "dwell_seconds": d} for w, d in pairs]


REFUSED = [
    pytest.param(
        {"steps": []},
        "rollout plan: steps: List should have at least 1 item after validation, not 0",
        id="no_steps",
    ),
    pytest.param(
        {"steps": _steps((50, 60), (40, 60), (100, 0))},
        "rollout plan: steps.1.weight: 40 is not above the previous step's 50",
        id="weights_must_climb",
    ),
    pytest.param(
        {"steps": _steps((10, 60), (50, 60))},
        "rollout plan: steps.1.weight: the last step must be 100, not 50",
        id="last_step_is_100",
    ),
    pytest.param(
        {"steps": _steps((0, 60), (100, 0))},
        "rollout plan: steps.0.weight: Input should be greater than or equal to 1",
        id="weight_above_0",
    ),
    pytest.param(
        {"steps": _steps((10, -1), (100, 0))},
        "rollout plan: steps.0.dwell_seconds: Input should be greater than or equal to 0",
        id="dwell_not_negative",
    ),
    pytest.param(
        {"steps": _steps((100, 0)), "total_weight": 0},
        "rollout plan: total_weight: Input should be greater than or equal to 1",
        id="total_positive",
    ),
    pytest.param(
        {"steps": _steps((100, 0)), "rollback": "nowhere"},
        "rollout plan: rollback: Input should be 'last-good' or 'stable'",
        id="rollback_choice",
    ),
    pytest.param(
        {"steps": _steps((100, 0)), "stepz": []},
        "rollout plan: stepz: Extra inputs are not permitted",
        id="unknown_field",
    ),
    pytest.param(
        {"steps": _steps((100, 0)), "prometheus": {"url": "prometheus:9090", "query": "up", "threshold": 1}},
        "rollout plan: prometheus.url: String should match pattern '^https?://[^\\s/]+'",
        id="prometheus_url_has_a_scheme",
    ),
    pytest.param(
        {"steps": _steps((100, 0)), "prometheus": {"url": "http://p:9090", "threshold": 1}},
        "rollout plan: prometheus.query: Field required",
        id="prometheus_needs_a_query",
    ),
]


@pytest.mark.parametrize(("data", "error"), REFUSED)
def test_rollout_plan_refused_with_one_line(data: dict[str, Any], error: str) -> None:
    with pytest.raises(plans.PlanError) as raised:
        plans.parse_plan(data)
    assert str(raised.value) == error
    assert "\n" not in str(raised.value)


def test_rollout_plan_defaults() -> None:
    plan = plans.parse_plan({"steps": _steps((10, 60), (100, 0))})
    assert (plan.total_weight, plan.gate_timeout_seconds, plan.rollback, plan.prometheus) == (
        100,
        300,
        "last-good",
        None,
    )


FLAGS = [
    pytest.param("10,50,100", "60s", [(10, 60), (50, 60), (100, 60)], id="seconds"),
    pytest.param("25, 100", "5m", [(25, 300), (100, 300)], id="minutes_and_spaces"),
    pytest.param("100", "1h", [(100, 3600)], id="hours"),
    pytest.param("100", "90", [(100, 90)], id="bare_number_is_seconds"),
]


@pytest.mark.parametrize(("steps", "dwell", "expected"), FLAGS)
def test_rollout_plan_from_flags(steps: str, dwell: str, expected: list[tuple[int, int]]) -> None:
    plan = plans.parse_plan({"steps": plans.steps_from_flags(steps, plans.parse_duration(dwell))})
    assert [(s.weight, s.dwell_seconds) for s in plan.steps] == expected


@pytest.mark.parametrize(
    ("steps", "dwell", "error"),
    [
        pytest.param(
            "10,fifty,100", "60s", "--steps: item 2 ('fifty') is not an integer", id="weight_not_int"
        ),
        pytest.param(
            "10,100",
            "1d",
            "--dwell: '1d' is not a duration (seconds, or a number with s, m or h)",
            id="unknown_unit",
        ),
        pytest.param(
            "10,100",
            "-5s",
            "--dwell: '-5s' is not a duration (seconds, or a number with s, m or h)",
            id="negative",
        ),
    ],
)
def test_rollout_plan_flags_refused(steps: str, dwell: str, error: str) -> None:
    with pytest.raises(plans.PlanError, match="^" + error.replace("(", r"\(").replace(")", r"\)") + "$"):
        plans.parse_plan({"steps": plans.steps_from_flags(steps, plans.parse_duration(dwell))})


SHARES = [
    pytest.param(100, 10, Weights(stable=90, candidate=10), id="percent_of_100"),
    pytest.param(100, 100, Weights(stable=0, candidate=100), id="all_to_candidate"),
    pytest.param(3, 50, Weights(stable=1, candidate=2), id="half_rounds_up"),
    pytest.param(3, 10, Weights(stable=3, candidate=0), id="small_share_rounds_to_0"),
    pytest.param(7, 33, Weights(stable=5, candidate=2), id="rounded_to_nearest"),
    pytest.param(1000, 0, Weights(stable=1000, candidate=0), id="none_to_candidate"),
]


@pytest.mark.parametrize(("total", "percent", "expected"), SHARES)
def test_rollout_weights_are_integers_adding_up_to_the_total(
    total: int, percent: int, expected: Weights
) -> None:
    got = weights.share(total, percent)
    assert got == expected
    assert got.stable + got.candidate == total


def test_rollout_rollback_target() -> None:
    plan = plans.parse_plan({"steps": _steps((10, 60), (100, 0))})
    good = Weights(stable=90, candidate=10)
    assert weights.rollback_target(plan, good) == good
    stable_plan = plan.model_copy(update={"rollback": "stable"})
    assert weights.rollback_target(stable_plan, good) == Weights(stable=100, candidate=0)
    assert weights.promoted(plan) == Weights(stable=0, candidate=100)
    assert weights.step_weights(plan, 0) == Weights(stable=90, candidate=10)
