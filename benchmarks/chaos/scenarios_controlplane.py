"""The real control plane misbehaves: etcd compacted while the product is not watching (its watches then
get a real ``410 Gone`` from kube-apiserver), kube-apiserver SIGKILLed and restarted, etcd SIGKILLed and
restarted, and the worker's ClusterRole losing its HTTPRoute writes for a while (every write a real
``403 Forbidden``), then restored.

Each changes every service while it happens or just before, so a pass is due that must get through, and
checks what the others check: converged again within the bound, one route per service, none lost or
doubled, nothing written that is not a service's own.
"""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any

from temporalio.client import Client

from benchmarks.chaos.context import Context, Stack
from benchmarks.chaos.fleet import Fleet, conditions
from benchmarks.chaos.report import Result
from benchmarks.chaos.scenarios_faults import (
    RECOVERY,
    SPARED,
    check_ownership,
    check_routes,
    names,
    product_requests,
)

WORKER_ROLE = "llmisvc-router-worker"
ROUTES = ("gateway.networking.k8s.io", "httproutes")


def _converged_after(result: Result, fleet: Fleet, ctx: Context, since: float, what: str) -> float | None:
    settled = fleet.wait_converged(timeout=ctx.scale.recovery_timeout, since=since)
    result.measured["settled_seconds"] = settled
    result.check(
        f"converged after {what} (s)",
        settled,
        f"≤ {RECOVERY:.0f}",
        settled is not None and settled <= RECOVERY,
    )
    return settled


def _alive(result: Result, stack: Stack) -> None:
    processes = [*stack.workers, *stack.watchers]
    alive = [p.name for p in processes if p.alive()]
    result.measured["product_processes_alive"] = alive
    result.check(
        "workers and watchers still running", len(alive), f"{len(processes)}", len(alive) == len(processes)
    )


def watch_gone(ctx: Context) -> Result:
    result = Result(
        "watch_gone",
        "the product's watches held while services change, etcd compacted and kube-apiserver restarted: "
        "every watch resumes into a real 410 Gone",
    )
    with ctx.stack("watch-gone") as stack:
        fleet = stack.fleet
        fleet.create(names("svc", ctx.scale.services))
        first = fleet.wait_converged(timeout=ctx.scale.timeout)
        stack.auditor.poll()
        fleet.control.reset_requests()
        # Every watch of the product ends and its next one waits at the proxy: nobody watches now.
        held = fleet.control.add_fault(verb="watch", hang=True, hang_timeout=300, exclude_user_agent=SPARED)
        cut = fleet.control.cut_watches()
        fleet.bump(tag="unwatched")  # changes only a relist can tell the product about
        revision = fleet.plane.compact_etcd()
        restart = fleet.plane.apiserver.restart()  # its watch cache starts after the compaction
        resumed = time.monotonic()
        fleet.control.remove_fault(held["id"])  # the held watches go on, from their old resourceVersions
        settled = _converged_after(result, fleet, ctx, resumed, "the watches resumed")
        gone = product_requests(fleet, verb="watch", code=410)
        relists = product_requests(fleet, verb="list")
        result.measured.update(
            first_convergence=first,
            watch_streams_cut=cut,
            compacted_at_revision=revision,
            apiserver_restart_seconds=round(restart, 1),
            watches_answered_410=gone,
            product_relists=relists,
            settled_seconds=settled,
        )
        result.check("the product's watches answered 410 Gone", gone, "≥ 1", gone >= 1)
        result.check("the product relisted", relists, "≥ 1", relists >= 1)
        check_routes(result, fleet)
        check_ownership(result, stack)
    return result


def apiserver_sigkill(ctx: Context) -> Result:
    outage = ctx.scale.outage
    result = Result(
        "apiserver_sigkill", f"kube-apiserver SIGKILLed during passes, down {outage:.0f} s, restarted"
    )
    with ctx.stack("apiserver-sigkill") as stack:
        fleet = stack.fleet
        fleet.create(names("svc", ctx.scale.services))
        fleet.wait_converged(timeout=ctx.scale.timeout)
        stack.auditor.poll()
        fleet.control.reset_requests()
        fleet.bump(tag="before-kill")  # every service has a pass to run
        time.sleep(0.5)  # ... and is in the middle of it
        fleet.plane.apiserver.kill()
        time.sleep(outage)
        start = fleet.plane.apiserver.start()
        back = time.monotonic()
        _converged_after(result, fleet, ctx, back, "kube-apiserver was back")
        result.measured.update(
            apiserver_start_seconds=round(start, 1),
            product_requests_unanswered=product_requests(fleet, code=503) + product_requests(fleet, code=502),
        )
        _alive(result, stack)
        check_routes(result, fleet)
        check_ownership(result, stack)
    return result


def etcd_sigkill(ctx: Context) -> Result:
    outage = ctx.scale.outage
    result = Result(
        "etcd_sigkill", f"etcd SIGKILLed during passes, down {outage:.0f} s, restarted on its data"
    )
    with ctx.stack("etcd-sigkill") as stack:
        fleet = stack.fleet
        fleet.create(names("svc", ctx.scale.services))
        fleet.wait_converged(timeout=ctx.scale.timeout)
        stack.auditor.poll()
        fleet.control.reset_requests()
        fleet.bump(tag="before-kill")
        time.sleep(0.5)
        fleet.plane.etcd.kill()
        time.sleep(outage)
        fleet.plane.etcd.start()
        back = time.monotonic()
        _converged_after(result, fleet, ctx, back, "etcd was back")
        failed = sum(product_requests(fleet, code=code) for code in (500, 502, 503, 504))
        result.measured.update(product_requests_failed=failed)
        _alive(result, stack)
        check_routes(result, fleet)
        check_ownership(result, stack)
    return result


def _without_route_writes(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rules with HTTPRoutes readable only (the verbs a watch and a get need)."""
    edited = copy.deepcopy(rules)
    for rule in edited:
        if ROUTES[0] in rule.get("apiGroups", []) and ROUTES[1] in rule.get("resources", []):
            rule["verbs"] = [v for v in rule["verbs"] if v in ("get", "list", "watch")]
    return edited


def _says_forbidden(svc: dict[str, Any]) -> bool:
    """RouterReady False with a reason, and a condition whose message says the write was forbidden."""
    found = conditions(svc)
    ready = found.get("RouterReady", {})
    told = any("forbidden" in str(c.get("message", "")).lower() for c in found.values())
    return ready.get("status") == "False" and bool(ready.get("reason")) and told


async def _failing(address: str, namespace: str) -> int:
    """Workflows of ``namespace`` the Temporal UI lists as not RouterReady (an operator's filter)."""
    client = await Client.connect(address, namespace="default")
    query = f'LlmisvcNamespace = "{namespace}" AND LlmisvcRouterReady = "False"'
    return len([w async for w in client.list_workflows(query)])


def rbac_revoked(ctx: Context) -> Result:
    gap = ctx.scale.forbidden
    result = Result(
        "rbac_revoked",
        f"the worker's ClusterRole without HTTPRoute writes for {gap:.0f} s while every route must change",
    )
    with ctx.stack("rbac-revoked") as stack:
        fleet = stack.fleet
        n = ctx.scale.services
        fleet.create(names("svc", n))
        fleet.wait_converged(timeout=ctx.scale.timeout)
        stack.auditor.poll()
        fleet.control.reset_requests()
        role = fleet.kube.get("ClusterRole", "", WORKER_ROLE)
        assert role is not None, f"no ClusterRole {WORKER_ROLE}: deploy/'s RBAC was not applied"
        rules = role["rules"]
        said: set[str] = set()
        listed = 0
        try:
            fleet.kube.patch("ClusterRole", "", WORKER_ROLE, {"rules": _without_route_writes(rules)})
            revoked = time.monotonic()
            fleet.bump(tag="forbidden")  # every route must change now
            while time.monotonic() - revoked < gap:
                said |= {name for name, svc in fleet.services().items() if _says_forbidden(svc)}
                time.sleep(0.5)
            listed = asyncio.run(_failing(stack.temporal.address, fleet.namespace))
        finally:
            fleet.kube.patch("ClusterRole", "", WORKER_ROLE, {"rules": rules})
        restored = time.monotonic()
        forbidden = product_requests(fleet, code=403)
        result.measured.update(product_requests_forbidden=forbidden, workflows_listed_not_ready=listed)
        result.check("the worker's writes were forbidden", forbidden, "≥ 1", forbidden >= 1)
        result.check(
            "services whose status said the write was forbidden", f"{len(said)}/{n}", "all", len(said) == n
        )
        result.check("workflows listed as not RouterReady meanwhile", f"{listed}/{n}", "all", listed == n)
        _converged_after(result, fleet, ctx, restored, "the ClusterRole was restored")
        check_routes(result, fleet)
        check_ownership(result, stack)
    return result
