"""Commands that run or drive the orchestrator: ``worker``, ``run`` and, for people, ``reconcile``,
``stop``, ``resume`` and ``status`` of one service. They only wire settings to the worker, the watcher
and the Temporal client; the texts of their ``--help`` are in :mod:`llmisvc_router.help_texts`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from opentelemetry import trace
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from llmisvc_cache.model import SeenVersion, Wire
from llmisvc_core.models.kube import LLMISVC
from llmisvc_kube.api import ApiError
from llmisvc_kube.client import KubeClusterApi
from llmisvc_kube.telemetry import ApiTelemetry
from llmisvc_router import help_texts, options, output
from llmisvc_router.errors import CommandError
from llmisvc_runtime import exit_codes, kube, logs, probes, telemetry, temporal
from llmisvc_runtime.environment import environment_from
from llmisvc_runtime.process import connect_process
from llmisvc_runtime.settings import OrchestratorSettings
from llmisvc_runtime.signals import stop_event
from workflows.models import ReconcileSignal, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow
from workflows.starting import WorkflowStarter

_tracer = trace.get_tracer(__name__)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, help_text, description, handler in (
        ("worker", help_texts.WORKER_HELP, help_texts.WORKER, _worker),
        ("run", help_texts.RUN_HELP, help_texts.RUN, _run),
    ):
        parser = help_texts.add_command(commands, name, help_text, description)
        options.connection(parser)
        options.sizing(parser)
        options.versioning(parser)
        logs.add_arguments(parser)
        options.selection(parser, mode=True)
        options.shutdown(parser)
        options.probes(parser)
        parser.set_defaults(handler=lambda a, h=handler: run_command(a, h))
    for name, help_text, description, handler in (
        ("reconcile", *help_texts.RECONCILE, _reconcile),
        ("stop", *help_texts.STOP, _stop),
        ("resume", *help_texts.RESUME, _resume),
        ("status", *help_texts.STATUS, _status),
    ):
        parser = help_texts.add_command(commands, name, help_text, description)
        parser.add_argument("service", metavar="NAMESPACE/NAME")
        if name == "status":
            output.add_argument(parser)
        options.connection(parser)
        parser.set_defaults(handler=lambda a, h=handler: run_command(a, h))


Command = Callable[[argparse.Namespace, OrchestratorSettings], Coroutine[Any, Any, int]]


def run_command(args: argparse.Namespace, command: Command) -> int:
    """Run ``command`` with the settings of the environment and the options (warnings only in the logs
    of a command without ``--log-level``)."""
    logs.configure(getattr(args, "log_format", "text"), getattr(args, "log_level", "warning"))
    return asyncio.run(command(args, options.settings(args)))


async def _worker(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    return await _serve(settings, watch=False)


async def _run(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    return await _serve(settings, watch=True)


async def _serve(settings: OrchestratorSettings, watch: bool) -> int:
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


async def require_service(settings: OrchestratorSettings, namespace: str, name: str) -> Wire:
    """The object, not only its workflow: acting on a service that does not exist starts nothing."""
    return await asyncio.to_thread(_require_service, settings, namespace, name)


def _require_service(settings: OrchestratorSettings, namespace: str, name: str) -> Wire:
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
    return found


@contextlib.asynccontextmanager
async def _driving(
    args: argparse.Namespace, settings: OrchestratorSettings, command: str
) -> AsyncIterator[tuple[Client, str, str, Wire]]:
    """What driving a service starts with: the service named, read from Kubernetes (one that does not exist
    gets nothing started), the Temporal client, and a trace that the workflow continues."""
    namespace, name = service_key(args.service)
    tracing = telemetry.install_tracing(settings.trace_exporters, settings.otlp_protocol)
    try:
        found = await require_service(settings, namespace, name)
        client = await temporal.connect()
        with _tracer.start_as_current_span(
            f"llmisvc-router {command}", attributes={"llmisvc.namespace": namespace, "llmisvc.name": name}
        ):
            yield client, namespace, name, found
    finally:
        if tracing:
            trace.get_tracer_provider().force_flush()  # type: ignore[attr-defined]


async def _reconcile(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    """A pass now, its workflow started if none runs; exit 1 when the pass did not settle."""
    async with _driving(args, settings, "reconcile") as (client, namespace, name, found):
        starter = await _starter(client, settings)
        operation = WithStartWorkflowOperation(
            LLMInferenceServiceWorkflow.run,
            starter.workflow_input(namespace, name),
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            **starter.options(namespace, name),
        )
        summary = await client.execute_update_with_start_workflow(
            LLMInferenceServiceWorkflow.reconcile_now,
            # The pass waits for the worker's cache to hold the service as read here: a change applied
            # just before the command is planned on, not the version the cache had.
            ReconcileSignal(reason="llmisvc-router reconcile", seen=[SeenVersion.stored(LLMISVC, found)]),
            start_workflow_operation=operation,
        )
    sys.stdout.write(output.render(summary.model_dump(mode="json", exclude_none=True)))
    return exit_codes.OK if summary.outcome.settled else exit_codes.FAILED


async def _stop(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    return await _request(args, settings, "stop", LLMInferenceServiceWorkflow.stop)


async def _resume(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    return await _request(args, settings, "resume", LLMInferenceServiceWorkflow.resume)


async def _request(
    args: argparse.Namespace, settings: OrchestratorSettings, command: str, signal: Callable[..., None]
) -> int:
    """``signal`` delivered to the service's workflow, started if none runs; the next pass acts on it."""
    async with _driving(args, settings, command) as (client, namespace, name, _):
        starter = await _starter(client, settings)
        await starter.signal_with_start(namespace, name, signal.__name__)
    print(f"{command} requested for {namespace}/{name}; the next pass carries it out")
    return exit_codes.OK


async def _starter(client: Client, settings: OrchestratorSettings) -> WorkflowStarter:
    return await WorkflowStarter.create(
        client, settings.task_queue, settings.resync_seconds, settings.cluster
    )


async def _status(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    output_format = output.check(args.output)  # refused before anything connects
    async with _driving(args, settings, "status") as (client, namespace, name, _):
        handle = client.get_workflow_handle(workflow_id(namespace, name, settings.cluster))
        return await _print_status(handle, f"{namespace}/{name}", output_format)


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
