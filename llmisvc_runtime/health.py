"""What the liveness and readiness probes answer, decided from plain state: no I/O, no clock (``now`` is an
argument, ``time.monotonic()`` seconds). :mod:`llmisvc_runtime.probes` gathers the state and serves the
answers.

As controller-runtime advises, liveness (``/healthz``) fails only for a wedged process: the HTTP thread
answers (``ping``) and the event loop has ticked recently (``event-loop``); a dependency that is down never
fails it, or the kubelet would restart every pod for an outage a restart cannot fix. Readiness
(``/readyz``) adds the dependencies:

- ``watch <collection>``, one per list+watch loop of the cluster cache: failed while the loop has not
  listed its collection yet (a kind that is not served counts as listed: an empty collection), and while
  its requests have failed for longer than the grace (refused, unanswered, or answered other than 200,
  404 or 410) with no answer in between;
- ``temporal``: the Temporal frontend answered the periodic gRPC health check within the grace (the
  worker's pollers use the same connection);
- ``worker``: the Temporal worker runs (polling, or draining after SIGTERM: then it is not ready).

The answers read like kube-apiserver's: ``ok``, or 503 with a line per failed check; ``?verbose`` lists
every check (``[+]name ok``, ``[-]name failed: reason``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from llmisvc_cache.model import LoopHealth

OK = 200
UNAVAILABLE = 503


@dataclass(frozen=True)
class CheckResult:
    name: str
    problem: str | None = None  # None: passed

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class ConnectionHealth:
    """The latest outcome of a periodic connectivity check: since when it fails and why (None: it
    passed last time)."""

    failing_since: float | None = None
    last_error: str = ""

    def passed(self) -> ConnectionHealth:
        return ConnectionHealth()

    def failed(self, now: float, error: str) -> ConnectionHealth:
        return ConnectionHealth(now if self.failing_since is None else self.failing_since, error)


def event_loop(last_tick: float, now: float, stall: float) -> CheckResult:
    """The event loop ran its heartbeat within ``stall`` seconds."""
    late = now - last_tick
    problem = f"no heartbeat for {late:.0f}s (the event loop is blocked)" if late > stall else None
    return CheckResult("event-loop", problem)


def watches(loops: Sequence[LoopHealth], now: float, grace: float) -> list[CheckResult]:
    """One check per loop; a cache with no loops yet is not ready either."""
    if not loops:
        return [CheckResult("watches", "no watch started yet")]
    return [CheckResult(f"watch {loop.target}", loop_problem(loop, now, grace)) for loop in loops]


def loop_problem(loop: LoopHealth, now: float, grace: float) -> str | None:
    cause = f": {loop.last_error}" if loop.last_error else ""
    if not loop.listed:
        return f"not listed for {now - loop.started:.0f}s{cause}"
    if loop.failing_since is not None and now - loop.failing_since > grace:
        return f"failing for {now - loop.failing_since:.0f}s{cause}"
    return None


def connection(name: str, target: str, health: ConnectionHealth, now: float, grace: float) -> CheckResult:
    """A connectivity check that has failed for longer than ``grace`` seconds."""
    since = health.failing_since
    if since is None or now - since <= grace:
        return CheckResult(name)
    return CheckResult(name, f"{target} unreachable for {now - since:.0f}s: {health.last_error}")


def answer(endpoint: str, results: Iterable[CheckResult], verbose: bool) -> tuple[int, str]:
    """The status and plain-text body of ``/healthz`` or ``/readyz``."""
    results = list(results)
    failed = [r for r in results if not r.ok]
    status = UNAVAILABLE if failed else OK
    if verbose:
        lines = [f"[+]{r.name} ok" if r.ok else f"[-]{r.name} failed: {r.problem}" for r in results]
        lines.append(f"{endpoint} check {'failed' if failed else 'passed'}")
        return status, "\n".join(lines) + "\n"
    if not failed:
        return status, "ok\n"
    return status, "".join(f"{r.name}: {r.problem}\n" for r in failed)
