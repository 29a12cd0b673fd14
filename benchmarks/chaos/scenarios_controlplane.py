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
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from temporalio.client import Client

from benchmarks.chaos.context import Context, Stack
from benchmarks.chaos.fleet import Fleet, conditions
from benchmarks.chaos.kube import KubeError
from benchmarks.chaos.report import Result
from benchmarks.chaos.scenarios_faults import (
    RECOVERY,
    SPARED,
    check_ownership,
    check_routes,
    names,
    product_requests,
)
from benchmarks.chaos.stack import Proc
from llmisvc_devstack.controlplane.processes import Component

WORKER_ROLE = "llmisvc-router-worker"
#: A pass that ended with a refused write is re-checked after 10 s, doubling (workflows.service_workflow's
#: RECHECK_FIRST): nothing tells the router its RBAC was fixed, so the re-check due when the ClusterRole
#: is restored comes at most (seconds the writes were forbidden) + 10 s later.
RECHECK_FIRST = 10.0
ROUTES = ("gateway.networking.k8s.io", "httproutes")
SERVICE = "LLMInferenceService"
#: The custom resources the product lists and watches.
WATCHED = (
    SERVICE, "LLMInferenceServiceConfig", "HTTPRoute", "Gateway", "GatewayClass", "InferencePool",
    "InferencePoolV1alpha2",
)  # fmt: skip
#: What the product logs when a watch of its met 410 Gone (llmisvc_cache.watch_loop).
EXPIRED_LINE = "expired (410 Gone): listing again"


def _watchable(fleet: Fleet, kind: str, timeout: float, resource_version: str | None) -> list[dict[str, Any]]:
    """Watch ``kind`` until kube-apiserver answers (its events), or [] after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            version = resource_version or fleet.kube.version(kind, fleet.namespace)
            return fleet.kube.watch_once(kind, fleet.namespace, version) or [{"type": "none"}]
        except (KubeError, OSError):
            time.sleep(0.2)
    return []


def _serving_again(
    fleet: Fleet, timeout: float, resource_version: str | None = None
) -> tuple[float | None, list[dict[str, Any]]]:
    """Seconds until kube-apiserver answers a watch of every custom resource the product watches again,
    and the events of the LLMInferenceServices' one (from ``resource_version`` when given, else from
    now). After a restart kube-apiserver makes a custom resource's storage on its first request, and
    answers watches of it once that storage has read etcd: seconds after ``/readyz``, each kind on its
    own, on a loaded machine."""
    started = time.monotonic()
    with ThreadPoolExecutor(len(WATCHED)) as pool:
        answers = list(
            pool.map(
                lambda k: _watchable(fleet, k, timeout, resource_version if k == SERVICE else None), WATCHED
            )
        )
    took = time.monotonic() - started
    return (took if all(answers) else None), answers[WATCHED.index(SERVICE)]


def _log_marks(procs: list[Proc]) -> dict[str, int]:
    return {p.name: p.log.stat().st_size for p in procs}


def _logged_since(procs: list[Proc], marks: dict[str, int], line: str) -> int:
    """How often ``line`` was logged by ``procs`` since ``marks``."""
    count = 0
    for p in procs:
        with p.log.open("rb") as log:
            log.seek(marks.get(p.name, 0))
            count += log.read().decode(errors="replace").count(line)
    return count


def _converged_after(
    result: Result, fleet: Fleet, ctx: Context, since: float, what: str,
    bound: float = RECOVERY, why: str = "",
) -> float | None:  # fmt: skip
    settled = fleet.wait_converged(timeout=max(ctx.scale.recovery_timeout, bound), since=since)
    result.measured["settled_seconds"] = settled
    within = settled is not None and settled <= bound
    result.check(f"converged after {what} (s)", settled, f"≤ {why or f'{bound:.0f}'}", within)
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
        procs = [*stack.workers, *stack.watchers]
        fleet.create(names("svc", ctx.scale.services))
        first = fleet.wait_converged(timeout=ctx.scale.timeout)
        stack.auditor.poll()
        fleet.control.reset_requests()
        # Every watch of the product ends and its next one waits at the proxy: nobody watches now.
        held = fleet.control.add_fault(verb="watch", hang=True, hang_timeout=300, exclude_user_agent=SPARED)
        cut = fleet.control.cut_watches()
        before = fleet.kube.version(SERVICE, fleet.namespace)
        fleet.bump(tag="unwatched")  # changes only a relist can tell the product about
        revision = fleet.plane.compact_etcd()
        restart = fleet.plane.apiserver.restart()  # its watch cache starts after the compaction
        serving, events = _serving_again(fleet, ctx.scale.recovery_timeout, before)
        gone = [e for e in events if e.get("type") == "ERROR" and (e.get("object") or {}).get("code") == 410]
        marks = _log_marks(procs)
        resumed = time.monotonic()
        fleet.control.remove_fault(held["id"])  # the held watches go on, from their old resourceVersions
        settled = _converged_after(result, fleet, ctx, resumed, "the watches resumed")
        expired = _logged_since(procs, marks, EXPIRED_LINE)
        relists = product_requests(fleet, verb="list")
        result.measured.update(
            first_convergence=first,
            watch_streams_cut=cut,
            compacted_at_revision=revision,
            apiserver_restart_seconds=round(restart, 1),
            seconds_until_custom_resources_watchable=serving,
            product_watches_expired=expired,
            product_relists=relists,
            settled_seconds=settled,
        )
        result.check(
            "a watch from before the compaction is answered 410 Gone", len(gone) > 0, "True", bool(gone)
        )
        result.check("the product's resumed watches met 410 Gone (its logs)", expired, "≥ 1", expired >= 1)
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
        start, serving = _killed_mid_pass(
            ctx, stack, result, fleet.plane.apiserver, "kube-apiserver served again"
        )
        result.measured.update(
            apiserver_start_seconds=round(start, 1),
            seconds_until_custom_resources_watchable=serving,
            product_requests_unanswered=product_requests(fleet, code=503) + product_requests(fleet, code=502),
        )
        _after_the_kill(result, stack)
    return result


def etcd_sigkill(ctx: Context) -> Result:
    outage = ctx.scale.outage
    result = Result(
        "etcd_sigkill", f"etcd SIGKILLed during passes, down {outage:.0f} s, restarted on its data"
    )
    with ctx.stack("etcd-sigkill") as stack:
        fleet = stack.fleet
        back_when = "etcd was back and kube-apiserver served again"
        _, serving = _killed_mid_pass(ctx, stack, result, fleet.plane.etcd, back_when)
        failed = sum(product_requests(fleet, code=code) for code in (500, 502, 503, 504))
        result.measured.update(
            product_requests_failed=failed, seconds_until_custom_resources_watchable=serving
        )
        _after_the_kill(result, stack)
    return result


def _killed_mid_pass(
    ctx: Context, stack: Stack, result: Result, component: Component, back_when: str
) -> tuple[float, float | None]:
    """Converge the fleet, start a pass of every service, SIGKILL ``component`` in the middle of it, keep
    it down for the scale's outage, start it again; check convergence after the API serves again. The
    component's start-up seconds and those until custom resources were watchable again."""
    fleet = stack.fleet
    fleet.create(names("svc", ctx.scale.services))
    fleet.wait_converged(timeout=ctx.scale.timeout)
    stack.auditor.poll()
    fleet.control.reset_requests()
    fleet.bump(tag="before-kill")  # every service has a pass to run
    time.sleep(0.5)  # ... and is in the middle of it
    component.kill()
    time.sleep(ctx.scale.outage)
    start = component.start()
    serving, _ = _serving_again(fleet, ctx.scale.recovery_timeout)
    _converged_after(result, fleet, ctx, time.monotonic(), back_when)
    return start, serving


def _after_the_kill(result: Result, stack: Stack) -> None:
    _alive(result, stack)
    check_routes(result, stack.fleet)
    check_ownership(result, stack)


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
        bound = gap + RECHECK_FIRST + RECOVERY
        why = f"{gap:.0f} + {RECHECK_FIRST:.0f} + {RECOVERY:.0f} = {bound:.0f} (the re-check due, a pass)"
        _converged_after(result, fleet, ctx, restored, "the ClusterRole was restored", bound, why)
        check_routes(result, fleet)
        check_ownership(result, stack)
    return result
