"""Several clusters sharing one Temporal namespace (``LLMISVC_ROUTER_CLUSTER``): two real control planes,
the session's shared one and the private one (``tests/private_plane.py``), each with the same namespace
and service name, each install with its own cluster name, task queue, worker and watcher. Each service
is reconciled by its own cluster's worker, under an id and an ``LlmisvcCluster`` of its own; and an
install that ran without a cluster name moves its workflows to the new ids when it is given one."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import TypedSearchAttributes
from temporalio.service import RPCError, RPCStatusCode

from llmisvc_cache.cache import ClusterCache
from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE
from llmisvc_runtime.settings import OrchestratorSettings
from llmisvc_watcher.runner import run_watcher, stop_cache
from tests.cluster import Cluster, shared_plane, test_cluster
from tests.integration.harness import TUNING, WATCHER_AGENT, Stack, running_stack, until
from tests.private_plane import private_cluster
from workflows import search_attributes
from workflows.models import WORKFLOW_NAME, ServiceWorkflowInput, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")
NAME = "opt"


async def reconciled_by_its_own_worker(stack: Stack) -> str:
    """Wait for the service's first reconciled pass; the uid its workflow saw is the one of the service
    in the stack's own cluster (each plane gives its objects uids of its own)."""
    service = await stack.service(NAME)

    async def probe() -> str | None:
        try:
            state = await stack.state(stack.handle(NAME))
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                return None  # the watcher has not started it yet
            raise
        done = state.last is not None and state.last.outcome.value == "reconciled"
        return state.uid if done else None

    uid = await until(probe, f"a reconciled pass of {stack.handle(NAME).id}", timeout=60)
    assert uid == service["metadata"]["uid"]
    assert await stack.get(HTTPROUTE, naming.route_name(NAME)) is not None
    return uid


@pytest.mark.timeout(300)  # a second control plane to start: 20-60 s, its CRDs as long again
async def test_the_same_service_in_two_clusters_has_two_workflows_each_reconciled_by_its_own_worker(
    temporal: Client,
) -> None:
    suffix = uuid.uuid4().hex[:8]  # the same namespace names on both planes
    with (
        test_cluster(shared_plane(), "mc", suffix) as east_cluster,
        private_cluster("all", "mc", suffix) as west_cluster,
    ):
        assert east_cluster.namespace == west_cluster.namespace
        async with (
            running_stack(temporal, east_cluster, watcher=True, cluster_name="east") as east,
            running_stack(temporal, west_cluster, watcher=True, cluster_name="west") as west,
        ):
            assert east.task_queue != west.task_queue
            await east.create_service(NAME)
            await west.create_service(NAME)
            east_uid = await reconciled_by_its_own_worker(east)
            west_uid = await reconciled_by_its_own_worker(west)
            assert east_uid != west_uid

            namespace = east.namespace
            for stack in (east, west):
                described = await stack.handle(NAME).describe()
                assert described.id == f"llmisvc/{stack.cluster_name}/{namespace}/{NAME}"
                assert described.task_queue == stack.task_queue
                attributes: TypedSearchAttributes = described.typed_search_attributes
                assert attributes.get(search_attributes.CLUSTER) == stack.cluster_name
            # The UI's saved view per cluster (docs/operations.md, Many clusters, one Temporal namespace).
            for name in ("east", "west"):
                query = f'LlmisvcCluster = "{name}" AND LlmisvcNamespace = "{namespace}"'

                async def listed(query: str = query) -> list[str] | None:
                    ids = [w.id async for w in temporal.list_workflows(query)]
                    return ids or None

                assert await until(listed, query) == [workflow_id(namespace, NAME, name)]


async def started(handle: WorkflowHandle[Any, Any]) -> bool:
    try:
        await handle.describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


@contextlib.asynccontextmanager
async def watcher_of(stack: Stack, cluster: Cluster, name: str) -> AsyncIterator[None]:
    """A watcher of ``stack``'s cluster and task queue, given the cluster name ``name``."""
    settings = OrchestratorSettings(task_queue=stack.task_queue, cluster=name, namespaces=[cluster.namespace])
    api = cluster.api_client(WATCHER_AGENT, role="watcher")
    cache = ClusterCache(api, TUNING)
    stop = asyncio.Event()
    task = asyncio.create_task(run_watcher(cache, stack.temporal, settings, cluster.env, stop, TUNING))
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)
        await stop_cache(cache)
        api.close()  # type: ignore[no-untyped-call]


async def test_an_install_given_a_cluster_name_ends_its_unnamed_workflows_before_starting_the_new_ones(
    temporal: Client, cluster: Cluster
) -> None:
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        old = await stack.start_workflow(NAME)  # as the install's watcher did without a cluster name
        await stack.passes(old, 1)
        # Another install without a cluster name shares the Temporal namespace, on its own task queue.
        foreign_id = workflow_id(stack.namespace, "elsewhere")
        foreign = await temporal.start_workflow(
            LLMInferenceServiceWorkflow.run,
            ServiceWorkflowInput(namespace=stack.namespace, name="elsewhere"),
            id=foreign_id,
            task_queue=f"another-install-{stack.namespace}",
        )
        stack.workflow_ids.add(foreign_id)
        listed = f'WorkflowType = "{WORKFLOW_NAME}" AND WorkflowId = "{foreign_id}"'

        async def foreign_listed() -> bool:
            return bool([w async for w in temporal.list_workflows(listed)])

        await until(foreign_listed, f"{foreign_id} listed")

        stack.cluster_name = "east"
        stack.workflow_ids.add(workflow_id(stack.namespace, NAME, "east"))
        async with watcher_of(stack, cluster, "east"):
            new = stack.handle(NAME)
            await until(lambda: started(new), f"{new.id} started")
            await stack.passes(new, 1)
        old_run = await old.describe()
        assert old_run.status == WorkflowExecutionStatus.TERMINATED
        history = await old.fetch_history()
        reason = history.events[-1].workflow_execution_terminated_event_attributes.reason
        assert reason.startswith(f"moved to llmisvc/east/{stack.namespace}/{NAME}: ")
        new_run = await new.describe()
        assert new_run.id == f"llmisvc/east/{stack.namespace}/{NAME}"
        # One writer at a time: the old run had ended when the new one started.
        assert old_run.close_time is not None and old_run.close_time <= new_run.start_time
        assert (await foreign.describe()).status == WorkflowExecutionStatus.RUNNING
