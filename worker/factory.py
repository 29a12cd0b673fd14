"""The one place that assembles a worker: workflows, activities and the scheduler of their heartbeats, the
pydantic data converter and the workflow runner. The replay tests build their replayer here too, so what
is replayed is what runs in production."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import (
    FixedSizeSlotSupplier,
    Replayer,
    UnsandboxedWorkflowRunner,
    Worker,
    WorkerDeploymentConfig,
    WorkerTuner,
)

from activities.cancel_shield import ShieldCancellation
from activities.heartbeats import HeartbeatScheduler
from activities.rollout_activities import RolloutActivities
from activities.router_activities import RouterActivities
from llmisvc_runtime import temporal
from llmisvc_runtime.settings import DEFAULT_SHUTDOWN_GRACE, WorkerSizing
from worker.slots import InProgressFirst
from workflows.rollout_workflow import RolloutWorkflow
from workflows.service_workflow import LLMInferenceServiceWorkflow

WORKFLOWS: Sequence[type] = (LLMInferenceServiceWorkflow, RolloutWorkflow)
#: The workflows run outside Temporal's sandbox, which re-imports a workflow's modules for every workflow
#: instance: at a thousand services that was the worker's largest CPU cost, and a copy of the modules per
#: cached workflow. What the sandbox guards against is kept out by other means (docs/operations.md,
#: *Workflow code*): the import contract "Workflow code imports models and pure code only" in
#: pyproject.toml, and the replay tests.
WORKFLOW_RUNNER = UnsandboxedWorkflowRunner()
#: The processes' converter (their clients connect with it, ``llmisvc_runtime.temporal``), for the replayer
#: too.
DATA_CONVERTER = temporal.DATA_CONVERTER


#: How long a workflow task waits on a worker's own (sticky) queue before the server hands it to any
#: worker of the task queue. A SIGKILLed worker's sticky queue is never polled again, so each of its
#: workflows' next task waited this long (Temporal's default, 10 s) before the restarted worker got it;
#: a live worker takes its sticky tasks within milliseconds, so 3 s costs nothing when all is well.
STICKY_QUEUE_TIMEOUT = timedelta(seconds=3)


def build_worker(
    client: Client,
    task_queue: str,
    activities: RouterActivities,
    executor: Executor,
    sizing: WorkerSizing,
    deployment: WorkerDeploymentConfig | None = None,
    shutdown_grace: timedelta = DEFAULT_SHUTDOWN_GRACE,
) -> Worker:
    """The worker; with ``deployment`` (``worker.versioning``), a version of a Worker Deployment. Its
    ``shutdown()`` stops polling at once and gives running activities ``shutdown_grace`` to finish. The
    rollouts' activities share the router's cluster connection, cache and Event recorder."""
    rollouts = RolloutActivities(activities.api, activities.events, activities.view, activities.management)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=list(WORKFLOWS),
        activities=[*activities.all(), *rollouts.all()],
        activity_executor=executor,
        # heartbeating() works through the scheduler; the shield keeps a cancellation out of the pool's locks
        interceptors=[ShieldCancellation(), HeartbeatScheduler()],
        tuner=tuner(sizing),
        max_cached_workflows=sizing.max_cached_workflows,
        max_concurrent_workflow_task_polls=sizing.workflow_task_pollers,
        max_concurrent_activity_task_polls=sizing.activity_task_pollers,
        workflow_runner=WORKFLOW_RUNNER,
        deployment_config=deployment,
        sticky_queue_schedule_to_start_timeout=STICKY_QUEUE_TIMEOUT,
        graceful_shutdown_timeout=shutdown_grace,
    )


def tuner(sizing: WorkerSizing) -> WorkerTuner:
    """Fixed activity and local activity slots; workflow task slots that serve the workflows in progress
    before new ones (``worker.slots``)."""
    return WorkerTuner.create_composite(
        workflow_supplier=InProgressFirst(sizing.workflow_task_slots, sizing.new_workflow_room),
        activity_supplier=FixedSizeSlotSupplier(sizing.activity_threads),
        local_activity_supplier=FixedSizeSlotSupplier(sizing.local_activity_slots),
        nexus_supplier=FixedSizeSlotSupplier(1),  # no Nexus operations are registered
    )


def build_replayer() -> Replayer:
    return Replayer(workflows=list(WORKFLOWS), workflow_runner=WORKFLOW_RUNNER, data_converter=DATA_CONVERTER)
