"""What a scenario runs on: the scale, a Temporal dev server shared by the run (a scenario that kills
Temporal starts its own), and per scenario a fresh stand-in with workers and watchers on a task queue
and a Kubernetes namespace of its own (so workflow ids never collide across scenarios)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.chaos.fleet import Auditor, Fleet, Write
from benchmarks.chaos.stack import READY_LINES, Proc, Standin, TemporalServer, product


@dataclass(frozen=True)
class Scale:
    name: str
    services: int
    fault_window: float  # seconds of the 30% window
    kills: int  # worker SIGKILLs
    malformed: int
    watch_chaos: float  # seconds of watch cuts and compactions
    crd_missing: float  # seconds the InferencePool CRDs stay removed
    timeout: float  # the longest a first convergence is waited for
    recovery_timeout: float  # the longest a convergence after a fault is waited for (past it: "none")
    #: Seconds added to the 10%-fault bound of twice the fault-free time. At 10 services a fault-free
    #: convergence takes 1-2 s, shorter than the waits the same faults cause outside a pass (a failed
    #: list or watch of the cache or the watcher is tried again after 0.5 s, then 1 s, 2 s), so the ratio
    #: alone would measure one such wait, not the passes. The full run has none.
    fault_allowance: float = 0.0


FULL = Scale(
    "full",
    services=50,
    fault_window=120,
    kills=10,
    malformed=44,
    watch_chaos=60,
    crd_missing=30,
    timeout=300,
    recovery_timeout=120,
)
REDUCED = Scale(
    "reduced",
    services=10,
    fault_window=30,
    kills=3,
    malformed=40,
    watch_chaos=10,
    crd_missing=10,
    timeout=60,
    recovery_timeout=30,
    fault_allowance=3.0,
)
SCALES = {s.name: s for s in (FULL, REDUCED)}
SHARED_QUEUE = f"chaos-shared-{int(time.time())}"


@dataclass
class Stack:
    label: str
    temporal: TemporalServer
    standin: Standin
    fleet: Fleet
    workers: list[Proc]
    watchers: list[Proc]
    auditor: Auditor
    writes: list[Write] = field(default_factory=list)

    def foreign_writes(self) -> list[Write]:
        """The product's writes to objects it does not own, so far."""
        self.auditor.poll()
        return self.fleet.foreign(self.auditor.writes)


class Context:
    """``share=True`` (the reduced suite in ``make test``): scenarios that need one worker and one watcher
    run on one stand-in and one pair of processes, each in its own namespace, to save the start-up of a
    stack per scenario; a scenario that kills for good or needs more processes still gets its own."""

    def __init__(self, workdir: Path, scale: Scale, share: bool = False) -> None:
        self.workdir, self.scale, self.share = workdir, scale, share
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._temporal: TemporalServer | None = None
        self._shared: tuple[Standin, list[Proc]] | None = None

    def temporal(self) -> TemporalServer:
        if self._temporal is None:
            self._temporal = self.new_temporal(self.workdir / "temporal-shared")
        return self._temporal

    def new_temporal(self, directory: Path) -> TemporalServer:
        directory.mkdir(parents=True, exist_ok=True)
        server = TemporalServer(directory).start()
        server.register_search_attributes(directory / "register.log")
        return server

    def close(self) -> None:
        if self._shared is not None:
            for p in self._shared[1]:
                p.stop()
            self._shared[0].proc.stop()
        if self._temporal is not None:
            self._temporal.proc.stop()

    def _processes(self, directory: Path, temporal: TemporalServer, standin: Standin, queue: str,
                   commands: list[tuple[str, str]], namespaces: list[str]) -> list[Proc]:  # fmt: skip
        """Start ``(command, label)`` processes and wait until each serves."""
        procs = [product(c, label, directory, temporal, standin, queue, namespaces) for c, label in commands]
        try:
            for p in procs:
                p.start()
            for p in procs:
                p.wait_for_line(READY_LINES[p.argv[-1]])
        except BaseException:
            for p in procs:
                p.stop()
            raise
        return procs

    def _shared_stack(self) -> tuple[Standin, list[Proc]]:
        if self._shared is None:
            directory = self.workdir / "shared"
            directory.mkdir(parents=True, exist_ok=True)
            standin = Standin(directory, "shared")
            try:
                standin.start()
                Fleet.on(standin.url, "").seed_cluster()
                pair = [("worker", "worker-0"), ("watch", "watch-0")]
                procs = self._processes(directory, self.temporal(), standin, SHARED_QUEUE, pair, [])
            except BaseException:
                standin.proc.stop()
                raise
            self._shared = (standin, procs)
        standin, procs = self._shared
        for p in procs:
            if not p.alive():  # a scenario killed it and left it down: a Deployment would restart it
                p.start().wait_for_line(READY_LINES[p.argv[-1]])
        return self._shared

    @contextlib.contextmanager
    def stack(
        self, label: str, workers: int = 1, watchers: int = 1, own_temporal: bool = False
    ) -> Iterator[Stack]:
        """A seeded namespace with ``workers`` workers and ``watchers`` watchers for one scenario (shared:
        the shared pair plus what more the scenario asks for, stopped after it)."""
        namespace = f"chaos-{label}".replace("_", "-")[:60]
        directory = self.workdir / label
        directory.mkdir(parents=True, exist_ok=True)
        fresh_temporal = own_temporal and not self.share
        with contextlib.ExitStack() as cleanup:  # whatever started is stopped, however far start-up got
            temporal = self.new_temporal(directory) if fresh_temporal else self.temporal()
            if fresh_temporal:
                cleanup.callback(temporal.proc.stop)
            if self.share:
                standin, pair = self._shared_stack()
                queue, namespaces = SHARED_QUEUE, []
            else:
                standin, pair = Standin(directory, label), []
                cleanup.callback(standin.proc.stop)
                standin.start()
                Fleet.on(standin.url, "").seed_cluster()
                queue, namespaces = f"chaos-{label}-{int(time.time())}", [namespace]
            fleet = Fleet.on(standin.url, namespace)
            cleanup.callback(fleet.control.clear_faults)
            fleet.seed()
            have_workers, have_watchers = pair[:1], pair[1:]
            wanted = [("worker", f"worker-{i}") for i in range(len(have_workers), workers)]
            wanted += [("watch", f"watch-{i}") for i in range(len(have_watchers), watchers)]
            extra = [product(c, name, directory, temporal, standin, queue, namespaces) for c, name in wanted]
            for p in extra:
                cleanup.callback(p.stop)
                p.start()
            for p in extra:
                p.wait_for_line(READY_LINES[p.argv[-1]])
            auditor = Auditor(fleet.control)
            auditor.start()
            cleanup.callback(auditor.stop)
            all_workers = have_workers + [p for p in extra if p.argv[-1] == "worker"]
            all_watchers = have_watchers + [p for p in extra if p.argv[-1] == "watch"]
            yield Stack(label, temporal, standin, fleet, all_workers, all_watchers, auditor)
