"""Writes that cannot hit the wrong object, under retries (activities.write_guard): a retried DELETE does
not remove a user's route that replaced ours meanwhile, and no write planned for a service lands after
the service was deleted and created again; the new one converges."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import WorkflowExecutionStatus

from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC, POOL_V1, POOL_V1ALPHA2, SERVICE, ResourceType
from tests.history import activity_runs
from tests.integration import world
from tests.integration.harness import WORKER_AGENT, Stack, running_stack, until
from tests.integration.world import Wire
from workflows.service_workflow import LLMInferenceServiceWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

NAME = "opt"
ROUTE = naming.route_name(NAME)
SCHEDULER_OBJECTS = [
    (SERVICE, naming.epp_service_name(NAME)),
    (POOL_V1, naming.pool_name(NAME)),
    (POOL_V1ALPHA2, naming.pool_name(NAME)),
]


def uid_of(obj: Wire | None) -> str | None:
    return None if obj is None else obj["metadata"].get("uid")


def owner_uids(obj: Wire) -> set[str]:
    return {ref["uid"] for ref in obj["metadata"].get("ownerReferences") or []}


async def fired(rule: object, times: int) -> bool:
    return getattr(rule, "fired", 0) >= times


async def test_a_retried_delete_does_not_remove_a_users_route_that_replaced_ours(temporal, cluster):
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        handle = await stack.start_workflow(NAME)
        await stack.passes(handle, 1)
        assert await stack.get(HTTPROUTE, ROUTE) is not None
        rule = stack.cluster.faults.inject(
            verb="delete", resource="httproutes", user_agent=WORKER_AGENT, status=503, times=3
        )

        await handle.signal(LLMInferenceServiceWorkflow.stop)
        await until(lambda: fired(rule, 1), "the first DELETE of the stopped service's route")
        # Between the failed DELETE and its retry, the route is replaced by a user's own, same name.
        await stack.delete(HTTPROUTE, ROUTE)
        users = await stack.create(HTTPROUTE, world.http_route(ROUTE, stack.namespace, "mine", "mine"))
        state = await stack.passes(handle, 2)

        survivor = await stack.get(HTTPROUTE, ROUTE)
        assert uid_of(survivor) == uid_of(users), "the user's route was deleted"
        deletes = stack.cluster.counter.records(verb="delete", resource="httproutes", user_agent=WORKER_AGENT)
        assert deletes and all(r.code in (503, 409) for r in deletes), [r.code for r in deletes]
        assert [r.attempt for r in await activity_runs(handle) if r.name == "reconcile_routes"][-1] >= 2
        # The re-plan found a route of the same name that is not the service's: it says so, and leaves it.
        assert state.last is not None and state.last.outcome != "reconciled"
        assert "not owned by" in (await stack.conditions(NAME))["HTTPRoutesReady"]["message"]
        for type_, name in SCHEDULER_OBJECTS:  # the rest of the stop went through
            assert await stack.get(type_, name) is None, f"{type_.kind} {name} survived the stop"


async def test_no_write_for_a_replaced_service_lands_and_the_new_one_converges(temporal, cluster):
    async with running_stack(temporal, cluster, watcher=True) as stack:
        rule = stack.cluster.faults.inject(
            verb="create", resource="httproutes", user_agent=WORKER_AGENT, status=503, times=3
        )
        old_uid = uid_of(await stack.create_service(NAME))
        await until(lambda: fired(rule, 1), "the first create of the route")
        # The route's create is being retried: delete the service, and only once the retries of the old
        # pass are over (its run ends: the service is gone) create it again under the same name.
        writes_before = len(stack.worker_stored())
        await stack.delete(LLMISVC, NAME)
        await until(lambda: _all_gone(stack, SCHEDULER_OBJECTS), "the garbage collector to remove them")
        await until(lambda: _old_pass_over(stack), "the old service's pass to end", timeout=30)
        new_uid = uid_of(await stack.create_service(NAME))

        async def routed() -> Wire | None:
            route = await stack.get(HTTPROUTE, ROUTE)
            return route if route is not None and owner_uids(route) == {new_uid} else None

        await until(routed, "the new service's route", timeout=30)
        await until(lambda: _has_status(stack), "the new service's status")

        since = [(w, w.document()) for w in stack.worker_stored()[writes_before:] if w.verb != "delete"]
        late = [
            w
            for w, body in since
            if "metadata" in body
            and (old_uid in owner_uids(body) or (w.resource == LLMISVC.plural and uid_of(body) == old_uid))
        ]
        assert late == [], [f"{w.verb} {w.resource} {w.name}" for w in late]
        for type_, name in [(HTTPROUTE, ROUTE), *SCHEDULER_OBJECTS]:
            found = await stack.get(type_, name)
            assert found is not None and owner_uids(found) == {new_uid}, (type_.kind, found)


async def _old_pass_over(stack: Stack) -> bool:
    """The old service's workflow run has ended, or its route was written (which must not happen)."""
    if await stack.get(HTTPROUTE, ROUTE) is not None:
        return True
    return (await stack.handle(NAME).describe()).status != WorkflowExecutionStatus.RUNNING


async def _all_gone(stack: Stack, objects: list[tuple[ResourceType, str]]) -> bool:
    return all([await stack.get(type_, name) is None for type_, name in objects])


async def _has_status(stack: Stack) -> bool:
    return "RouterReady" in await stack.conditions(NAME)


async def test_a_delete_carries_the_uid_precondition(temporal, cluster):
    """The DELETE itself names the object it means: kube-apiserver refuses it when
    another object of that name is there (409, "the UID in the precondition ... does not match the UID
    in record")."""
    async with running_stack(temporal, cluster) as stack:
        await stack.create_service(NAME)
        ours = await stack.get(LLMISVC, NAME)
        assert ours is not None
        with pytest.raises(Exception) as refused:
            await asyncio.to_thread(
                stack.kube.delete, LLMISVC, stack.namespace, NAME, uid="someone-else", resource_version=None
            )
        assert getattr(refused.value, "status", None) == 409
        assert str(refused.value) == (
            f'Operation cannot be fulfilled on LLMInferenceService.serving.kserve.io "{NAME}": '
            f"the UID in the precondition (someone-else) does not match the UID in record ({uid_of(ours)}). "
            "The object might have been deleted and then recreated"
        )
        assert await stack.get(LLMISVC, NAME) is not None
