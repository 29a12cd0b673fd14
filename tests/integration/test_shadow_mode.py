"""Shadow mode on the stack (worker, watcher, control plane): another writer (the test, acting for KServe)
has created the objects exactly as the router would; the shadow worker reads and plans every pass,
writes nothing, and reports the drift. A route changed by hand is named with its field; restarting the
worker in write mode (the workflows keep running) repairs it and the drift goes back to zero."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from typing import Any

import pytest
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.service import RPCError

from activities.management import Management
from llmisvc_core import naming
from llmisvc_core.models.kube import BUILTIN_TYPES, HTTPROUTE, LLMISVC, ResourceType
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.planner import passes, phases
from llmisvc_core.world.status_merge import merge_status
from tests.integration.harness import WORKER_AGENT, Stack, is_served, running_stack, until
from tests.integration.test_cli_commands import cli
from workflows import search_attributes
from workflows.drift_report import DriftReport
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

NAME = "opt"
Wire = dict[str, Any]
SHADOW = Management.of("shadow")
ROUTE_FIELD = 'spec.rules[0].backendRefs[0].name: "by-hand" -> "opt-inference-pool"'


class LiveReader:
    """``llmisvc_core.world.snapshot.Reader`` over the test's own client: what the other writer plans from."""

    def __init__(self, stack: Stack) -> None:
        self.kube = stack.kube
        self._served: dict[ResourceType, bool] = {}

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        return self.kube.get(type_, namespace, name) if self.is_installed(type_) else None

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        return self.kube.list_objects(type_, namespace, labels) if self.is_installed(type_) else []

    def is_installed(self, type_: ResourceType) -> bool:
        if type_ in BUILTIN_TYPES:
            return True
        if type_ not in self._served:  # discovery, asked once per kind
            self._served[type_] = is_served(self.kube.api_client, type_)
        return self._served[type_]


def write_as_kserve(stack: Stack, name: str) -> None:
    """Create the objects and the status the router's planner wants, as another writer, until a pass
    over the cluster would write nothing."""
    reader = LiveReader(stack)
    for _ in range(5):
        raw = stack.kube.get(LLMISVC, stack.namespace, name) or {}
        plan = passes.plan_pass(
            LLMInferenceService.model_validate(raw), reader, stack.env, "2030-01-01T00:00:00Z"
        )
        ops = [op for ops in phases.split_into_phases(plan, reader).values() for op in ops]
        merged = merge_status(raw.get("status") or {}, plan.status)
        if not ops and merged == (raw.get("status") or {}):
            return
        for op in ops:
            key = op.key()
            if op.delete is not None:
                stack.kube.delete(key.type, key.namespace, key.name)
            elif (op.apply or {})["metadata"].get("resourceVersion"):
                stack.kube.replace(key.type, op.apply or {})
            else:
                stack.kube.create(key.type, op.apply or {})
        if merged != (raw.get("status") or {}):
            stack.kube.replace_status(LLMISVC, {**raw, "status": merged})
    raise AssertionError("the other writer's plans did not converge")


async def drift(stack: Stack) -> DriftReport:
    report: DriftReport = await stack.handle(NAME).query(LLMInferenceServiceWorkflow.drift)
    return report


async def drift_attribute(stack: Stack) -> int | None:
    described = await stack.handle(NAME).describe()
    return described.typed_search_attributes.get(search_attributes.DRIFT)


async def change_route_by_hand(stack: Stack) -> None:
    route = await stack.get(HTTPROUTE, naming.route_name(NAME))
    assert route is not None
    route["spec"]["rules"][0]["backendRefs"][0]["name"] = "by-hand"
    await asyncio.to_thread(stack.kube.replace, HTTPROUTE, route)


async def test_shadow_mode_writes_nothing_reports_drift_and_write_mode_repairs_it(temporal, cluster):
    async with running_stack(temporal, cluster, watcher=True, management=SHADOW) as stack:
        await stack.create_service(NAME)
        await asyncio.to_thread(write_as_kserve, stack, NAME)
        handle = stack.handle(NAME)
        await until(lambda: _shadow_report(stack, 0), "a shadow pass finding no drift")
        assert await until(lambda: _equals(drift_attribute(stack), 0), "LlmisvcDrift = 0")
        assert stack.worker_writes() == 0  # neither objects, nor status, nor Events

        await change_route_by_hand(stack)

        async def route_drift() -> DriftReport | None:
            report = await drift(stack)
            return report if report.drift == 1 else None

        report = await until(route_drift, "the route's drift")
        [changed] = report.objects
        assert changed.describe() == f"update HTTPRoute {stack.namespace}/{naming.route_name(NAME)}"
        assert changed.fields == [ROUTE_FIELD]
        assert await until(lambda: _equals(drift_attribute(stack), 1), "LlmisvcDrift = 1")
        metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
        assert "**Drift:** 1" in metadata.current_details and ROUTE_FIELD in metadata.current_details
        code, out, err = await cli(temporal, stack, "drift", f"{stack.namespace}/{NAME}")
        assert code == 0, err
        assert ROUTE_FIELD in out
        print(out)  # the report quotes it
        assert stack.worker_writes() == 0

        run_id = (await handle.describe()).run_id
        assert stack.worker is not None
        await stack.worker.restart(Management.of("write"))
        await stack.reconcile_now(handle, "switched to write mode")
        route = await stack.get(HTTPROUTE, naming.route_name(NAME))
        assert route is not None
        assert route["spec"]["rules"][0]["backendRefs"][0]["name"] == naming.pool_name(NAME)
        after = await drift(stack)
        assert (after.mode, after.drift) == ("write", 0)
        assert await until(lambda: _equals(drift_attribute(stack), 0), "LlmisvcDrift back to 0")
        assert (await handle.describe()).run_id == run_id  # the same workflow run: no restart
        written = stack.cluster.counter.records(user_agent=WORKER_AGENT, verb={"update", "create", "patch"})
        # Shadow mode sends nothing but reads, so write mode's first pass checks the merged spec (KServe
        # #5918: a dry-run create, which stores nothing) before it repairs the route.
        checks = [r for r in written if r.dry_run]
        assert [(r.resource, r.verb) for r in checks] == [("llminferenceservices", "create")]
        assert {(r.resource, r.name) for r in written if r.resource != "events" and not r.dry_run} == {
            ("httproutes", naming.route_name(NAME))
        }


async def _shadow_report(stack: Stack, count: int) -> DriftReport | None:
    try:
        report = await drift(stack)
    except RPCError:  # the watcher has not started the workflow yet
        return None
    return report if (report.mode, report.drift) == ("shadow", count) else None


async def _equals(value: Awaitable[Any], wanted: Any) -> bool:
    return bool(await value == wanted)
