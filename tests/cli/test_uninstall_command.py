"""``llmisvc-router uninstall`` as a person runs it, in a subprocess, against a real Temporal dev server
with the router's workflows of three installs (no cluster name, ``east``, ``west``) running and one
workflow that is not the router's: it ends those of the scope asked for, says what it did, ends nothing
without ``--yes``, is idempotent, and fails in one line when Temporal cannot be reached. No worker runs
and no Kubernetes API is there: the command needs neither."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from tests.cli.test_command_line import environment, free_port
from worker.factory import DATA_CONVERTER
from workflows import search_attributes
from workflows.models import ServiceWorkflowInput, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

TEMPORAL = str(Path(sys.executable).parent / "temporal")
UNNAMED, EAST, WEST = (workflow_id("llm", "opt", c) for c in ("", "east", "west"))
OTHER = "not-the-routers"  # same type, an id the router does not make: left alone


@pytest_asyncio.fixture
async def temporal() -> AsyncIterator[Client]:
    async with await WorkflowEnvironment.start_local(
        dev_server_existing_path=TEMPORAL,
        data_converter=DATA_CONVERTER,
        search_attributes=search_attributes.ALL,
        ui=False,
    ) as env:
        for wid in (UNNAMED, EAST, WEST, OTHER):
            await env.client.start_workflow(
                LLMInferenceServiceWorkflow.run,
                ServiceWorkflowInput(namespace="llm", name="opt"),
                id=wid,
                task_queue="nobody-polls",
            )
        await listed(env.client, 4)
        yield env.client


async def listed(client: Client, count: int) -> None:
    for _ in range(200):
        if len([w async for w in client.list_workflows('ExecutionStatus = "Running"')]) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{count} running workflows never listed")


async def uninstall(client: Client | None, *args: str, **extra: str) -> tuple[int, str, str]:
    address = client.service_client.config.target_host if client else f"127.0.0.1:{free_port()}"
    env = environment(TEMPORAL_ADDRESS=address, **extra)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "llmisvc_router", "uninstall", *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def running(client: Client) -> set[str]:
    ids = set()
    for wid in (UNNAMED, EAST, WEST, OTHER):
        if (await client.get_workflow_handle(wid).describe()).status == WorkflowExecutionStatus.RUNNING:
            ids.add(wid)
    return ids


async def test_one_cluster_is_ended_and_a_second_run_finds_nothing(temporal: Client) -> None:
    code, out, err = await uninstall(temporal, "--cluster", "east", "--yes")
    assert code == 0, err
    assert out.splitlines() == [f"ended {EAST}", "ended 1 workflows of cluster east"]
    assert await running(temporal) == {UNNAMED, WEST, OTHER}
    history = await temporal.get_workflow_handle(EAST).fetch_history()
    assert (
        history.events[-1].workflow_execution_terminated_event_attributes.reason == "llmisvc-router uninstall"
    )

    code, out, err = await uninstall(temporal, "--cluster", "east", "--yes")
    assert (code, out, err) == (0, "no running workflows of cluster east; nothing to end\n", "")


async def test_the_cluster_comes_from_the_environment_and_no_name_means_the_unnamed_install(
    temporal: Client,
) -> None:
    code, out, _ = await uninstall(temporal, "--yes", LLMISVC_ROUTER_CLUSTER="west")
    assert (code, out.splitlines()[0]) == (0, f"ended {WEST}")
    code, out, _ = await uninstall(temporal, "--yes")
    assert (code, out.splitlines()) == (
        0,
        [f"ended {UNNAMED}", "ended 1 workflows of the install without a cluster name"],
    )
    assert await running(temporal) == {EAST, OTHER}


async def test_a_dry_run_and_a_run_without_yes_end_nothing(temporal: Client) -> None:
    code, out, err = await uninstall(temporal, "--all-clusters", "--dry-run")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"would end {EAST}", f"would end {UNNAMED}", f"would end {WEST}",
        "would end 3 workflows of every cluster (dry run: nothing was ended)",
    ]  # fmt: skip
    code, out, err = await uninstall(temporal, "--all-clusters")
    assert code == 2
    assert err == "llmisvc-router uninstall: nothing was ended: add --yes to end these 3 workflows\n"
    assert await running(temporal) == {UNNAMED, EAST, WEST, OTHER}

    code, out, err = await uninstall(temporal, "--all-clusters", "--yes")
    assert code == 0, err
    assert out.splitlines()[-1] == "ended 3 workflows of every cluster"
    assert await running(temporal) == {OTHER}


async def test_bad_input_and_an_unreachable_temporal_fail_in_one_line() -> None:
    code, _, err = await uninstall(None, "--cluster", "EU", "--yes")
    assert code == 2
    assert err.startswith("llmisvc-router uninstall: --cluster: 'EU' is not a DNS-1123 label (")
    code, _, err = await uninstall(None, "--all-clusters", "--yes")
    assert code == 4
    assert err.startswith("llmisvc-router uninstall: ") and err.count("\n") == 1
