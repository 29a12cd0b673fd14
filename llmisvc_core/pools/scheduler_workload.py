"""SchedulerWorkloadReady from the scheduler Deployment (spec R-SCH-4), set by the scheduler step.

The Deployment belongs to the workload reconciler; the router only reads its status. ``None`` stands for a
Deployment not found or with no status yet.
"""

from __future__ import annotations

from llmisvc_core.models.core_objects import Deployment
from llmisvc_core.models.kube import Condition, find_condition
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions

DEPLOYMENT_PROGRESSING = "Progressing"
DEPLOYMENT_AVAILABLE = "Available"
PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"
ROLLOUT_IN_PROGRESS = "Deployment rollout in progress"


def scheduler_workload_verdict(deployment: Deployment | None) -> tuple[str, str, str]:
    """R-SCH-4 steps 1-4 as ``(status, reason, message)``; ``None`` is a Deployment with no status yet."""
    status = deployment.status if deployment is not None else None
    if status is not None and (status.available_replicas or 0) > 0:
        return conditions.TRUE, "", ""
    found = status.conditions if status is not None else None
    for cond in found or []:
        if cond.type == DEPLOYMENT_PROGRESSING and _is_deadline_exceeded(cond):
            return conditions.FALSE, PROGRESS_DEADLINE_EXCEEDED, cond.message or ""
    available = find_condition(found, DEPLOYMENT_AVAILABLE)
    if available is not None:
        if available.status == conditions.TRUE:
            return conditions.TRUE, "", ""
        return conditions.FALSE, available.reason or "", available.message or ""
    return conditions.FALSE, DEPLOYMENT_PROGRESSING, ROLLOUT_IN_PROGRESS


def mark_scheduler_workload(conds: Conditions, deployment: Deployment | None) -> None:
    """Write the R-SCH-4 verdict to SchedulerWorkloadReady."""
    mark_deployment_condition(conds, conditions.SCHEDULER_WORKLOAD_READY, deployment)


def mark_deployment_condition(conds: Conditions, type_: str, deployment: Deployment | None) -> None:
    """Write the R-SCH-4 verdict to ``type_``: KServe's ``propagateComponentDeploymentStatus`` serves the
    scheduler and the tokenizer Deployments alike."""
    status, reason, message = scheduler_workload_verdict(deployment)
    if status == conditions.TRUE:
        conds.mark_true(type_)
    else:
        conds.mark_false(type_, reason, message)


def _is_deadline_exceeded(cond: Condition) -> bool:
    return cond.status == conditions.FALSE and cond.reason == PROGRESS_DEADLINE_EXCEEDED
