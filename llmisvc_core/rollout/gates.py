"""The gates checked before each step: both services' ``RouterReady`` and ``WorkloadsReady``, their
``GroupReady`` (the group as each member sees it), and the optional Prometheus value against its
threshold.

A gate passes, is pending (not known yet, or not True yet: a workload still starting, a query without an
answer) or fails (the metric is past its threshold). Pending gates are waited on for the plan's
``gate_timeout_seconds``; :mod:`llmisvc_core.rollout.decision` turns that into a rollback.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from llmisvc_core.rollout.plan import PrometheusGate
from llmisvc_core.world import conditions

#: The conditions each service must have True, in the order they are reported.
READINESS = (conditions.ROUTER_READY, conditions.WORKLOADS_READY, conditions.GROUP_READY)
PROMETHEUS = "prometheus"


class GateState(StrEnum):
    PASSED = "passed"
    PENDING = "pending"
    FAILED = "failed"


class Gate(BaseModel):
    """One gate's result, as the status query and the workflow's details show it."""

    model_config = ConfigDict(frozen=True)

    name: str
    state: GateState
    message: str = ""


class MemberObservation(BaseModel):
    """One service as the rollout reads it: absent, or its group, weight, resourceVersion and conditions
    (type -> status)."""

    model_config = ConfigDict(frozen=True)

    name: str
    exists: bool = True
    group: str | None = None
    weight: int = 0
    resource_version: str = ""
    conditions: dict[str, str] = Field(default_factory=dict)


class MetricSample(BaseModel):
    """What the Prometheus query returned: one value, none (no series), or an error."""

    model_config = ConfigDict(frozen=True)

    value: float | None = None
    error: str | None = None


def readiness_gates(member: MemberObservation) -> list[Gate]:
    gates = []
    for condition in READINESS:
        status = member.conditions.get(condition)
        name = f"{member.name} {condition}"
        if status == conditions.TRUE:
            gates.append(Gate(name=name, state=GateState.PASSED))
        else:
            gates.append(
                Gate(name=name, state=GateState.PENDING, message=f"{condition} is {status or 'absent'}")
            )
    return gates


def metric_gate(gate: PrometheusGate, sample: MetricSample) -> Gate:
    """Pass when the value is on the right side of the threshold (equal passes)."""
    if sample.error is not None:
        return Gate(name=PROMETHEUS, state=GateState.PENDING, message=f"query failed: {sample.error}")
    if sample.value is None:
        return Gate(name=PROMETHEUS, state=GateState.PENDING, message="the query returned no value")
    value, limit = sample.value, gate.threshold
    good = value <= limit if gate.pass_when == "below" else value >= limit
    side = "at most" if gate.pass_when == "below" else "at least"
    message = f"{gate.query} = {value:g}, must be {side} {limit:g}"
    return Gate(name=PROMETHEUS, state=GateState.PASSED if good else GateState.FAILED, message=message)


def evaluate(
    stable: MemberObservation,
    candidate: MemberObservation,
    gate: PrometheusGate | None,
    sample: MetricSample | None,
) -> list[Gate]:
    """Every gate, readiness of the stable then the candidate service, then the metric."""
    gates = readiness_gates(stable) + readiness_gates(candidate)
    if gate is not None:
        gates.append(metric_gate(gate, sample or MetricSample(error="not queried")))
    return gates


def summarize(gates: list[Gate], state: GateState) -> str:
    """The gates in ``state``, ``name (message)``, joined: for reasons and Events."""
    return "; ".join(f"{g.name} ({g.message})" if g.message else g.name for g in gates if g.state == state)
