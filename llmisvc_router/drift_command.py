"""``llmisvc-router drift [NS/NAME] [-o yaml|json]``: shadow mode's report, from the workflows' ``drift``
query: for one service, or for every running service of the task queue that differs, the objects whose
live state differs from what the router would write, with the fields, and the status lines."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from llmisvc_router import help_texts, options, orchestrator_commands, output
from llmisvc_router.errors import CommandError
from llmisvc_runtime import exit_codes, temporal
from llmisvc_runtime.settings import OrchestratorSettings
from workflows.drift_report import DriftReport
from workflows.models import WORKFLOW_NAME, parse_workflow_id, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

HELP = "show what shadow mode found different from what the router would write"
DESCRIPTION = """\
Show shadow mode's drift (LLMISVC_ROUTER_MODE=shadow or --mode shadow on the worker): the objects whose
live state differs from what the router would write (create, update with the fields that differ,
delete) and the status conditions that would change, as the last pass of each service found them.
Without NAMESPACE/NAME: every running service of the task queue that differs. A service in write mode
shows drift 0 (each pass writes what differs).

examples:
  llmisvc-router drift                   # every differing service
  llmisvc-router drift llm/opt-125m
  llmisvc-router drift llm/opt-125m -o json
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = help_texts.add_command(commands, "drift", HELP, DESCRIPTION)
    parser.add_argument("service", metavar="NAMESPACE/NAME", nargs="?", help="one service (default: all)")
    output.add_argument(parser)
    options.connection(parser)
    parser.set_defaults(handler=lambda a: orchestrator_commands.run_command(a, _drift))


async def _drift(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    output.check(args.output)
    if args.service is None:
        client = await temporal.connect()
        document = await _all(client, settings)
    else:
        namespace, name = orchestrator_commands.service_key(args.service)
        await orchestrator_commands.require_service(settings, namespace, name)
        client = await temporal.connect()
        document = as_document(await _query(client, namespace, name, settings.cluster))
    sys.stdout.write(output.render(document, args.output))
    return exit_codes.OK


async def _query(client: Client, namespace: str, name: str, cluster: str) -> DriftReport:
    handle = client.get_workflow_handle(workflow_id(namespace, name, cluster))
    try:
        report: DriftReport = await handle.query(LLMInferenceServiceWorkflow.drift)
    except RPCError as err:
        service = f"{namespace}/{name}"
        if err.status == RPCStatusCode.NOT_FOUND:
            raise CommandError(
                f"no workflow for {service} (is the watcher running, and does its selector include it?)",
                exit_codes.NOT_FOUND,
            ) from err
        raise CommandError(f"cannot query {service}: {err}", exit_codes.UNAVAILABLE) from err
    return report


async def _all(client: Client, settings: OrchestratorSettings) -> dict[str, Any]:
    query = (
        f'WorkflowType = "{WORKFLOW_NAME}" AND ExecutionStatus = "Running" '
        f'AND TaskQueue = "{settings.task_queue}"'
    )
    reports = []
    try:
        async for execution in client.list_workflows(query):
            service = parse_workflow_id(execution.id)
            if service is None or service.cluster != settings.cluster:
                continue  # not this install's (a shared task queue)
            handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
            reports.append(await handle.query(LLMInferenceServiceWorkflow.drift))
    except RPCError as err:
        raise CommandError(f"cannot list the services' workflows: {err}", exit_codes.UNAVAILABLE) from err
    differing = sorted((r for r in reports if r.drift), key=lambda r: r.service)
    return {
        "services": len(reports),
        "differing": len(differing),
        "drift": [as_document(report) for report in differing],
    }


def as_document(report: DriftReport) -> dict[str, Any]:
    """The report as people read it: each differing object with its field lines."""
    objects: dict[str, list[str]] = {}
    for obj in report.objects:
        lines = list(obj.fields)
        if obj.fields_left_out:
            lines.append(f"and {obj.fields_left_out} more fields")
        objects[obj.describe()] = lines
    document: dict[str, Any] = {"service": report.service, "mode": report.mode, "drift": report.drift}
    if report.checked_at is not None:
        document["checked_at"] = report.checked_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    document["objects"] = objects
    document["status"] = list(report.status)
    return document
