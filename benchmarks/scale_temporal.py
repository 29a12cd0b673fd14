"""The Temporal mode of ``bench_scale.py``: the convergence of the fleet as the worker and watcher
processes achieve it, what it cost (passes, API requests, workflow task timeouts, the worker's memory),
and one no-op pass measured from its workflow history and the counting proxy's request counters.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from temporalio.client import Client, WorkflowHandle

from benchmarks import scale_analysis as analysis
from benchmarks.scale_stack import Fleet, cpu_seconds, peak_rss_mib
from workflows.models import DEFAULT_RESYNC_SECONDS, ReconcileSignal, WorkflowState, workflow_id
from workflows.service_workflow import LLMInferenceServiceWorkflow

#: Resync passes a day of an idle service at the default resync period.
PASSES_PER_DAY = 86400 / DEFAULT_RESYNC_SECONDS
#: Settled services reconciled at once to measure the CPU of a no-op pass.
CPU_PASSES = 100


@dataclass
class TemporalRun:
    ready: dict[str, float]
    figures: dict[str, float] = field(default_factory=dict)


async def _bounded(calls: list[Any], limit: int = 32) -> list[Any]:
    """The results, at most ``limit`` calls in flight; a call that failed (a query to a workflow that a
    stuck worker never answers) gives its exception, so that a run that did not converge still reports."""
    semaphore = asyncio.Semaphore(limit)

    async def one(call: Any) -> Any:
        async with semaphore:
            return await call

    return await asyncio.gather(*(one(c) for c in calls), return_exceptions=True)


async def _state(handle: WorkflowHandle[Any, Any]) -> WorkflowState:
    state: WorkflowState = await handle.query(LLMInferenceServiceWorkflow.state)
    return state


async def run_temporal(
    client: Client, fleet: Fleet, names: list[str], worker: int, timeout: float
) -> TemporalRun:
    await asyncio.to_thread(fleet.control.reset_requests)
    started = time.monotonic()
    await asyncio.to_thread(fleet.create_all, names)
    ready = await asyncio.to_thread(fleet.watch_ready, names, started, timeout)
    await asyncio.to_thread(fleet.wait_quiet)
    reads, writes = await asyncio.to_thread(fleet.product_requests)
    handles = [client.get_workflow_handle(workflow_id(fleet.namespace, n)) for n in names]
    states = [s for s in await _bounded([_state(h) for h in handles]) if isinstance(s, WorkflowState)]
    histories = [h for h in await _bounded([h.fetch_history() for h in handles]) if hasattr(h, "events")]
    if len(states) < len(names):
        print(f"{len(names) - len(states)} workflows did not answer the state query", flush=True)
    kinds = [analysis.workflow_task_timeouts_by_kind(h.events) for h in histories]
    figures = {
        "workflow_task_timeouts": sum(sum(k.values()) for k in kinds),
        **{f"workflow_task_timeouts.{kind}": sum(k[kind] for k in kinds) for kind in analysis.TIMEOUT_KINDS},
        "worker_peak_rss_mib": peak_rss_mib(worker),
        "passes_per_service": sum(s.pass_count for s in states) / max(1, len(states)),
        "api_requests_per_service": (reads + writes) / len(names),
    }
    return TemporalRun(ready, figures)


async def noop_pass(client: Client, fleet: Fleet, name: str) -> dict[str, float]:
    """A ``reconcile`` signal on a settled service: the cost of the pass that writes nothing."""
    handle = client.get_workflow_handle(workflow_id(fleet.namespace, name))
    figures: dict[str, float] = {}
    for _ in range(5):  # another trigger may slip in: measure again
        before = len((await handle.fetch_history()).events)
        state = await _state(handle)
        await asyncio.to_thread(fleet.control.reset_requests)
        await handle.signal(LLMInferenceServiceWorkflow.reconcile, ReconcileSignal(reason="benchmark: no-op"))
        deadline = time.monotonic() + 30
        after = state
        while time.monotonic() < deadline and (after.pass_count <= state.pass_count or after.pending_reasons):
            await asyncio.sleep(0.05)
            after = await _state(handle)
        await asyncio.sleep(0.3)  # the workflow task that follows the last activity
        events = (await handle.fetch_history()).events[before:]
        reads, writes = await asyncio.to_thread(fleet.product_requests)
        cost = analysis.pass_cost(events)
        figures = {
            "noop_pass.history_events": cost.history_events,
            "noop_pass.history_bytes": cost.history_bytes,
            "noop_pass.workflow_tasks": cost.workflow_tasks,
            "noop_pass.activities": cost.activities,
            "noop_pass.api_requests": reads + writes,
            "noop_pass.api_writes": writes,
            "noop_pass.actions": cost.actions,
            # At idle a service passes once per resync, on its timer instead of a signal: the same pass
            # less the signal's Action (its history differs by the one event).
            "idle.actions_per_service_per_day": (cost.actions - cost.signals) * PASSES_PER_DAY,
            "idle.history_kib_per_service_per_day": cost.history_bytes * PASSES_PER_DAY / 1024,
        }
        if after.pass_count == state.pass_count + 1 and writes == 0:
            break
    return figures


async def noop_cpu(
    client: Client, fleet: Fleet, names: list[str], pids: dict[str, int], window: float = 6.0
) -> dict[str, float]:
    """CPU milliseconds per no-op pass of each process in ``pids`` (worker, watcher, Temporal server):
    their CPU over ``window`` seconds idle, then over as long while up to :data:`CPU_PASSES` settled
    services each take a ``reconcile`` signal, the difference divided by the passes that ran."""
    chosen = names[:CPU_PASSES]
    handles = [client.get_workflow_handle(workflow_id(fleet.namespace, n)) for n in chosen]
    before = [s for s in await _bounded([_state(h) for h in handles]) if isinstance(s, WorkflowState)]
    if len(before) < len(chosen):
        return {}
    idle = _cpu(pids)
    await asyncio.sleep(window)
    start = _cpu(pids)
    signal = ReconcileSignal(reason="benchmark: no-op")
    await _bounded([h.signal(LLMInferenceServiceWorkflow.reconcile, signal) for h in handles])
    await asyncio.sleep(window)  # the passes take milliseconds each
    end = _cpu(pids)
    after = [s for s in await _bounded([_state(h) for h in handles]) if isinstance(s, WorkflowState)]
    passes = sum(a.pass_count - b.pass_count for a, b in zip(after, before, strict=False))
    if passes <= 0:
        return {}
    scale = (end["at"] - start["at"]) / (start["at"] - idle["at"])  # the idle rate over the busy span
    return {
        f"noop_pass.cpu_ms.{name}": max(0.0, (end[name] - start[name]) - (start[name] - idle[name]) * scale)
        * 1000
        / passes
        for name in pids
    }


def _cpu(pids: dict[str, int]) -> dict[str, float]:
    return {"at": time.monotonic(), **{name: cpu_seconds(pid) for name, pid in pids.items()}}
