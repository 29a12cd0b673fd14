"""What a rollout reports to Prometheus, through ``workflow.metric_meter()`` (nothing while replaying):

- ``llmisvc_router_rollout_step{llmisvc_namespace, group}``: the steps the rollout has written (0 before
  the first; after a rollback or an abort, the step it had reached);
- ``llmisvc_router_rollout_gate_checks_total{llmisvc_namespace, group, service, gate, state}``: each gate
  each time it was read, by state (``passed``, ``pending``, ``failed``); ``service`` is empty for the
  Prometheus gate.

Not "namespace": Prometheus puts the scraped pod's own namespace there.
"""

from __future__ import annotations

from temporalio import workflow

from activities.rollout_models import RolloutMembers
from llmisvc_core.rollout.gates import PROMETHEUS, Gate

STEP_METRIC = "llmisvc_router_rollout_step"
GATES_METRIC = "llmisvc_router_rollout_gate_checks"  # the exporter adds _total


def _labels(members: RolloutMembers) -> dict[str, str]:
    return {"llmisvc_namespace": members.namespace, "group": members.group}


def record_step(members: RolloutMembers, step: int) -> None:
    gauge = workflow.metric_meter().create_gauge(STEP_METRIC, "Steps a rollout has written, by group")
    gauge.set(step, _labels(members))


def record_gates(members: RolloutMembers, gates: list[Gate]) -> None:
    counter = workflow.metric_meter().create_counter(GATES_METRIC, "Rollout gate checks by gate and state")
    for gate in gates:
        service, _, condition = gate.name.rpartition(" ")
        labels = (
            {"service": service, "gate": condition}
            if gate.name != PROMETHEUS
            else {"service": "", "gate": PROMETHEUS}
        )
        counter.add(1, {**_labels(members), **labels, "state": gate.state.value})
