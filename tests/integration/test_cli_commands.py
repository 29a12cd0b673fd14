"""``llmisvc-router reconcile|stop|resume|status NS/NAME`` as a person runs them, in a subprocess against
the dev server and the test's cluster (as its admin), with the worker of the test's stack carrying the
passes out."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC
from tests.integration.harness import Stack, annotations_of, running_stack, until
from workflows.models import ReconcileSignal, workflow_id

pytestmark = pytest.mark.asyncio(loop_scope="session")
NAME = "opt"


async def cli(temporal: Client, stack: Stack, *args: str, **extra: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "OTEL_"))}
    env["TEMPORAL_ADDRESS"] = temporal.service_client.config.target_host
    env["LLMISVC_ROUTER_TASK_QUEUE"] = stack.task_queue
    kubeconfig = Path(tempfile.gettempdir()) / f"kubeconfig-{stack.namespace}"
    env["KUBECONFIG"] = str(stack.cluster.kubeconfig(kubeconfig))  # a person's: the admin's
    env.update(extra)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "llmisvc_router",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_reconcile_starts_the_workflow_runs_a_pass_and_prints_its_outcome(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        code, out, err = await cli(temporal, stack, "reconcile", f"{stack.namespace}/{NAME}")
        assert code == 0, err  # the pass reconciled (the router is not Ready: no gateway programmed it)
        summary = yaml.safe_load(out)
        assert summary["outcome"] == "reconciled"
        assert summary["conditions"]["HTTPRoutesReady"].startswith("False")
        assert await stack.get(HTTPROUTE, naming.route_name(NAME)) is not None

        code, out, err = await cli(temporal, stack, "status", f"{stack.namespace}/{NAME}")
        assert code == 0, err
        state = yaml.safe_load(out)
        assert state["pass_count"] >= 1 and state["last"]["outcome"] == "reconciled"


async def test_reconcile_after_a_change_plans_on_the_version_it_read_not_the_one_the_cache_had(
    temporal, cluster
):
    """The command reads the service before it asks for a pass (``_require_service``); the update carries
    that version as ``seen``, so the pass waits for the worker's cache to reach it (or reads it from the
    API): a change applied just before the command is what the pass plans on."""
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        service = f"{stack.namespace}/{NAME}"
        code, _, err = await cli(temporal, stack, "reconcile", service)
        assert code == 0, err
        changed = await stack.patch(LLMISVC, NAME, {"spec": {"model": {"name": "facebook/opt-350m"}}})
        code, _, err = await cli(temporal, stack, "reconcile", service)
        assert code == 0, err

        history = await temporal.get_workflow_handle(workflow_id(stack.namespace, NAME)).fetch_history()
        requests = [
            e.workflow_execution_update_accepted_event_attributes.accepted_request
            for e in history.events
            if e.HasField("workflow_execution_update_accepted_event_attributes")
        ]
        signals = [
            (await temporal.data_converter.decode(r.input.args.payloads, [ReconcileSignal]))[0]
            for r in requests
        ]
        assert [[(s.resource, s.name) for s in signal.seen] for signal in signals] == [
            [(str(LLMISVC), NAME)]
        ] * 2
        assert signals[1].seen[0].resource_version == changed["metadata"]["resourceVersion"]
        route = await stack.get(HTTPROUTE, naming.route_name(NAME))
        assert route is not None and "facebook/opt-350m" in json.dumps(route)


async def test_stop_and_resume_set_and_remove_the_annotation_through_the_workflow(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        service = f"{stack.namespace}/{NAME}"
        code, out, err = await cli(temporal, stack, "stop", service)
        assert code == 0, err
        assert out.strip() == f"stop requested for {service}; the next pass carries it out"

        async def stopped() -> bool | None:
            svc = await stack.get(LLMISVC, NAME)
            annotated = svc is not None and annotations_of(svc).get("serving.kserve.io/stop") == "true"
            return (annotated and await stack.get(HTTPROUTE, naming.route_name(NAME)) is None) or None

        await until(stopped, "the stop annotation set and the route gone", timeout=90)
        code, _, err = await cli(temporal, stack, "resume", service)
        assert code == 0, err

        async def resumed() -> bool | None:
            svc = await stack.get(LLMISVC, NAME)
            clear = svc is not None and "serving.kserve.io/stop" not in annotations_of(svc)
            return (clear and await stack.get(HTTPROUTE, naming.route_name(NAME)) is not None) or None

        await until(resumed, "the annotation removed and the route back", timeout=90)


@pytest.mark.parametrize("action", ["stop", "resume", "reconcile", "status"])
async def test_an_action_on_a_service_that_does_not_exist_exits_3_and_starts_nothing(
    temporal, cluster, action
):
    async with running_stack(temporal, cluster) as stack:
        code, out, err = await cli(temporal, stack, action, f"{stack.namespace}/nope")
        assert (code, out) == (3, "")
        assert err.strip() == f"llmisvc-router {action}: no LLMInferenceService {stack.namespace}/nope"
        with pytest.raises(RPCError) as raised:
            await temporal.get_workflow_handle(workflow_id(stack.namespace, "nope")).describe()
        assert raised.value.status == RPCStatusCode.NOT_FOUND


async def test_status_of_a_service_without_a_workflow_yet_exits_3_saying_how_to_start_one(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        service = f"{stack.namespace}/{NAME}"
        code, out, err = await cli(temporal, stack, "status", service)
        assert (code, out) == (3, "")
        assert err.strip() == (
            f"llmisvc-router status: no workflow for {service} yet (is the watcher running? "
            f"`llmisvc-router reconcile {service}` starts one)"
        )


async def test_a_temporal_namespace_that_does_not_exist_is_named_with_what_to_do(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        code, out, err = await cli(
            temporal, stack, "status", f"{stack.namespace}/{NAME}", TEMPORAL_NAMESPACE="nosuchns"
        )
        assert (code, out) == (4, "")
        address = temporal.service_client.config.target_host
        assert err.strip().startswith(
            f"llmisvc-router status: the Temporal namespace 'nosuchns' does not exist at {address} "
            "(set TEMPORAL_NAMESPACE"
        )


def console_spans(out: str) -> list[dict[str, Any]]:
    """The spans OpenTelemetry's console exporter printed (indented JSON objects) among the output."""
    decoder = json.JSONDecoder()
    return [decoder.raw_decode(out, match.start())[0] for match in re.finditer(r"^\{$", out, re.MULTILINE)]


@pytest.mark.parametrize("action", ["reconcile", "stop", "resume", "status"])
async def test_the_commands_that_talk_to_temporal_honour_otel_variables(temporal, cluster, action):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        if action == "status":
            await stack.start_workflow(NAME)  # status reads a workflow; the other three start one
        code, out, err = await cli(
            temporal,
            stack,
            action,
            f"{stack.namespace}/{NAME}",
            OTEL_TRACES_EXPORTER="console",
            OTEL_SERVICE_NAME="llmisvc-router-cli-test",
        )
        assert code == 0, err
        # The console exporter's span, flushed at exit, under the service name the variables gave.
        spans = {span["name"]: span for span in console_spans(out)}
        assert f"llmisvc-router {action}" in spans, out
        span = spans[f"llmisvc-router {action}"]
        assert span["attributes"] == {"llmisvc.namespace": stack.namespace, "llmisvc.name": NAME}
        assert span["resource"]["attributes"]["service.name"] == "llmisvc-router-cli-test"


async def test_a_malformed_name_is_a_one_line_usage_error(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        code, out, err = await cli(temporal, stack, "stop", "no-slash")
        assert (code, out) == (2, "")
        assert err.strip() == "llmisvc-router stop: no-slash: expected NAMESPACE/NAME"
