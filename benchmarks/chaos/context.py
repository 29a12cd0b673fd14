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
    timeout: float  # the longest any convergence is waited for


FULL = Scale("full", services=50, fault_window=120, kills=10, malformed=44, watch_chaos=60, crd_missing=30,
             timeout=300)  # fmt: skip
REDUCED = Scale("reduced", services=10, fault_window=40, kills=5, malformed=40, watch_chaos=15, crd_missing=10,
                timeout=60)  # fmt: skip
SCALES = {s.name: s for s in (FULL, REDUCED)}


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
    def __init__(self, workdir: Path, scale: Scale) -> None:
        self.workdir, self.scale = workdir, scale
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._temporal: TemporalServer | None = None

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
        if self._temporal is not None:
            self._temporal.proc.stop()

    @contextlib.contextmanager
    def stack(self, label: str, workers: int = 1, watchers: int = 1, own_temporal: bool = False) -> Iterator[Stack]:
        """A fresh stand-in (seeded), ``workers`` workers and ``watchers`` watchers for one scenario."""
        directory = self.workdir / label
        directory.mkdir(parents=True, exist_ok=True)
        temporal = self.new_temporal(directory) if own_temporal else self.temporal()
        standin = Standin(directory, label).start()
        namespace = f"chaos-{label}".replace("_", "-")[:60]
        fleet = Fleet.on(standin.url, namespace)
        fleet.seed()
        queue = f"chaos-{label}-{int(time.time())}"

        def proc(command: str, i: int) -> Proc:
            return product(command, f"{command}-{i}", directory, temporal, standin, queue, [namespace])

        procs = [proc("worker", i) for i in range(workers)] + [proc("watch", i) for i in range(watchers)]
        auditor = Auditor(fleet.control)
        try:
            for p in procs:
                p.start()
            for p in procs:
                p.wait_for_line(READY_LINES[p.argv[-1]])
            auditor.start()
            yield Stack(label, temporal, standin, fleet, procs[:workers], procs[workers:], auditor)
        finally:
            auditor.stop()
            for p in procs:
                p.stop()
            standin.proc.stop()
            if own_temporal:
                temporal.proc.stop()
