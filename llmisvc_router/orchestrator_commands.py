"""Commands that run or drive the orchestrator: ``worker``, ``run`` and, for people, ``reconcile``,
``stop``, ``resume`` and ``status`` of one service. They only wire settings to the worker, the watcher
and the Temporal client; the texts of their ``--help`` are in :mod:`llmisvc_router.help_texts`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from opentelemetry import trace
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from llmisvc_core.models.kube import LLMISVC
from llmisvc_kube.api import ApiError
from llmisvc_kube.client import KubeClusterApi
from llmisvc_kube.telemetry import ApiTelemetry
from llmisvc_router import help_texts, output
from llmisvc_router.errors import CommandError
from llmisvc_runtime import exit_codes, kube, logs, probes, telemetry, temporal
from llmisvc_runtime.environment import environment_from
from llmisvc_runtime.process import connect_process
from llmisvc_runtime.signals import stop_event
from worker.settings import OrchestratorSettings
from workflows.models import ReconcileSignal, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow
from workflows.starting import WorkflowStarter

_tracer = trace.get_tracer(__name__)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, help_text, description, watch in (
        ("worker", help_texts.WORKER_HELP, help_texts.WORKER, False),
        ("run", help_texts.RUN_HELP, help_texts.RUN, True),
    ):
        parser = help_texts.add_command(commands, name, help_text, description)
        _cluster_options(parser)
        _versioning_options(parser)
        logs.add_arguments(parser)
        _management_options(parser)
        _shutdown_options(parser)
        probe_options(parser)
        parser.set_defaults(handler=lambda a, w=watch: run_command(a, _serve, watch=w))
    for name, help_text, description in help_texts.DRIVE_COMMANDS:
        parser = help_texts.add_command(commands, name, help_text, description)
        parser.add_argument("service", metavar="NAMESPACE/NAME")
        if name == "status":
            output.add_argument(parser)
        _cluster_options(parser)
        parser.set_defaults(handler=lambda a, n=name: run_command(a, _drive, action=n))


def _management_options(parser: argparse.ArgumentParser) -> None:
    """Which services this deployment manages, and whether it writes (docs/operations.md)."""
    group = parser.add_argument_group("managed services and mode (docs/operations.md)")
    group.add_argument(
        "--namespace",
        action="append",
        default=None,
        metavar="NS",
        help="manage only services in NS (repeat; default: $LLMISVC_ROUTER_NAMESPACES, else all)",
    )
    group.add_argument(
        "--service-selector",
        metavar="SELECTOR",
        help="manage only services with these labels, e.g. 'router=llmisvc' "
        "(default: $LLMISVC_ROUTER_SERVICE_SELECTOR, else all)",
    )
    group.add_argument(
        "--mode",
        metavar="MODE",
        help="write (carry out the passes) or shadow (write nothing, report the drift) "
        "(default: $LLMISVC_ROUTER_MODE, else write)",
    )


def _shutdown_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("stopping (docs/operations.md, Upgrades and workflow versioning)")
    group.add_argument(
        "--shutdown-grace-seconds",
        type=int,
        metavar="S",
        help="on SIGTERM, stop polling and give running activities S seconds to finish before cancelling "
        "them; keep it below the pod's terminationGracePeriodSeconds "
        "(default: $LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS, else 30)",
    )


def probe_options(parser: argparse.ArgumentParser) -> None:
    """``--probe-port``, for every long-running process (``worker``, ``run``, ``watch``)."""
    group = parser.add_argument_group("probes (docs/operations.md, Health and readiness)")
    group.add_argument(
        "--probe-port",
        type=int,
        metavar="PORT",
        help="serve /healthz and /readyz on PORT, 0 for none "
        "(default: $LLMISVC_ROUTER_PROBE_PORT, else 8081)",
    )


def connection_options(parser: argparse.ArgumentParser) -> None:
    """Where the cluster and the workflows are: ``--kubeconfig``, ``--context``, ``--task-queue`` and
    ``--cluster``, for every command that reaches both."""
    parser.add_argument(
        "--kubeconfig", metavar="FILE", help="kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)"
    )
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: its current one)")
    parser.add_argument(
        "--task-queue",
        metavar="QUEUE",
        help="Temporal task queue of the workers (default: $LLMISVC_ROUTER_TASK_QUEUE, else llmisvc-router)",
    )
    add_cluster_option(parser)


def _cluster_options(parser: argparse.ArgumentParser) -> None:
    connection_options(parser)
    sizing = parser.add_argument_group("worker sizing (docs/operations.md)")
    for flag, variable, text, default in _SIZING_FLAGS:
        described = f"{text} (default: ${variable}, else {default})"
        sizing.add_argument(flag, type=int, metavar="N", help=described)


def add_cluster_option(parser: argparse._ActionsContainer, help_text: str | None = None) -> None:
    parser.add_argument(
        "--cluster",
        metavar="NAME",
        help=help_text
        or "this install's cluster name among those sharing the Temporal namespace, in the workflow ids "
        "(default: $LLMISVC_ROUTER_CLUSTER, else none; docs/operations.md, Many clusters)",
    )


def _versioning_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Worker Versioning (docs/operations.md, Versioned rollouts)")
    group.add_argument(
        "--deployment-name",
        metavar="NAME",
        help="register as a version of this Temporal Worker Deployment (default: "
        "$LLMISVC_ROUTER_DEPLOYMENT_NAME, else $TEMPORAL_DEPLOYMENT_NAME, else unversioned)",
    )
    group.add_argument(
        "--build-id",
        metavar="ID",
        help="this worker's build ID (default: $LLMISVC_ROUTER_BUILD_ID, else $TEMPORAL_WORKER_BUILD_ID, "
        "else the package version and $LLMISVC_ROUTER_IMAGE_TAG)",
    )


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
        kube_context=getattr(args, "context", None),
        task_queue=getattr(args, "task_queue", None),
        cluster=getattr(args, "cluster", None),
        namespaces=getattr(args, "namespace", None),
        mode=getattr(args, "mode", None),
        service_selector=getattr(args, "service_selector", None),
        deployment_name=getattr(args, "deployment_name", None),
        build_id=getattr(args, "build_id", None),
        shutdown_grace_seconds=getattr(args, "shutdown_grace_seconds", None),
        probe_port=getattr(args, "probe_port", None),
        **{
            flag[2:].replace("-", "_"): getattr(args, flag[2:].replace("-", "_"), None)
            for flag, *_ in _SIZING_FLAGS
        },
    )


def run_command(
    args: argparse.Namespace, main: Callable[..., Coroutine[Any, Any, int]], **options: Any
) -> int:
    logs.configure(getattr(args, "log_format", "text"), getattr(args, "log_level", "warning"))
    return asyncio.run(main(args, _settings(args), **options))


async def _serve(args: argparse.Namespace, settings: OrchestratorSettings, watch: bool) -> int:
    api_client, client = await connect_process(settings, "worker")  # `run` writes as the worker
    env = environment_from()
    stop = stop_event()
    api = KubeClusterApi(api_client, ApiTelemetry(telemetry.metric_meter(client)))
    from llmisvc_router.serving import serve

    # After connecting, as the metrics port: a process that cannot reach its cluster says that first.
    grace = settings.readiness_grace_seconds
    async with probes.serving(settings.probe_port, grace, probes.WORKER_PARTS) as health:
        health.watch_temporal(client)
        await serve(client, api_client, api, settings, env, stop, watch=watch, probes=health)
    return exit_codes.OK


def service_key(text: str) -> tuple[str, str]:
    namespace, _, name = text.partition("/")
    if not namespace or not name or "/" in name:
        raise CommandError(f"{text}: expected NAMESPACE/NAME", exit_codes.USAGE)
    return namespace, name


async def require_service(settings: OrchestratorSettings, namespace: str, name: str) -> None:
    """The object, not only its workflow: acting on a service that does not exist starts nothing."""
    await asyncio.to_thread(_require_service, settings, namespace, name)


def _require_service(settings: OrchestratorSettings, namespace: str, name: str) -> None:
    api_client = kube.connect_kube(settings.kubeconfig, settings.kube_context, settings.kube_connections)
    try:
        found = KubeClusterApi(api_client).get(LLMISVC, namespace, name)
    except ApiError as err:
        raise CommandError(
            f"cannot read LLMInferenceService {namespace}/{name}: {err.message}", exit_codes.UNAVAILABLE
        ) from err
    finally:
        api_client.close()
    if found is None:
        raise CommandError(f"no LLMInferenceService {namespace}/{name}", exit_codes.NOT_FOUND)


async def _drive(args: argparse.Namespace, settings: OrchestratorSettings, action: str) -> int:
    namespace, name = service_key(args.service)
    output_format = output.check(getattr(args, "output", "yaml"))  # refused before anything connects
    # The trace continues in the workflow.
    tracing = telemetry.install_tracing(settings.trace_exporters, settings.otlp_protocol)
    try:
        await require_service(settings, namespace, name)
        client = await temporal.connect()
        with _tracer.start_as_current_span(
            f"llmisvc-router {action}", attributes={"llmisvc.namespace": namespace, "llmisvc.name": name}
        ):
            return await _act(client, settings, action, namespace, name, output_format)
    finally:
        if tracing:
            trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]


async def _act(
    client: Client, settings: OrchestratorSettings, action: str, namespace: str, name: str, output_format: str
) -> int:
    service = f"{namespace}/{name}"
    if action == "status":
        handle = client.get_workflow_handle(workflow_id(namespace, name, settings.cluster))
        return await _print_status(handle, service, output_format)
    starter = await WorkflowStarter.create(
        client, settings.task_queue, settings.resync_seconds, settings.cluster
    )
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
        sys.stdout.write(output.render(summary.model_dump(mode="json", exclude_none=True)))
        return exit_codes.OK if summary.outcome.settled else exit_codes.FAILED
    await starter.signal_with_start(namespace, name, action)
    print(f"{action} requested for {service}; the next pass carries it out")
    return exit_codes.OK


async def _print_status(handle: WorkflowHandle[Any, Any], service: str, output_format: str) -> int:
    try:
        state = await handle.query(LLMInferenceServiceWorkflow.state)
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise CommandError(
                f"no workflow for {service} yet (is the watcher running? "
                f"`llmisvc-router reconcile {service}` starts one)",
                exit_codes.NOT_FOUND,
            ) from err
        raise CommandError(f"cannot query {service}: {err}", exit_codes.UNAVAILABLE) from err
    sys.stdout.write(output.render(output.status_document(service, state), output_format))
    return exit_codes.OK
