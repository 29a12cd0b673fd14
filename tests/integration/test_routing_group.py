"""Routing groups of two and three services on the real control plane (KServe
``controller_int_router_group_test.go``: "Group formation", a member's readiness flipping, "Leave group";
#5798/#5847): each member's managed route sends its shared rules to every member's workload Service,
weighted; a peer that loses its ready replicas leaves the backends and comes back; a member that leaves
the group drops the label and the group status, and its former peer stops routing to it; a member that
is deleted is dropped by its peers."""

from __future__ import annotations

import asyncio

import pytest

from llmisvc_core import naming
from llmisvc_core.models.kube import HTTPROUTE, LLMISVC
from tests.integration.harness import Stack, conditions_of, running_stack, until
from tests.integration.world import Wire

pytestmark = pytest.mark.asyncio(loop_scope="session")

GROUP_LABEL = "serving.kserve.io/routing-group"


def grouped(weight: int) -> Wire:
    return {"route": {"group": "llama", "weight": weight}, "gateway": {}}


async def set_ready_replicas(stack: Stack, name: str, replicas: int) -> None:
    """What KServe's workload reconciler reports: the primary workload's ready replicas."""
    workloads = {
        "primary": {"apiGroup": "apps", "kind": "Deployment", "name": name, "readyReplicas": replicas}
    }
    await asyncio.to_thread(
        stack.kube.patch_status_merge, LLMISVC, stack.namespace, name, {"status": {"workloads": workloads}}
    )


Backends = set[tuple[tuple[str, int], ...]]


def shared_backends(route: Wire) -> Backends:
    """The weighted backends of the route's rules that are not under ``/<ns>/<name>``."""
    found: Backends = set()
    for rule in route["spec"]["rules"]:
        paths = [m.get("path", {}).get("value", "") for m in rule.get("matches") or []]
        if any(p.startswith(f"/{route['metadata']['namespace']}/") for p in paths):
            continue
        found.add(tuple((r["name"], r["weight"]) for r in rule.get("backendRefs") or []))
    return found


async def test_a_group_of_two_splits_traffic_follows_readiness_and_lets_a_member_leave(temporal, cluster):
    async with running_stack(temporal, cluster, controller={}) as stack:
        await stack.create_service("a", router=grouped(3))
        await stack.create_service("b", router=grouped(1))
        a, b = await stack.start_workflow("a"), await stack.start_workflow("b")
        await stack.until_router_ready("a", drive=a)
        await stack.until_router_ready("b", drive=b)
        await set_ready_replicas(stack, "a", 1)
        await set_ready_replicas(stack, "b", 1)
        svc_a, svc_b = naming.workload_service_name("a"), naming.workload_service_name("b")

        async def shared_on_a(expected: Backends) -> Wire | None:
            await stack.reconcile_now(a, "a peer changed")
            route = await stack.get(HTTPROUTE, naming.route_name("a"))
            return route if route is not None and shared_backends(route) == expected else None

        both: Backends = {((svc_a, 3), (svc_b, 1))}
        route = await until(lambda: shared_on_a(both), "a's shared rules to route to a and b")
        assert route["metadata"]["labels"][GROUP_LABEL] == "llama"
        status = (await stack.service("a"))["status"]
        assert [(m["name"], m["weight"]) for m in status["router"]["group"]["members"]] == [
            ("a", 3),
            ("b", 1),
        ]
        assert conditions_of(await stack.service("a"))["GroupReady"]["status"] == "True"

        await set_ready_replicas(stack, "b", 0)  # b is no longer routable: a drops it
        await until(lambda: shared_on_a({((svc_a, 3),)}), "a to stop routing to b")
        await set_ready_replicas(stack, "b", 1)  # and takes it back
        await until(lambda: shared_on_a(both), "a to route to b again")

        await stack.patch(LLMISVC, "b", {"spec": {"router": {"route": {"group": None, "weight": None}}}})

        async def b_left() -> Wire | None:
            await stack.reconcile_now(b, "b left its group")
            route = await stack.get(HTTPROUTE, naming.route_name("b"))
            return (
                route
                if route is not None and GROUP_LABEL not in route["metadata"].get("labels", {})
                else None
            )

        await until(b_left, "b's route to lose the routing-group label")
        left = await stack.service("b")
        assert "group" not in (left["status"].get("router") or {})
        assert "GroupReady" not in conditions_of(left)
        await until(lambda: shared_on_a({((svc_a, 3),)}), "a to stop routing to b once b left")


async def test_a_group_of_three_weights_every_member_and_drops_one_that_is_deleted(temporal, cluster):
    """KServe ``router_group.go`` ``resolveGroupMembers`` / ``filterEligibleMembers`` at ``aaac4e294``
    (#5727, #5798): every member's shared rules carry all three weighted backends; once a member is
    deleted its peers' next passes leave it out of the backends and of ``status.router.group``."""
    async with running_stack(temporal, cluster, controller={}) as stack:
        handles = {}
        for name, weight in (("a", 2), ("b", 1), ("c", 1)):
            await stack.create_service(name, router=grouped(weight))
            handles[name] = await stack.start_workflow(name)
        for name, handle in handles.items():
            await stack.until_router_ready(name, drive=handle)
            await set_ready_replicas(stack, name, 1)
        svc = {name: naming.workload_service_name(name) for name in handles}

        async def settled(expected: Backends, members: list[tuple[str, int]]) -> bool | None:
            """Every member passed again until it is RouterReady (no watcher here: a member whose route a
            pass rewrote must read it accepted to be routable for its peers again), one at a time, then
            every member's shared rules and group status are as expected."""
            for name, handle in handles.items():
                await stack.until_router_ready(name, drive=handle)
            for name in handles:
                route = await stack.get(HTTPROUTE, naming.route_name(name))
                status = (await stack.service(name))["status"]
                listed = [(m["name"], m["weight"]) for m in status["router"]["group"]["members"]]
                if route is None or shared_backends(route) != expected or listed != members:
                    return None
            return True

        three: Backends = {((svc["a"], 2), (svc["b"], 1), (svc["c"], 1))}
        await until(
            lambda: settled(three, [("a", 2), ("b", 1), ("c", 1)]), "every member to route to all three"
        )

        await stack.delete(LLMISVC, "c")
        handles.pop("c")  # its workflow ends with it
        two: Backends = {((svc["a"], 2), (svc["b"], 1))}
        await until(lambda: settled(two, [("a", 2), ("b", 1)]), "a and b to stop routing to the deleted c")
        assert conditions_of(await stack.service("a"))["GroupReady"]["status"] == "True"
