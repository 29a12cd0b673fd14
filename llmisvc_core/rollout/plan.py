"""The rollout plan: the steps (the candidate's share in percent, and how long to dwell there), how the
gates may wait and where a failed gate rolls back to, and an optional Prometheus gate.

A plan comes from flags or a small YAML file (``llmisvc-router rollout start``); :func:`parse_plan` turns
either into a :class:`RolloutPlan` or one line naming the field that is wrong.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from llmisvc_core.errors import InvalidInputError

#: KServe's weight is an int32 with ``Minimum=0`` (``llm_inference_service_types.go``).
MAX_WEIGHT = 2**31 - 1


class PlanError(InvalidInputError):
    """A plan that cannot run; the message is one line naming the field."""


class RolloutStep(BaseModel):
    """One step: the candidate gets ``weight`` percent of the pair's traffic for ``dwell_seconds``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weight: int = Field(ge=1, le=100)
    dwell_seconds: int = Field(default=60, ge=0, le=7 * 24 * 3600)


class PrometheusGate(BaseModel):
    """An instant query whose single value must stay at or below (``pass_when: below``) or at or above
    (``above``) ``threshold``; an error rate or a latency, say."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(pattern=r"^https?://[^\s/]+")
    query: str = Field(min_length=1)
    threshold: float
    pass_when: Literal["below", "above"] = "below"
    timeout_seconds: float = Field(default=5.0, gt=0, le=60)


class RolloutPlan(BaseModel):
    """Steps with strictly increasing weights, the last one at 100 (the candidate takes all the pair's
    traffic). ``total_weight`` is what the pair's weights add up to at every step: the weights are
    proportional (Gateway API's), so with other members in the group it keeps the pair's share.

    A gate that is pending (a condition not True yet, a query without an answer) is waited on for at most
    ``gate_timeout_seconds``, then counts as failed; the gates are read every ``gate_recheck_seconds``,
    during a dwell too. A failed gate rolls back to the weights of the last step whose gates passed
    (``last-good``) or gives the stable service all the traffic (``stable``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: list[RolloutStep] = Field(min_length=1, max_length=100)
    total_weight: int = Field(default=100, ge=1, le=MAX_WEIGHT // 100)
    gate_timeout_seconds: int = Field(default=300, ge=0, le=24 * 3600)
    gate_recheck_seconds: int = Field(default=10, ge=1, le=3600)
    rollback: Literal["last-good", "stable"] = "last-good"
    prometheus: PrometheusGate | None = None

    @model_validator(mode="after")
    def _steps_climb_to_100(self) -> RolloutPlan:
        for index, (before, step) in enumerate(zip(self.steps, self.steps[1:], strict=False), start=1):
            if step.weight <= before.weight:
                raise ValueError(
                    f"steps.{index}.weight: {step.weight} is not above the previous step's {before.weight}"
                )
        if self.steps[-1].weight != 100:
            raise ValueError(f"steps.{len(self.steps) - 1}.weight: the last step must be 100, not "
                             f"{self.steps[-1].weight}")  # fmt: skip
        return self


def parse_plan(data: Any, source: str = "rollout plan") -> RolloutPlan:
    """``data`` (a mapping, from YAML or flags) as a plan, or :class:`PlanError`: ``<source>: <field>:
    <problem>``, one line."""
    try:
        return RolloutPlan.model_validate(data)
    except ValidationError as err:
        raise PlanError(f"{source}: {_first_problem(err)}") from None


def _first_problem(err: ValidationError) -> str:
    problem = err.errors()[0]
    message = str(problem["msg"]).removeprefix("Value error, ")
    where = ".".join(str(part) for part in problem["loc"])
    if problem["type"] == "value_error" and not where:
        return message  # a cross-field rule names its own field
    return f"{where or 'plan'}: {message}"


def steps_from_flags(weights: str, dwell_seconds: int) -> list[dict[str, int]]:
    """``--steps 10,50,100 --dwell 60s`` as step mappings; PlanError when a weight is not an integer."""
    steps = []
    for index, text in enumerate(weights.split(",")):
        try:
            steps.append({"weight": int(text.strip()), "dwell_seconds": dwell_seconds})
        except ValueError:
            raise PlanError(f"--steps: item {index + 1} ({text.strip()!r}) is not an integer") from None
    return steps


_UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_duration(text: str, what: str = "--dwell") -> int:
    """``90``, ``90s``, ``5m`` or ``1h`` as seconds; PlanError otherwise."""
    value = text.strip()
    unit = _UNITS.get(value[-1:], 0)
    number = value[:-1] if unit else value
    if not number.isdigit():
        raise PlanError(f"{what}: {text!r} is not a duration (seconds, or a number with s, m or h)")
    return int(number) * (unit or 1)
