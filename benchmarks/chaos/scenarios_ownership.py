"""Ownership: the router must never write or delete an object that is not its service's.

- ``foreign_route``: a user's own HTTPRoute already has the name the router would give the service's
  route; the router must leave it alone (and say so in the service's status).
- ``replaced_route``: the DELETE of a stopped service's route fails three times (HTTP 503); meanwhile the
  user replaces the route with one of their own, same name; the retried DELETE must not remove it.
- ``recreated_service``: the create of a new service's route fails three times; meanwhile the service is
  deleted and created again (a new uid); the retried create must not write a route owned by the old uid.

Each marks the window in which the name was someone else's; a product write inside it is foreign.
"""

from __future__ import annotations

import threading
import time

from benchmarks.chaos.context import Context
from benchmarks.chaos.fleet import conditions, service, user_route
from benchmarks.chaos.report import Result
from benchmarks.chaos.scenarios_faults import RECOVERY, check_ownership, names

STOP = "serving.kserve.io/stop"


def _wait(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def _fired(stack: object, rule_id: str) -> int:
    rules = stack.fleet.control.faults()  # type: ignore[attr-defined]
    return int(next((r["fired"] for r in rules if r["id"] == rule_id), 0))


def foreign_route(ctx: Context) -> Result:
    result = Result("foreign_route", "a user's HTTPRoute already has the name of the service's route")
    with ctx.stack("foreign-route") as stack:
        fleet = stack.fleet
        taken = "taken"
        route = fleet.kube.create("HTTPRoute", user_route(f"{taken}-kserve-route", fleet.namespace))
        fleet.foreign_windows.append(
            ("httproutes", fleet.namespace, f"{taken}-kserve-route", 0.0, float("inf"))
        )
        others = names("svc", max(1, ctx.scale.services - 1))
        fleet.create([taken, *others])
        settled = fleet.wait_converged(others, timeout=ctx.scale.timeout)
        time.sleep(3.0)  # more passes of the service whose route name is taken
        after = fleet.kube.get("HTTPRoute", fleet.namespace, f"{taken}-kserve-route") or {}
        # Its uid, labels and spec (the simulated gateway controller writes its status: that is fine).
        kept = after.get("spec") == route["spec"] and all(
            after.get("metadata", {}).get(k) == route["metadata"].get(k)
            for k in ("uid", "labels", "ownerReferences")
        )
        ready = conditions(fleet.services()[taken]).get("RouterReady", {})
        result.measured.update(others_converged_seconds=settled, taken_service_router_ready=ready)
        result.check("the user's route untouched", kept, "True", kept)
        result.check(
            "the service reports it",
            f"{ready.get('status')}/{ready.get('reason')}",
            "RouterReady False with a reason",
            ready.get("status") == "False" and bool(ready.get("reason")),
        )
        result.check("the other services converged", settled is not None, "True", settled is not None)
        check_ownership(result, stack)
    return result


def replaced_route(ctx: Context) -> Result:
    result = Result(
        "replaced_route", "a stopped service's route replaced by the user's while its DELETE is retried"
    )
    with ctx.stack("replaced-route") as stack:
        fleet = stack.fleet
        name, route_name = "stopping", "stopping-kserve-route"
        fleet.create([name])
        fleet.wait_converged(timeout=ctx.scale.timeout)
        rule = fleet.control.add_fault(
            verb="delete",
            resource="httproutes",
            name=route_name,
            status=503,
            times=3,
            exclude_user_agent="chaos",
        )
        fleet.kube.patch(
            "LLMInferenceService", fleet.namespace, name, {"metadata": {"annotations": {STOP: "true"}}}
        )
        first = _wait(lambda: _fired(stack, rule["id"]) >= 1, 30)
        fleet.kube.delete("HTTPRoute", fleet.namespace, route_name)  # the user's hand, not the router's
        replaced_at = time.time()
        mine = fleet.kube.create("HTTPRoute", user_route(route_name, fleet.namespace))
        fleet.foreign_windows.append(("httproutes", fleet.namespace, route_name, replaced_at, float("inf")))
        _wait(lambda: _fired(stack, rule["id"]) >= 3, 30)
        time.sleep(5.0)  # the retry after the last failure, and a pass or two after it
        after = fleet.kube.get("HTTPRoute", fleet.namespace, route_name)
        survived = after is not None and after["metadata"]["uid"] == mine["metadata"]["uid"]
        result.measured.update(delete_failures=_fired(stack, rule["id"]), first_failure_seen=first)
        result.check("the user's replacement route survives", survived, "True", survived)
        check_ownership(result, stack)
    return result


def recreated_service(ctx: Context) -> Result:
    result = Result(
        "recreated_service", "a service deleted and created again while its route create is retried"
    )
    with ctx.stack("recreated-service") as stack:
        fleet = stack.fleet
        name, route_name = "reborn", "reborn-kserve-route"
        # A create's path has no name: the namespace holds only this service's route.
        rule = fleet.control.add_fault(
            verb="create",
            resource="httproutes",
            namespace=fleet.namespace,
            status=503,
            times=3,
            exclude_user_agent="chaos",
        )
        old = fleet.kube.create("LLMInferenceService", service(name, fleet.namespace))
        fleet.names.append(name)
        _wait(lambda: _fired(stack, rule["id"]) >= 1, 30)
        deleted_at = time.time()
        fleet.kube.delete("LLMInferenceService", fleet.namespace, name)
        _wait(lambda: fleet.kube.get("LLMInferenceService", fleet.namespace, name) is None, 10)
        _wait(lambda: fleet.kube.get("HTTPRoute", fleet.namespace, route_name) is None, 10)
        new = fleet.kube.create("LLMInferenceService", service(name, fleet.namespace))
        fleet.foreign_windows.append(("httproutes", fleet.namespace, route_name, deleted_at, time.time()))
        old_uid, new_uid = old["metadata"]["uid"], new["metadata"]["uid"]
        stale: list[str] = []
        stop = threading.Event()

        def watch_owner() -> None:  # every version of the route, by whom it claims to be owned
            while not stop.wait(0.05):
                route = fleet.kube.get("HTTPRoute", fleet.namespace, route_name) or {}
                owners = {r.get("uid") for r in route.get("metadata", {}).get("ownerReferences") or []}
                if old_uid in owners and route["metadata"]["resourceVersion"] not in stale:
                    stale.append(route["metadata"]["resourceVersion"])

        watcher = threading.Thread(target=watch_owner, daemon=True)
        watcher.start()
        recreated = time.monotonic()
        settled = fleet.wait_converged([name], timeout=ctx.scale.recovery_timeout, since=recreated)
        time.sleep(3.0)
        stop.set()
        watcher.join(5)
        route = fleet.kube.get("HTTPRoute", fleet.namespace, route_name) or {}
        owners = [r.get("uid") for r in route.get("metadata", {}).get("ownerReferences") or []]
        result.measured.update(
            converged_seconds=settled, route_owners=owners, create_failures=_fired(stack, rule["id"])
        )
        result.check("route versions owned by the deleted service", len(stale), "0", not stale)
        result.check(
            "the new service converged (s)",
            settled,
            f"≤ {RECOVERY:.0f}",
            settled is not None and settled <= RECOVERY,
        )
        result.check("its route is owned by the new uid", owners == [new_uid], "True", owners == [new_uid])
        check_ownership(result, stack)
    return result
