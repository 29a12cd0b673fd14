"""A workflow whose every task fails, run on a process's runtime, so that its metrics endpoint carries the
SDK's workflow-task-failure counter (``temporal_workflow_task_execution_failed_total``) the dashboard
alerts on: a counter appears only once something increments it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from temporalio import workflow
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

FAILED_TASKS = "temporal_workflow_task_execution_failed_total"


@workflow.defn(name="AlwaysFailingTask", sandboxed=False)
class AlwaysFailingTask:
    @workflow.run
    async def run(self) -> None:
        raise RuntimeError("a deliberate bug: every task of this workflow fails")


@asynccontextmanager
async def failing_workflow_task(client: Client) -> AsyncIterator[WorkflowHandle[AlwaysFailingTask, None]]:
    """A worker on a task queue of its own and one started ``AlwaysFailingTask``; terminated at the end."""
    task_queue = f"failing-task-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=task_queue, workflows=[AlwaysFailingTask]):
        handle = await client.start_workflow(
            AlwaysFailingTask.run, id=f"always-failing-{task_queue}", task_queue=task_queue
        )
        try:
            yield handle
        finally:
            await handle.terminate("test finished")
