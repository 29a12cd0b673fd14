"""API faults, cut watch streams, CRD removal: the cluster misbehaves, the processes stay up.

Faults are injected by the proxy between the product and kube-apiserver, through its control endpoint,
so they hit only the product's requests (the suite and the simulated controllers talk to kube-apiserver
directly; ``exclude_user_agent`` would spare them all the same). The CRDs are removed from and installed
on the real control plane."""

from __future__ import annotations

import random
import time

from benchmarks.chaos.context import Context
from benchmarks.chaos.fleet import NOT_PRODUCT, Fleet, conditions
from benchmarks.chaos.report import Result

SPARED = ",".join(NOT_PRODUCT)
RECOVERY = 15.0  # seconds: the suite's bound for "converged again after the fault ended"


def names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{i:03d}" for i in range(n)]


def check_ownership(result: Result, stack: object) -> None:
    foreign = stack.foreign_writes()  # type: ignore[attr-defined]
    result.measured["foreign_writes"] = [str(w) for w in foreign]
    result.check("objects written that are not the service's", len(foreign), "0", not foreign)


def api_faults_10(ctx: Context) -> Result:
    result = Result("api_faults_10", "10% of the product's API requests fail (HTTP 500)")
    n, timeout = ctx.scale.services, ctx.scale.timeout
    with ctx.stack("api-faults-10") as stack:
        fleet = stack.fleet
        base = names("calm", n)
        started = time.monotonic()
        fleet.create(base)
        calm = fleet.wait_converged(base, timeout, since=started)
        rule = fleet.control.add_fault(probability=0.1, status=500, exclude_user_agent=SPARED)
        faulted = names("faulted", n)
        started = time.monotonic()
        fleet.create(faulted)
        stormy = fleet.wait_converged(faulted, timeout, since=started)
        fired = next((r["fired"] for r in fleet.control.faults() if r["id"] == rule["id"]), 0)
        fleet.control.clear_faults()
        result.measured.update(fault_free_seconds=calm, faulted_seconds=stormy, injected_failures=fired)
        result.check(f"{n} services converge, no faults (s)", calm, f"≤ {timeout:.0f}", calm is not None)
        allowance = ctx.scale.fault_allowance
        bound = 2 * calm + allowance if calm else 0.0
        result.check(
            f"{n} services converge, 10% faults (s)",
            stormy,
            f"≤ 2 × fault-free{f' + {allowance:.0f}' if allowance else ''} = {bound:.1f}",
            stormy is not None and calm is not None and stormy <= bound,
        )
        check_ownership(result, stack)
    return result


def api_faults_30(ctx: Context) -> Result:
    window = ctx.scale.fault_window
    result = Result("api_faults_30", f"30% of the product's API requests fail for {window:.0f} s")
    n = ctx.scale.services
    with ctx.stack("api-faults-30") as stack:
        fleet = stack.fleet
        fleet.control.add_fault(probability=0.3, status=500, exclude_user_agent=SPARED)
        started = time.monotonic()
        fleet.create(names("svc", n))
        while time.monotonic() - started < window:
            time.sleep(0.5)
        inside = len(fleet.converged())
        fleet.control.clear_faults()
        after = fleet.wait_converged(timeout=ctx.scale.recovery_timeout)
        result.measured.update(converged_in_window=inside, services=n, seconds_to_all_after_window=after)
        result.check("converged inside the window", f"{inside}/{n}", "≥ 90%", inside >= 0.9 * n)
        result.check(
            "all converged after the window (s)",
            after,
            f"≤ {RECOVERY:.0f}",
            after is not None and after <= RECOVERY,
        )
        check_ownership(result, stack)
    return result


def product_requests(fleet: Fleet, **filters: object) -> int:
    """The product's requests through the proxy since its counters were reset."""
    return fleet.control.count(**filters) - sum(
        fleet.control.count(user_agent=agent, **filters) for agent in NOT_PRODUCT
    )


def check_routes(result: Result, fleet: Fleet) -> None:
    """Nothing lost or doubled: exactly one managed route per service, and the team's own route."""
    routes = [r["metadata"]["name"] for r in fleet.kube.list("HTTPRoute", fleet.namespace)]
    expected = sorted([f"{n}-kserve-route" for n in fleet.names] + ["team-route"])
    result.measured["routes"] = len(routes)
    result.check(
        "routes: one per service, none lost or doubled",
        len(routes),
        f"= {len(expected)}",
        sorted(routes) == expected,
    )


def watch_cuts(ctx: Context) -> Result:
    length = ctx.scale.watch_chaos
    result = Result("watch_cuts", f"{length:.0f} s of dropped and cut watch streams while services change")
    with ctx.stack("watch-cuts") as stack:
        fleet = stack.fleet
        fleet.create(names("svc", ctx.scale.services))
        first = fleet.wait_converged(timeout=ctx.scale.timeout)
        stack.auditor.poll()  # the audit reads the log before it is reset
        fleet.control.reset_requests()
        rng, cut, edits = random.Random(13), 0, 0
        started = time.monotonic()
        while time.monotonic() - started < length:
            # The next five watch streams end after a few events, cleanly or with the connection cut ...
            fleet.control.add_fault(
                verb="watch",
                drop_watch_after=rng.randint(0, 3),
                drop_abruptly=rng.random() < 0.5,
                times=5,
                exclude_user_agent=SPARED,
            )
            if rng.random() < 0.4:  # ... and now and then every open one at once, as a proxy restart would
                cut += fleet.control.cut_watches(abruptly=rng.random() < 0.5)
            fleet.bump(rng.sample(fleet.names, max(1, len(fleet.names) // 5)))
            edits += 1
            time.sleep(1.0)
        dropped = sum(r["fired"] for r in fleet.control.faults())
        fleet.control.clear_faults()
        ended = time.monotonic()
        settled = fleet.wait_converged(timeout=ctx.scale.recovery_timeout, since=ended)
        result.measured.update(
            first_convergence=first,
            watch_streams_dropped=dropped,
            watch_streams_cut=cut,
            edit_rounds=edits,
            product_relists=product_requests(fleet, verb="list"),
            settled_seconds=settled,
        )
        result.check(
            "converged after the last cut (s)",
            settled,
            f"≤ {RECOVERY:.0f}",
            settled is not None and settled <= RECOVERY,
        )
        check_routes(result, fleet)
        check_ownership(result, stack)
    return result


def crd_removal(ctx: Context) -> Result:
    gap = ctx.scale.crd_missing
    result = Result("crd_removal", f"the InferencePool CRDs removed for {gap:.0f} s, then reinstalled")
    with ctx.stack("crd-removal") as stack:
        fleet = stack.fleet
        n = ctx.scale.services
        fleet.create(names("svc", n))
        fleet.wait_converged(timeout=ctx.scale.timeout)
        stack.auditor.poll()  # the audit reads the log before it is reset
        fleet.control.reset_requests()
        fleet.plane.remove_crds("pools")
        said: set[str] = set()  # services whose status said, at some point of the gap, they are not ready
        removed = time.monotonic()
        while time.monotonic() - removed < gap:
            for name, svc in fleet.services().items():
                ready = conditions(svc).get("RouterReady", {})
                if ready.get("status") == "False" and ready.get("reason"):
                    said.add(name)
            time.sleep(0.5)
        requests = product_requests(fleet)
        fleet.plane.install_crds("pools")
        back = fleet.wait_converged(timeout=ctx.scale.recovery_timeout)
        result.measured.update(
            product_requests_per_service_while_missing=requests / n, recovered_seconds=back
        )
        result.check(
            "services whose status said they are not ready", f"{len(said)}/{n}", "all", len(said) == n
        )
        result.check(
            "converged after reinstall (s)", back, f"≤ {RECOVERY:.0f}", back is not None and back <= RECOVERY
        )
        check_ownership(result, stack)
    return result
