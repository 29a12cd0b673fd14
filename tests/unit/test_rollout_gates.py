"""Rollout gates (issue 22): both services' ``RouterReady`` and ``WorkloadsReady``, their ``GroupReady``
(KServe's group status, ``router_group_status.go`` at ``aaac4e294``, #5798), and a Prometheus value
against a threshold."""

from __future__ import annotations

import pytest

from llmisvc_core.rollout import gates
from llmisvc_core.rollout.gates import Gate, GateState, MemberObservation, MetricSample
from llmisvc_core.rollout.plan import PrometheusGate

READY = {"RouterReady": "True", "WorkloadsReady": "True", "GroupReady": "True"}
P, W, F = GateState.PASSED, GateState.PENDING, GateState.FAILED


def member(name: str, **conds: str) -> MemberObservation:
    return MemberObservation(name=name, group="g", weight=0, conditions={**READY, **conds})


READINESS = [
    pytest.param({}, [P, P, P], id="all_true_pass"),
    pytest.param({"WorkloadsReady": "False"}, [P, W, P], id="false_is_pending"),
    pytest.param({"RouterReady": "Unknown"}, [W, P, P], id="unknown_is_pending"),
]


@pytest.mark.parametrize(("conds", "states"), READINESS)
def test_rollout_gate_readiness(conds: dict[str, str], states: list[GateState]) -> None:
    got = gates.readiness_gates(member("canary", **conds))
    assert [g.state for g in got] == states
    assert [g.name for g in got] == ["canary RouterReady", "canary WorkloadsReady", "canary GroupReady"]


def test_rollout_gate_absent_condition_is_pending() -> None:
    bare = MemberObservation(name="canary", conditions={"RouterReady": "True", "WorkloadsReady": "True"})
    assert gates.readiness_gates(bare)[2] == Gate(
        name="canary GroupReady", state=W, message="GroupReady is absent"
    )


ERRORS = PrometheusGate(url="http://p:9090", query="error_rate", threshold=0.05)
LATENCY = PrometheusGate(url="http://p:9090", query="throughput", threshold=10, pass_when="above")
METRICS = [
    pytest.param(
        ERRORS, MetricSample(value=0.01), P, "error_rate = 0.01, must be at most 0.05", id="below_passes"
    ),
    pytest.param(
        ERRORS, MetricSample(value=0.05), P, "error_rate = 0.05, must be at most 0.05", id="equal_passes"
    ),
    pytest.param(
        ERRORS, MetricSample(value=0.2), F, "error_rate = 0.2, must be at most 0.05", id="above_fails"
    ),
    pytest.param(
        LATENCY, MetricSample(value=3), F, "throughput = 3, must be at least 10", id="above_rule_fails"
    ),
    pytest.param(
        LATENCY, MetricSample(value=12), P, "throughput = 12, must be at least 10", id="above_rule_passes"
    ),
    pytest.param(ERRORS, MetricSample(), W, "the query returned no value", id="no_value_is_pending"),
    pytest.param(
        ERRORS, MetricSample(error="timed out"), W, "query failed: timed out", id="error_is_pending"
    ),
]


@pytest.mark.parametrize(("gate", "sample", "state", "message"), METRICS)
def test_rollout_gate_prometheus_threshold(
    gate: PrometheusGate, sample: MetricSample, state: GateState, message: str
) -> None:
    assert gates.metric_gate(gate, sample) == Gate(name="prometheus", state=state, message=message)


def test_rollout_gates_in_order() -> None:
    got = gates.evaluate(member("stable"), member("canary", GroupReady="False"), ERRORS, None)
    assert [g.name for g in got][::3] == ["stable RouterReady", "canary RouterReady", "prometheus"]
    assert (
        gates.summarize(got, W)
        == "canary GroupReady (GroupReady is False); prometheus (query failed: not queried)"
    )
    assert len(gates.evaluate(member("stable"), member("canary"), None, None)) == 6
