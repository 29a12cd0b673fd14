"""Commands that run or drive the orchestrator: ``worker``, ``run`` and, for people, ``reconcile``,
``stop``, ``resume`` and ``status`` of one service. They only wire settings to the worker, the watcher
and the Temporal client."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import yaml
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.runtime import Runtime
from temporalio.service import RPCError, RPCStatusCode

from activities.api_telemetry import ApiTelemetry
from activities.kube_api import KubeClusterApi, load_api_client
from llmisvc_router.signals import stop_event
from worker import telemetry
from worker.environment import environment_from
from worker.settings import OrchestratorSettings, SettingsError, connect_temporal
from worker.starting import WorkflowStarter
from workflows.models import ReconcileSignal, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

EXIT_USAGE = 2
EXIT_FAILED = 1


class CommandError(Exception):
    """A one-line, user-facing failure (exit status in ``code``)."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = commands.add_parser("worker", help="run the Temporal worker (workflows and activities)")
    _cluster_options(worker)
    worker.set_defaults(handler=lambda a: _run(a, _serve, watch=False))
    run = commands.add_parser("run", help="run the worker and the watcher in one process (small installs)")
    _cluster_options(run)
    run.add_argument("--namespace", action="append", default=None, help="watch only this namespace (repeat)")
    run.set_defaults(handler=lambda a: _run(a, _serve, watch=True))
    for name, text in (
        ("reconcile", "run a pass now and print its outcome"),
        ("stop", "stop the service (sets serving.kserve.io/stop through its workflow)"),
        ("resume", "resume a stopped service"),
        ("status", "show the workflow's view of the service"),
    ):
        parser = commands.add_parser(name, help=text, description=text)
        parser.add_argument("service", metavar="NAMESPACE/NAME")
        parser.add_argument("--task-queue", help="task queue of the workers (default: settings)")
        parser.set_defaults(handler=lambda a, n=name: _run(a, _drive, action=n))


def _cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)"
    )
    parser.add_argument("--task-queue", help="Temporal task queue (default: $LLMISVC_ROUTER_TASK_QUEUE)")
    sizing = parser.add_argument_group("worker sizing (docs/operations.md)")
    for flag, variable, text, default in _SIZING_FLAGS:
        described = f"{text} (default: ${variable}, else {default})"
        sizing.add_argument(flag, type=int, metavar="N", help=described)


_SIZING_FLAGS = (
    ("--activity-threads", "LLMISVC_ROUTER_ACTIVITY_THREADS", "activities run at once", "16"),
    ("--max-cached-workflows", "LLMISVC_ROUTER_MAX_CACHED_WORKFLOWS", "workflows kept in memory", "1000"),
    ("--workflow-task-pollers", "LLMISVC_ROUTER_WORKFLOW_TASK_POLLERS", "workflow task polls at once", "5"),
    ("--activity-task-pollers", "LLMISVC_ROUTER_ACTIVITY_TASK_POLLERS", "activity task polls at once", "5"),
    (
        "--kube-connections",
        "LLMISVC_ROUTER_KUBE_CONNECTIONS",
        "Kubernetes API connections kept open, at least the activity threads",
        "the threads + 12",
    ),
)

_SIZING_FIELDS = [flag.removeprefix("--").replace("-", "_") for flag, *_ in _SIZING_FLAGS]


def _settings(args: argparse.Namespace) -> OrchestratorSettings:
    return OrchestratorSettings.from_env().with_flags(
        kubeconfig=getattr(args, "kubeconfig", None),
        task_queue=getattr(args, "task_queue", None),
        namespaces=getattr(args, "namespace", None),
        **{
            flag[2:].replace("-", "_"): getattr(args, flag[2:].replace("-", "_"), None)
            for flag, *_ in _SIZING_FLAGS
        },
    )


def _run(args: argparse.Namespace, main: Callable[..., Coroutine[Any, Any, int]], **options: Any) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(main(args, _settings(args), **options))
    except (CommandError, SettingsError) as err:
        print(f"llmisvc-router {args.command}: {err}", file=sys.stderr)
        return err.code if isinstance(err, CommandError) else EXIT_USAGE


async def _connect(runtime: Runtime | None = None) -> Client:
    try:
        return await connect_temporal(runtime=runtime)
    except (RuntimeError, OSError, ValueError) as err:
        raise CommandError(f"cannot connect to Temporal: {err}") from err


async def _serve(args: argparse.Namespace, settings: OrchestratorSettings, watch: bool) -> int:
    try:
        runtime = telemetry.start(settings)
    except telemetry.TelemetryError as err:
        raise CommandError(str(err)) from err
    client = await _connect(runtime)
    try:
        api_client = load_api_client(settings.kubeconfig, settings.kube_context, settings.kube_connections)
    except Exception as err:  # the kubernetes config loaders raise a variety of types
        raise CommandError(f"cannot load the Kubernetes configuration: {err}") from err
    env = environment_from()
    stop = stop_event()
    api = KubeClusterApi(api_client, ApiTelemetry(telemetry.metric_meter(client)))
    from llmisvc_router.serving import serve

    await serve(client, api_client, api, settings, env, stop, watch=watch)
    return 0


def _service_key(text: str) -> tuple[str, str]:
    namespace, _, name = text.partition("/")
    if not namespace or not name or "/" in name:
        raise CommandError(f"{text}: expected NAMESPACE/NAME", EXIT_USAGE)
    return namespace, name


async def _drive(args: argparse.Namespace, settings: OrchestratorSettings, action: str) -> int:
    namespace, name = _service_key(args.service)
    client = await _connect()
    if action == "status":
        return await _print_status(client.get_workflow_handle(workflow_id(namespace, name)), args.service)
    starter = await WorkflowStarter.create(client, settings.task_queue, settings.resync_seconds)
    if action == "reconcile":
        operation = WithStartWorkflowOperation(
            LLMInferenceServiceWorkflow.run,
            starter.workflow_input(namespace, name),
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            **starter.options(namespace, name),
        )
        summary = await client.execute_update_with_start_workflow(
            LLMInferenceServiceWorkflow.reconcile_now,
            ReconcileSignal(reason="llmisvc-router reconcile"),
            start_workflow_operation=operation,
        )
        _print_yaml(summary.model_dump(mode="json", exclude_none=True))
        return 0 if summary.outcome.settled else EXIT_FAILED
    await starter.signal_with_start(namespace, name, action)
    print(f"{action} requested for {args.service}; the next pass carries it out")
    return 0


async def _print_status(handle: WorkflowHandle[Any, Any], service: str) -> int:
    try:
        state = await handle.query(LLMInferenceServiceWorkflow.state)
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise CommandError(f"no workflow for {service} (is the watcher running?)") from err
        raise CommandError(f"cannot query {service}: {err}") from err
    _print_yaml(state.model_dump(mode="json", exclude_none=True))
    return 0


def _print_yaml(document: dict[str, Any]) -> None:
    yaml.safe_dump(document, sys.stdout, sort_keys=False, default_flow_style=False)
