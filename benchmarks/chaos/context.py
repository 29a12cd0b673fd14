"""What a scenario runs on: the scale; a Temporal dev server shared by the run (a scenario that kills
Temporal starts its own); one real control plane for the run, with the fault proxy and the simulated
controllers (:mod:`benchmarks.kube_stack`); and per scenario a Kubernetes namespace of its own with two
workers and two watchers on a task queue of its own (so workflow ids never collide across scenarios).
Scenarios run one after another, so one that kills kube-apiserver or etcd, compacts etcd, removes CRDs
or edits the router's RBAC has the control plane to itself, and leaves it as it found it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.chaos.fleet import Auditor, Fleet, Write
from benchmarks.chaos.stack import READY_LINES, Proc, TemporalServer, product
from benchmarks.kube_stack import KubeStack
from llmisvc_devstack.controlplane import ControlPlane


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
    outage: float  # seconds kube-apiserver or etcd stays down after its SIGKILL
    forbidden: float  # seconds the worker's ClusterRole is without its HTTPRoute writes
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
    outage=10,
    forbidden=30,
)
REDUCED = Scale(
    "reduced",
    services=10,
    fault_window=30,
    kills=2,
    malformed=26,  # every kind of malformed service twice
    watch_chaos=10,
    crd_missing=10,
    timeout=60,
    recovery_timeout=30,
    outage=2,
    forbidden=10,
    fault_allowance=3.0,
)
SCALES = {s.name: s for s in (FULL, REDUCED)}
SHARED_QUEUE = f"chaos-shared-{int(time.time())}"


#: Seconds a scenario's services are waited for to be gone after it (then the run goes on regardless).
SERVICES_GONE = 60.0
#: Every scenario's processes: two of each, as a Deployment with two replicas runs them.
WORKERS = 2
WATCHERS = 2


@dataclass
class Stack:
    label: str
    temporal: TemporalServer
    kube: KubeStack
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
    """``share=True`` (the reduced suite in ``make test``): one set of workers and watchers watching every
    namespace serves all scenarios, each in its own namespace, to save the start-up of processes per
    scenario (a scenario that kills one leaves it to be restarted, as a Deployment would). ``plane``:
    run on a control plane that is already running (the test session's) instead of starting one."""

    def __init__(
        self, workdir: Path, scale: Scale, share: bool = False, plane: ControlPlane | None = None
    ) -> None:
        self.workdir, self.scale, self.share = workdir, scale, share
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._plane = plane
        self._temporal: TemporalServer | None = None
        self._kube: KubeStack | None = None
        self._shared: list[Proc] | None = None

    def temporal(self) -> TemporalServer:
        if self._temporal is None:
            self._temporal = self.new_temporal(self.workdir / "temporal-shared")
        return self._temporal

    def new_temporal(self, directory: Path) -> TemporalServer:
        directory.mkdir(parents=True, exist_ok=True)
        server = TemporalServer(directory).start()
        server.register_search_attributes(directory / "register.log")
        return server

    def kube(self) -> KubeStack:
        """The run's control plane, proxy and simulated controllers, seeded, started on first use."""
        if self._kube is None:
            kube = KubeStack.start(self.workdir / "kube", self._plane)
            try:
                Fleet.on(kube, "").seed_cluster()
            except BaseException:
                kube.stop()
                raise
            self._kube = kube
        return self._kube

    def close(self) -> None:
        for p in self._shared or []:
            p.stop()
        if self._kube is not None:
            self._kube.stop()
        if self._temporal is not None:
            self._temporal.proc.stop()

    def _processes(self, directory: Path, temporal: TemporalServer, queue: str, workers: int, watchers: int,
                   namespaces: list[str]) -> list[Proc]:  # fmt: skip
        """Start the workers and watchers and wait until each serves."""
        commands = [("worker", f"worker-{i}") for i in range(workers)]
        commands += [("watch", f"watch-{i}") for i in range(watchers)]
        kube = self.kube()
        procs = [product(c, label, directory, temporal, kube, queue, namespaces) for c, label in commands]
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

    def _shared_processes(self) -> list[Proc]:
        if self._shared is None:
            directory = self.workdir / "shared"
            directory.mkdir(parents=True, exist_ok=True)
            self._shared = self._processes(directory, self.temporal(), SHARED_QUEUE, WORKERS, WATCHERS, [])
        for p in self._shared:
            if not p.alive():  # a scenario killed it and left it down: a Deployment would restart it
                p.start().wait_for_line(READY_LINES[p.argv[-1]])
        return self._shared

    @contextlib.contextmanager
    def stack(self, label: str, own_temporal: bool = False) -> Iterator[Stack]:
        """A seeded namespace with two workers and two watchers for one scenario (shared: the shared
        ones)."""
        namespace = f"chaos-{label}".replace("_", "-")[:60]
        directory = self.workdir / label
        directory.mkdir(parents=True, exist_ok=True)
        fresh_temporal = own_temporal and not self.share
        with contextlib.ExitStack() as cleanup:  # whatever started is stopped, however far start-up got
            temporal = self.new_temporal(directory) if fresh_temporal else self.temporal()
            if fresh_temporal:
                cleanup.callback(temporal.proc.stop)
            kube = self.kube()
            fleet = Fleet.on(kube, namespace)
            cleanup.callback(fleet.control.clear_faults)
            fleet.seed()
            # After the processes: the services go, and are waited for, so the next scenario does not share
            # the shared workers with this one's services; then their namespace.
            cleanup.callback(fleet.remove, SERVICES_GONE)
            if self.share:
                procs = self._shared_processes()
            else:
                queue = f"chaos-{label}-{int(time.time())}"
                procs = self._processes(directory, temporal, queue, WORKERS, WATCHERS, [namespace])
                for p in procs:
                    cleanup.callback(p.stop)
            auditor = Auditor(fleet.control)
            auditor.start()
            cleanup.callback(auditor.stop)
            workers = [p for p in procs if p.argv[-1] == "worker"]
            watchers = [p for p in procs if p.argv[-1] == "watch"]
            yield Stack(label, temporal, kube, fleet, workers, watchers, auditor)
