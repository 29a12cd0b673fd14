"""What a person sees in Kubernetes and in the worker's log: the status of a spec the router cannot read,
the Events a pass leaves on the service (``kubectl describe``), and a quiet, readable log."""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from activities.events import EVENT
from activities.invalid_spec import INVALID_SPEC
from activities.service_status import ROUTER_READY_REASON
from llmisvc_core import naming
from llmisvc_core.models.kube import LLMISVC
from llmisvc_kube.api import Wire
from llmisvc_runtime import logs
from tests.integration import world
from tests.integration.harness import Stack, conditions_of, running_stack, until
from tests.tools import KUBECTL

pytestmark = pytest.mark.asyncio(loop_scope="session")
NAME = "opt"


async def events_about(stack: Stack, name: str) -> list[Wire]:
    listed = await asyncio.to_thread(stack.kube.list_objects, EVENT, stack.namespace, {})
    return [e for e in listed if e.get("regarding", {}).get("name") == name]


async def some_events_about(stack: Stack, name: str) -> list[Wire] | None:
    """For ``until``: None while there is none (an empty list would end the wait at once)."""
    return await events_about(stack, name) or None


async def create_unreadable_service(stack: Stack) -> None:
    """A spec the CRD's schema accepts (``model.lora.adapters`` is an open-schema field) but the router
    cannot read: adapters must be a list."""
    body = world.service(NAME, stack.namespace)
    body["spec"]["model"]["lora"] = {"adapters": "all of them"}
    await stack.create(LLMISVC, body)


async def test_an_unreadable_spec_gets_ready_false_with_the_field_and_one_warning_event(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await create_unreadable_service(stack)
        handle = await stack.start_workflow(NAME)

        async def invalid() -> Wire | None:
            found = conditions_of(await stack.service(NAME))
            return found if found.get("RouterReady", {}).get("reason") == INVALID_SPEC else None

        found = await until(invalid, "RouterReady False InvalidSpec")
        for type_ in ("Ready", "RouterReady"):
            assert found[type_]["status"] == "False" and found[type_]["reason"] == INVALID_SPEC
            assert found[type_]["message"].startswith("field spec.model.lora.adapters: ")
        events = await until(lambda: some_events_about(stack, NAME), "an Event on the service")
        assert [(e["type"], e["reason"]) for e in events] == [("Warning", INVALID_SPEC)]
        assert events[0]["regarding"]["uid"] == (await stack.service(NAME))["metadata"]["uid"]
        assert "spec.model.lora.adapters" in events[0]["note"]

        # A re-check of the unchanged spec writes nothing and records no second Event.
        before = (await stack.service(NAME))["metadata"]["resourceVersion"]
        await stack.reconcile_now(handle)
        assert (await stack.service(NAME))["metadata"]["resourceVersion"] == before
        assert len(await events_about(stack, NAME)) == 1
        state = await stack.state(handle)
        assert state.last is not None and state.last.outcome == "error"


async def test_an_unreadable_spec_is_one_warning_line_without_traceback_and_quiet_on_re_checks(
    temporal, cluster, caplog
):
    handler = logs.configure("text", "info")
    caplog.set_level(logging.INFO)
    try:
        async with running_stack(temporal, cluster) as stack:
            await create_unreadable_service(stack)
            handle = await stack.start_workflow(NAME)
            await stack.passes(handle, 1)
            for _ in range(2):
                await stack.reconcile_now(handle)
    finally:
        logging.getLogger().removeHandler(handler)
    ours = [r for r in caplog.records if f"{stack.namespace}/{NAME}" in r.getMessage()]
    assert [r.levelname for r in ours] == ["WARNING"], [r.getMessage() for r in ours]
    assert "field spec.model.lora.adapters" in ours[0].getMessage() and "\n" not in ours[0].getMessage()
    failures = [r for r in caplog.records if r.levelno >= logging.WARNING and r.exc_info]
    assert failures == [], "a spec the user must fix is not logged with a traceback"


async def test_a_pass_leaves_events_for_its_writes_and_none_for_a_pass_that_changes_nothing(
    temporal, cluster
):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        handle = await stack.start_workflow(NAME)
        await stack.passes(handle, 1)
        first = await until(lambda: some_events_about(stack, NAME), "Events for the first pass's writes")
        reasons = {e["reason"] for e in first}
        assert "Created" in reasons
        notes = {e["note"] for e in first}
        assert f"created HTTPRoute {stack.namespace}/{naming.route_name(NAME)}" in notes
        await stack.reconcile_now(handle)
        assert len(await events_about(stack, NAME)) == len(first)


async def test_a_settled_stack_logs_one_ready_line_per_service_and_no_traceback(temporal, cluster, caplog):
    handler = logs.configure("text", "info")  # as the worker process does
    caplog.set_level(logging.INFO)
    names = ("alpha", "beta")
    try:
        async with running_stack(temporal, cluster, controller={}) as stack:
            for name in names:
                await stack.create_service(name)
                await stack.make_scheduler_ready(name)
                await stack.until_router_ready(name, drive=await stack.start_workflow(name))
            for name in names:
                await stack.reconcile_now(stack.handle(name))  # settled: nothing more to say
    finally:
        logging.getLogger().removeHandler(handler)
    text = caplog.text
    for name in names:
        assert text.count(f"{stack.namespace}/{name} is Ready") == 1, text
    assert "Traceback" not in text and not [r for r in caplog.records if r.exc_info]
    assert "'workflow_id'" not in text  # the SDK's appended dict is off
    alpha = f"{stack.namespace}/alpha: reconciled in "
    pass_lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith(alpha)]
    assert pass_lines and all("wrote " in line and "; after: " in line for line in pass_lines), pass_lines


def kubectl_describe(stack: Stack, name: str) -> str:
    """``kubectl describe llminferenceservice NAME`` as a person (the admin) runs it against the cluster."""
    workdir = Path(tempfile.mkdtemp(prefix="describe-"))
    kubeconfig = stack.cluster.kubeconfig(workdir / "kubeconfig")
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "--cache-dir", str(workdir / "cache"),
         "--namespace", stack.namespace, "describe", "llminferenceservice", name],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    shutil.rmtree(workdir, ignore_errors=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


async def test_kubectl_describe_of_a_ready_service_lists_the_routers_events(temporal, cluster):
    async with running_stack(temporal, cluster, controller={}) as stack:
        await stack.create_service(NAME)
        await stack.make_scheduler_ready(NAME)
        await stack.until_router_ready(NAME, drive=await stack.start_workflow(NAME))

        async def described() -> str | None:
            text = await asyncio.to_thread(kubectl_describe, stack, NAME)
            return text if ROUTER_READY_REASON in text.split("Events:", 1)[-1] else None

        events = (await until(described, "kubectl describe listing RouterReady")).split("Events:", 1)[1]
        rows = [line.split() for line in events.splitlines()[3:] if line.strip()]
        route = f"{stack.namespace}/{naming.route_name(NAME)}"
        # Type, Reason, Age..., From, Message: the router is named as the reporter of each.
        assert ["Normal", "Created"] in [row[:2] for row in rows], events
        assert f"llmisvc-router  created HTTPRoute {route}" in events
        assert any(row[:2] == ["Normal", ROUTER_READY_REASON] and "llmisvc-router" in row for row in rows), (
            events
        )
