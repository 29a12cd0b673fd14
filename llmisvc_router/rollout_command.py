"""``llmisvc-router rollout start|status|pause|resume|promote|abort NAMESPACE/GROUP``: a progressive
rollout of a routing group (``workflows.rollout_workflow``), one command per move. The plan comes from
flags (``--steps 10,50,100 --dwell 60s``) or a YAML file (``-f plan.yaml``, flags override it)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import socket
from pathlib import Path
from typing import Any

import yaml
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from activities.rollout_activities import observe
from activities.rollout_models import RolloutMembers
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.rollout import plan as plans
from llmisvc_core.rollout.plan import RolloutPlan
from llmisvc_kube.api import ApiError
from llmisvc_kube.client import KubeClusterApi
from llmisvc_router import output, rollout_help
from llmisvc_router.errors import CommandError
from llmisvc_router.orchestrator_commands import connection_options, service_key
from llmisvc_runtime import exit_codes, kube, logs, temporal
from worker.settings import OrchestratorSettings
from workflows.rollout_details import static_details, summary
from workflows.rollout_models import ControlRequest, RolloutInput, RolloutStatus, rollout_workflow_id
from workflows.rollout_workflow import RolloutWorkflow

ACTIONS = ("start", "status", "pause", "resume", "promote", "abort")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from llmisvc_router import help_texts

    parser = help_texts.add_command(commands, "rollout", rollout_help.HELP, rollout_help.DESCRIPTION)
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for action in ACTIONS:
        sub = actions.add_parser(
            action,
            help=rollout_help.ACTIONS[action],
            description=rollout_help.ACTIONS[action],
            epilog=rollout_help.EXAMPLES[action],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument(
            "group", metavar="NAMESPACE/GROUP", help="the routing group (spec.router.route.group)"
        )
        if action == "start":
            _plan_options(sub)
        output.add_argument(sub)
        connection_options(sub)
        sub.set_defaults(handler=_run)


def _plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stable", required=True, metavar="NAME", help="the service that has the traffic now"
    )
    parser.add_argument("--candidate", required=True, metavar="NAME", help="the service to move it to")
    plan = parser.add_argument_group("the plan (docs/rollouts.md); flags override -f")
    plan.add_argument("-f", "--file", metavar="PLAN.yaml", help="the plan as YAML (steps, gates, rollback)")
    plan.add_argument("--steps", metavar="W,W,…", help="the candidate's percent at each step, ending at 100")
    plan.add_argument("--dwell", metavar="DURATION", help="time at each step: 90, 90s, 5m, 1h (default 60s)")
    plan.add_argument(
        "--gate-timeout", metavar="DURATION", help="how long gates may stay pending (default 5m)"
    )
    plan.add_argument("--rollback", choices=("last-good", "stable"), help="where a failed gate goes back to")
    plan.add_argument("--prometheus-url", metavar="URL", help="Prometheus, e.g. http://prometheus:9090")
    plan.add_argument("--query", metavar="PROMQL", help="an instant query with one value (error rate, …)")
    plan.add_argument("--threshold", type=float, metavar="X", help="the query's value must stay at most X")
    plan.add_argument(
        "--pass-when", choices=("below", "above"), help="below (default) or above the threshold"
    )


def _run(args: argparse.Namespace) -> int:
    logs.configure("text", "warning")
    settings = OrchestratorSettings.from_env().with_flags(
        kubeconfig=args.kubeconfig,
        kube_context=args.context,
        task_queue=args.task_queue,
        cluster=args.cluster,
    )
    return asyncio.run(_act(args, settings))


async def _act(args: argparse.Namespace, settings: OrchestratorSettings) -> int:
    namespace, group = service_key(args.group)
    output_format = output.check(args.output)
    plan = build_plan(args) if args.action == "start" else None  # refused before anything connects
    if args.action == "start":
        members = RolloutMembers(
            namespace=namespace, group=group, stable=args.stable, candidate=args.candidate
        )
        await asyncio.to_thread(_require_members, settings, members)
    client = await temporal.connect()
    wid = rollout_workflow_id(namespace, group, settings.cluster)
    if plan is not None:
        status = await _start(client, settings, wid, RolloutInput(members=members, plan=plan))
    elif args.action == "status":
        status = await _query(client.get_workflow_handle(wid), f"{namespace}/{group}")
    else:
        status = await _control(client.get_workflow_handle(wid), args.action, f"{namespace}/{group}")
    document = {"id": wid, **status.model_dump(mode="json")}
    print(output.render(document, output_format), end="")
    return exit_codes.OK


def build_plan(args: argparse.Namespace) -> RolloutPlan:
    """The plan from ``-f`` and the flags (flags win); CommandError (exit 2) naming the field."""
    data: dict[str, Any] = {}
    try:
        if args.file:
            loaded = yaml.safe_load(Path(args.file).read_text())
            if not isinstance(loaded, dict):
                raise CommandError(f"{args.file}: expected a mapping (steps: …)", exit_codes.USAGE)
            data = loaded
        if args.steps is None and "steps" not in data:
            raise plans.PlanError("--steps: required (or -f PLAN.yaml with steps)")
        if args.steps is not None:
            dwell = plans.parse_duration(args.dwell) if args.dwell else 60
            data["steps"] = plans.steps_from_flags(args.steps, dwell)
        elif args.dwell:
            raise plans.PlanError("--dwell: give --steps too (the file's steps have their own dwell_seconds)")
        if args.gate_timeout:
            data["gate_timeout_seconds"] = plans.parse_duration(args.gate_timeout, "--gate-timeout")
        if args.rollback:
            data["rollback"] = args.rollback
        gate = _prometheus_flags(args)
        if gate:
            data["prometheus"] = {**(data.get("prometheus") or {}), **gate}
        return plans.parse_plan(data, args.file or "rollout plan")
    except OSError as err:
        raise CommandError(f"{args.file}: {err.strerror}", exit_codes.USAGE) from err
    except yaml.YAMLError as err:
        raise CommandError(f"{args.file}: not YAML ({str(err).splitlines()[0]})", exit_codes.USAGE) from err
    except plans.PlanError as err:
        raise CommandError(str(err), exit_codes.USAGE) from err


def _prometheus_flags(args: argparse.Namespace) -> dict[str, Any]:
    given = {
        "url": args.prometheus_url,
        "query": args.query,
        "threshold": args.threshold,
        "pass_when": args.pass_when,
    }
    return {key: value for key, value in given.items() if value is not None}


def _require_members(settings: OrchestratorSettings, members: RolloutMembers) -> None:
    """Both services exist and are in the group: a rollout of a pair that is not one starts nothing."""
    api_client = kube.connect_kube(settings.kubeconfig, settings.kube_context)
    try:
        api = KubeClusterApi(api_client)
        for name in (members.stable, members.candidate):
            try:
                seen = observe(name, api.get(LLMISVC, members.namespace, name))
            except ApiError as err:
                raise CommandError(
                    f"cannot read LLMInferenceService {members.namespace}/{name}: {err.message}",
                    exit_codes.UNAVAILABLE,
                ) from err
            if not seen.exists:
                raise CommandError(f"no LLMInferenceService {members.namespace}/{name}", exit_codes.NOT_FOUND)
            if seen.group != members.group:
                raise CommandError(
                    f"LLMInferenceService {members.namespace}/{name}: spec.router.route.group is "
                    f"{seen.group or 'not set'}, not {members.group}",
                    exit_codes.USAGE,
                )
    finally:
        api_client.close()


async def _start(
    client: Client, settings: OrchestratorSettings, wid: str, request: RolloutInput
) -> RolloutStatus:
    try:
        handle = await client.start_workflow(
            RolloutWorkflow.run,
            request,
            id=wid,
            task_queue=settings.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,  # one rollout per group
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,  # a finished one may be run again
            static_summary=summary(request.members, request.plan),
            static_details=static_details(request.members),
        )
    except WorkflowAlreadyStartedError as err:
        raise CommandError(
            f"a rollout of group {request.members.namespace}/{request.members.group} is running already: "
            f"{err.workflow_id} (run {err.run_id}); see `llmisvc-router rollout status`, or abort it first",
            exit_codes.FAILED,
        ) from err
    return await _query(handle, f"{request.members.namespace}/{request.members.group}", wait=True)


async def _query(handle: WorkflowHandle[Any, Any], group: str, wait: bool = False) -> RolloutStatus:
    """The ``status`` query; ``wait``: a just started rollout answers once its worker has taken it."""
    for _ in range(50 if wait else 1):
        try:
            status: RolloutStatus = await handle.query(RolloutWorkflow.status)
            if not wait or status.weights is not None:
                return status
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise CommandError(f"no rollout of group {group}", exit_codes.NOT_FOUND) from err
            if not wait:
                raise CommandError(
                    f"cannot query the rollout of {group}: {err}", exit_codes.UNAVAILABLE
                ) from err
        await asyncio.sleep(0.2)
    return await handle.query(RolloutWorkflow.status)


async def _control(handle: WorkflowHandle[Any, Any], action: str, group: str) -> RolloutStatus:
    update = {
        "pause": RolloutWorkflow.pause,
        "resume": RolloutWorkflow.resume,
        "promote": RolloutWorkflow.promote,
        "abort": RolloutWorkflow.abort,
    }[action]
    request = ControlRequest(by=f"{getpass.getuser()}@{socket.gethostname()}")
    try:
        result: RolloutStatus = await handle.execute_update(update, request)
    except WorkflowUpdateFailedError as err:
        raise CommandError(str(err.cause), exit_codes.FAILED) from err
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise CommandError(f"no running rollout of group {group}", exit_codes.NOT_FOUND) from err
        raise CommandError(f"cannot {action} the rollout of {group}: {err}", exit_codes.UNAVAILABLE) from err
    return result
