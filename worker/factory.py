"""The one place that assembles a worker: workflows, activities, the pydantic data converter and the
sandbox passthrough list. The replay tests build their replayer here too, so what is replayed is what
runs in production."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.router_activities import RouterActivities
from workflows.service_workflow import LLMInferenceServiceWorkflow

WORKFLOWS: Sequence[type] = (LLMInferenceServiceWorkflow,)
#: Deterministic, side-effect-free modules loaded once outside the sandbox instead of per workflow run.
#: ``opentelemetry`` too, with or without the tracing plugin: its global tracer provider must be the
#: process's, not a fresh copy per run (the pass span of ``workflows.pass_telemetry`` looks it up).
PASSTHROUGH_MODULES = (
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "router_core",
    "activities",
    "cluster_cache.model",
    "opentelemetry",
)
DATA_CONVERTER = pydantic_data_converter


def workflow_runner() -> SandboxedWorkflowRunner:
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES)
    return SandboxedWorkflowRunner(restrictions=restrictions)


def build_worker(
    client: Client,
    task_queue: str,
    activities: RouterActivities,
    executor: Executor,
    max_concurrent_activities: int = 20,
) -> Worker:
    return Worker(
        client,
        task_queue=task_queue,
        workflows=list(WORKFLOWS),
        activities=activities.all(),
        activity_executor=executor,
        max_concurrent_activities=max_concurrent_activities,
        workflow_runner=workflow_runner(),
    )


def build_replayer() -> Replayer:
    return Replayer(
        workflows=list(WORKFLOWS), workflow_runner=workflow_runner(), data_converter=DATA_CONVERTER
    )
