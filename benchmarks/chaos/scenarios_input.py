"""Hostile input: malformed services next to good ones, and fuzzed signals, updates and queries sent to
the workflows through the Temporal client and CLI. Neither may stop the good services being served."""

from __future__ import annotations

import asyncio
import subprocess
import time
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from benchmarks.chaos.context import Context
from benchmarks.chaos.fleet import service
from benchmarks.chaos.kube import KubeError
from benchmarks.chaos.report import Result
from benchmarks.chaos.scenarios_faults import check_ownership, names
from benchmarks.chaos.stack import TEMPORAL

Obj = dict[str, Any]
RECREATE = 2.0  # seconds: a good service's deleted route is back within this, malformed ones or not


def _nested(depth: int, as_dict: bool) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value} if as_dict else [value]
    return value


def _adapters(value: Any) -> Obj:
    return {"model": {"uri": "hf://facebook/opt-125m", "name": "m", "lora": {"adapters": value}}}


#: (label, spec) of each kind of malformed service; the open-schema ``lora.adapters`` takes any JSON.
VARIANTS: list[tuple[str, Obj]] = [
    ("deep-list-300", _adapters(_nested(300, False))),
    ("deep-list-600", _adapters(_nested(600, False))),
    ("deep-dict-600", _adapters(_nested(600, True))),
    ("string", _adapters("all of them")),
    ("number", _adapters(42)),
    ("object", _adapters({"name": "x"})),
    ("numbers", _adapters([1, 2, 3])),
    ("bad-items", _adapters([{"name": 5}, None, True])),
    ("nested-lists", _adapters([[[]]])),
    ("many", _adapters([{"name": f"a{i}", "uri": f"hf://x/a{i}"} for i in range(3000)])),
    ("huge-name", {"model": {"uri": "hf://facebook/opt-125m", "name": "m" * 100_000}}),
    ("huge-uri", {"model": {"uri": "hf://" + "u" * 200_000, "name": "m"}}),
    ("huge-annotation", {}),  # the annotation is set in _malformed
]


def _malformed(i: int, namespace: str) -> tuple[str, Obj]:
    label, spec = VARIANTS[i % len(VARIANTS)]
    name = f"bad-{i:02d}-{label}"
    body = service(name, namespace)
    body["spec"] = {**body["spec"], **spec}
    if label == "huge-annotation":
        body["metadata"]["annotations"] = {"example.com/blob": "b" * 200_000}
    return name, body


def _routes_back_after_delete(fleet: Any, names: list[str], timeout: float = 10.0) -> list[float | None]:
    """Delete each service's managed route (as a user would by mistake) and time until each is back."""
    routes = [f"{name}-kserve-route" for name in names]
    for route in routes:
        fleet.kube.delete("HTTPRoute", fleet.namespace, route)
    started = time.monotonic()
    back: dict[str, float] = {}
    while len(back) < len(routes) and time.monotonic() - started < timeout:
        for route in set(routes) - back.keys():
            if fleet.kube.get("HTTPRoute", fleet.namespace, route) is not None:
                back[route] = time.monotonic() - started
        time.sleep(0.02)
    return [back.get(route) for route in routes]


def _answered(fleet: Any, names: list[str]) -> list[str]:
    """Those of ``names`` whose status answers their generation (knative's observedGeneration)."""
    states = fleet.services()

    def answers(svc: Obj) -> bool:
        return bool((svc.get("status") or {}).get("observedGeneration") == svc["metadata"].get("generation"))

    return [m for m in names if m in states and answers(states[m])]


def _wait_answered(fleet: Any, names: list[str], timeout: float) -> tuple[list[str], float | None]:
    """Wait until every one of ``names`` has a status for its generation: those that do, and how long
    it took (None if some never did within ``timeout``)."""
    started = time.monotonic()
    while True:
        answered = _answered(fleet, names)
        took = time.monotonic() - started
        if len(answered) == len(names):
            return answered, round(took, 1)
        if took > timeout:
            return answered, None
        time.sleep(0.25)


def _worst(seconds: list[float | None]) -> float | None:
    return None if not seconds or None in seconds else max(s for s in seconds if s is not None)


def malformed_services(ctx: Context) -> Result:
    n = ctx.scale.malformed
    result = Result("malformed_services", f"{n} malformed services next to good ones")
    with ctx.stack("malformed") as stack:
        fleet = stack.fleet
        good = names("good", 3)
        fleet.create(good)
        fleet.wait_converged(good, timeout=ctx.scale.timeout)
        before = _worst(_routes_back_after_delete(fleet, good))
        accepted, refused = [], []
        for i in range(n):
            name, body = _malformed(i, fleet.namespace)
            try:
                fleet.kube.create("LLMInferenceService", body)
                accepted.append(name)
            except KubeError as exc:
                refused.append(f"{name}: HTTP {exc.code}")
        fleet.names += accepted
        # Every malformed service has had its first pass: its status answers its generation (waited for,
        # not assumed after a fixed pause: 40 first passes at once take seconds on a loaded machine).
        answered, answer_seconds = _wait_answered(fleet, accepted, ctx.scale.timeout)
        # Before the route repair below: a repaired route is without its gateway's status for a moment,
        # and the statuses of its pass (HTTPRoutesReady False, then True) would race the check.
        still = fleet.converged(good)
        seconds = _routes_back_after_delete(fleet, good)
        worst = _worst(seconds)
        processes = [*stack.workers, *stack.watchers, *stack.kube.processes()]
        alive = [p.name for p in processes if p.alive()]
        alive += [c.name for c in (fleet.plane.etcd, fleet.plane.apiserver) if c.running]
        result.measured.update(
            accepted=len(accepted),
            refused=refused,
            recreate_seconds=seconds,
            recreate_seconds_before_the_malformed=before,
            malformed_with_status=len(answered),
            malformed_answered_seconds=answer_seconds,
            processes_alive=alive,
        )
        result.check(
            "malformed services accepted by the API",
            len(accepted),
            f"≥ {min(n, 40)}",
            len(accepted) >= min(n, 40),
        )
        result.check(
            "a good service's deleted route is back (s)",
            worst,
            f"≤ {RECREATE:.0f}",
            worst is not None and worst <= RECREATE,
        )
        result.check(
            "good services still converged once every malformed one had its status",
            f"{len(still)}/{len(good)}",
            "all",
            len(still) == len(good),
        )
        result.check(
            "malformed services whose status answers their generation",
            f"{len(answered)}/{len(accepted)}",
            "all",
            len(answered) == len(accepted),
        )
        everyone = len(processes) + 2
        result.check(
            "processes alive (workers, watchers, proxy, controllers, etcd, kube-apiserver)",
            len(alive),
            f"{everyone}",
            len(alive) == everyone,
        )
        # Only the good services' children count as owned: nothing may be written for a malformed one
        # beyond its own objects, which fleet.names covers.
        check_ownership(result, stack)
        for name in accepted:  # leave a shared control plane as clean as it was found
            fleet.kube.delete("LLMInferenceService", fleet.namespace, name)
    return result


RECONCILE_ARGS: list[list[Any]] = [
    [],
    [None],
    [{}],
    [[]],
    [42],
    ["text"],
    [True],
    [{"reason": 5}],
    [{"reason": "x", "seen": "no"}],
    [{"reason": "x", "extra": [1]}],
    [{"seen": [{"bogus": 1}]}],
    [_nested(150, True)],
    [1, 2],
    [{"reason": "r" * 100_000}],
]
#: (handler kind, name, args) sent to every service's workflow.
FUZZ: list[tuple[str, str, list[Any]]] = [
    *[("signal", "reconcile", args) for args in RECONCILE_ARGS],
    *[("signal", "resume", args) for args in ([42], [{"x": 1}], ["text", 2])],
    ("signal", "no-such-signal", [{"x": 1}]),
    *[("update", "reconcile_now", args) for args in ([], [42], ["text"], [{"reason": 5}], [None])],
    *[("query", "state", args) for args in ([42], [{"x": 1}])],
    ("query", "no-such-query", []),
]


async def _send(client: Client, workflow_id: str) -> dict[str, int]:
    handle = client.get_workflow_handle(workflow_id)
    outcome = {"sent": 0, "refused": 0}
    for kind, name, args in FUZZ:
        try:
            if kind == "signal":
                await handle.signal(name, args=args)
            elif kind == "update":
                await asyncio.wait_for(handle.execute_update(name, args=args), 5)
            else:
                await asyncio.wait_for(handle.query(name, args=args), 5)
            outcome["sent"] += 1
        except Exception:  # a refused update or query is the right answer to junk; counted, not fatal
            outcome["refused"] += 1
    return outcome


async def _task_failures(client: Client, workflow_id: str) -> int:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return sum(e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED for e in history.events)


async def _queries_answer(client: Client, workflow_id: str) -> bool:
    try:
        await asyncio.wait_for(client.get_workflow_handle(workflow_id).query("state"), 10)
    except Exception:
        return False
    return True


def _cli_signal_without_input(address: str, workflow_id: str) -> int:
    """What an operator does in a hurry: ``temporal workflow signal --name reconcile``, no input."""
    command = [
        str(TEMPORAL),
        "workflow",
        "signal",
        "--address",
        address,
        "--workflow-id",
        workflow_id,
        "--name",
        "reconcile",
    ]
    return subprocess.run(command, capture_output=True, timeout=30, check=False).returncode


def fuzzed_signals(ctx: Context) -> Result:
    result = Result("fuzzed_signals", "junk payloads to every signal, update and query of every workflow")
    with ctx.stack("fuzzed-signals") as stack:
        fleet = stack.fleet
        fleet.create(names("svc", ctx.scale.services))
        fleet.wait_converged(timeout=ctx.scale.timeout)
        ids = [f"llmisvc/{fleet.namespace}/{n}" for n in fleet.names]
        cli = [_cli_signal_without_input(stack.temporal.address, i) for i in ids[:3]]

        async def fuzz() -> tuple[list[dict[str, int]], list[int], list[bool]]:
            client = await Client.connect(stack.temporal.address, namespace="default")
            sent = await asyncio.gather(*(_send(client, i) for i in ids))
            await asyncio.sleep(3.0)
            failures = await asyncio.gather(*(_task_failures(client, i) for i in ids))
            answers = await asyncio.gather(*(_queries_answer(client, i) for i in ids))
            return list(sent), list(failures), list(answers)

        sent, failures, answers = asyncio.run(fuzz())
        back = _routes_back_after_delete(fleet, fleet.names[:3])
        worst = _worst(back)
        result.measured.update(
            payloads_per_workflow=len(FUZZ),
            cli_exit_codes=cli,
            sent=sum(s["sent"] for s in sent),
            refused=sum(s["refused"] for s in sent),
            route_back_seconds=back,
        )
        result.check("workflow task failures", sum(failures), "0", sum(failures) == 0)
        result.check("workflows answering queries", f"{sum(answers)}/{len(ids)}", "all", all(answers))
        result.check(
            "passes still run: a deleted route is back (s)",
            worst,
            f"≤ {RECREATE:.0f}",
            worst is not None and worst <= RECREATE,
        )
        check_ownership(result, stack)
    return result
