"""Finding and ending the workflows of an install, by a visibility list and the one id format
(:func:`workflows.models.parse_workflow_id`): ``llmisvc-router uninstall`` ends those of a cluster or of
every cluster, and the watcher of an install newly given a cluster name ends the workflows it started
under the unnamed ids (:func:`end_unnamed_workflows`) before it starts them again under the new ones.

Ending is terminating, with a reason the workflow's history shows: the workflow writes nothing more,
and Kubernetes objects are left as they are."""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from workflows.models import WORKFLOW_NAME, ServiceWorkflowId, parse_workflow_id, workflow_id


@dataclass(frozen=True)
class RunningWorkflow:
    """One running workflow of this router: its id, what it parses to, and its task queue."""

    id: str
    service: ServiceWorkflowId
    task_queue: str


async def running_workflows(client: Client, task_queue: str | None = None) -> list[RunningWorkflow]:
    """The router's running workflows in the client's namespace (of one task queue if given), sorted by
    id; a workflow of the same type whose id is not the router's is left out."""
    query = f'WorkflowType = "{WORKFLOW_NAME}" AND ExecutionStatus = "Running"'
    if task_queue is not None:
        query += f' AND TaskQueue = "{task_queue}"'
    found = []
    async for execution in client.list_workflows(query):
        service = parse_workflow_id(execution.id)
        if service is not None:
            found.append(RunningWorkflow(execution.id, service, execution.task_queue))
    return sorted(found, key=lambda w: w.id)


async def end_workflow(client: Client, wid: str, reason: str) -> bool:
    """Terminate the running workflow ``wid``; False when none was running (ended meanwhile), so that
    ending twice is no error."""
    try:
        await client.get_workflow_handle(wid).terminate(reason=reason)
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


def migration_reason(service: ServiceWorkflowId, cluster: str) -> str:
    new_id = workflow_id(service.namespace, service.name, cluster)
    return (
        f"moved to {new_id}: this install is now cluster {cluster} (LLMISVC_ROUTER_CLUSTER); "
        "its watcher starts the service's workflow under the new id"
    )


async def end_unnamed_workflows(client: Client, task_queue: str, cluster: str) -> list[RunningWorkflow]:
    """For an install newly given the cluster name ``cluster``: end its workflows under the unnamed ids
    (``llmisvc/<namespace>/<name>``), so that the watcher's start-up, which starts every service's
    workflow under ``llmisvc/<cluster>/…``, leaves one writer per service. Only those on ``task_queue``
    are this install's: another install without a cluster name sharing the Temporal namespace has a task
    queue of its own (docs/operations.md, *Many clusters, one Temporal namespace*). Returns those
    ended."""
    ended = []
    for running in await running_workflows(client, task_queue):
        if running.service.cluster:
            continue
        if await end_workflow(client, running.id, migration_reason(running.service, cluster)):
            ended.append(running)
    return ended
