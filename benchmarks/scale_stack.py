"""The processes and the cluster view of ``bench_scale.py``: the real control plane, the counting proxy
and the simulated gateway and workload controllers (:mod:`benchmarks.kube_stack`, each its own process),
``llmisvc-router worker`` / ``watch`` as child processes authenticated as their ServiceAccounts, everything
on 127.0.0.1, and a :class:`Fleet` that seeds the cluster, creates the services and watches them become
Ready. The product's API requests are counted by the proxy it talks through.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.kube_stack import CONTROLLER_AGENT, KubeStack
from benchmarks.procs import START_TIMEOUT, free_port
from llmisvc_core import naming
from llmisvc_core.models.kube import GATEWAY, GATEWAYCLASS, HTTPROUTE, LLMISVC, ResourceType
from llmisvc_kube.api import ApiError
from llmisvc_kube.client import KubeClusterApi
from llmisvc_kube.stream import Collection, get_collection
from tests import builders as b

Wire = dict[str, Any]
NS = "bench"
BENCH_AGENT = "bench"  # the benchmark's own requests, left out of the product's counts
NAMESPACE_TYPE = ResourceType("", "v1", "Namespace", "namespaces", namespaced=False)
ROUTER = Path(sys.executable).parent / "llmisvc-router"
READ_VERBS = ("get", "list", "watch")


__all__ = [
    "NS",
    "Fleet",
    "cpu_seconds",
    "free_port",
    "kube_stack",
    "peak_rss_mib",
    "pid_of",
    "product",
    "service",
]


@contextlib.contextmanager
def kube_stack(workdir: Path, controller_args: list[str] | None = None) -> Iterator[KubeStack]:
    """A new control plane with the proxy and the simulated controllers, stopped at the end."""
    print("starting the control plane (etcd, kube-apiserver, kube-controller-manager) ...", flush=True)
    stack = KubeStack.start(workdir / "kube", controller_args=controller_args)
    try:
        yield stack
    finally:
        stack.stop()


#: What each command logs once it is serving.
READY_LINES = {"worker": "worker polling task queue", "watch": "watching LLMInferenceServices"}


@contextlib.contextmanager
def product(command: str, kubeconfig: Path, temporal: str, task_queue: str, log: Path) -> Iterator[int]:
    """``llmisvc-router <command>`` with ``kubeconfig`` (its ServiceAccount's, through the proxy) and
    Temporal, once it logged that it is serving; yields its pid; SIGTERM at the end."""
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": temporal,
        "TEMPORAL_NAMESPACE": "default",
        "LLMISVC_ROUTER_TASK_QUEUE": task_queue,
        "KUBECONFIG": str(kubeconfig),
        "OTEL_SDK_DISABLED": "true",
        "LLMISVC_ROUTER_PROBE_PORT": "0",  # several processes on one machine: 8081 is one's alone
    }
    env.pop("LLMISVC_ROUTER_METRICS_PORT", None)
    with log.open("w") as out:
        process = subprocess.Popen([str(ROUTER), command], stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            _wait_for_line(process, log, READY_LINES[command])
            yield process.pid
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_line(
    process: subprocess.Popen[bytes], log: Path, line: str, timeout: float = START_TIMEOUT
) -> None:
    name = log.stem
    deadline = time.monotonic() + timeout
    while line not in log.read_text():
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}; see {log}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name} did not log {line!r} within {timeout:.0f}s")
        time.sleep(0.1)


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident set (``VmHWM``), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of the process so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pid_of(*words: str) -> int | None:
    """The process whose command line holds all of ``words`` (the dev server the SDK started), if any."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        line = " ".join(a.decode(errors="replace") for a in args)
        if all(word in line for word in words):
            return int(entry.name)
    return None


def service(name: str, namespace: str = NS) -> Wire:
    """A service with a managed route, gateway and scheduler, and model-based routing (so a new model name
    changes its HTTPRoute: the latency probe). Each serves a model of its own name: N services claiming one
    model name on one Gateway would be N-way ``ModelNameCollision``s (KServe #5800), each change of one
    signalling all the others."""
    model = b.model(name=f"bench/{name}")
    body = b.service(name, namespace, uid=None, generation=None, model=model, router=b.presets())
    body["spec"]["annotations"] = {"serving.kserve.io/model-based-routing-enabled": "true"}
    return body


class Fleet:
    """The benchmark's view of one namespace: its own client (``bench`` User-Agent, the admin, straight
    to kube-apiserver) and the proxy's counters of the product's requests."""

    def __init__(self, stack: KubeStack, namespace: str = NS) -> None:
        self.stack, self.namespace = stack, namespace
        self.client = stack.client(BENCH_AGENT, connections=32)
        self.kube = KubeClusterApi(self.client)
        self.control = stack.control
        self._closing = threading.Event()
        self._stream: Collection | None = None

    def close(self) -> None:
        """Also ends a :meth:`watch_ready` waiting in another thread (a SIGTERM unwinds the run at once
        instead of waiting out the watch)."""
        self._closing.set()
        if (stream := self._stream) is not None:
            stream.cut()
        self.client.close()  # type: ignore[no-untyped-call]

    def seed(self) -> None:
        """The namespace, and what every namespace shares: the ingress Gateway and its class."""
        self._create(NAMESPACE_TYPE, {"metadata": {"name": self.namespace}})
        self._create(
            GATEWAYCLASS,
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "GatewayClass",
                "metadata": {"name": "simulated"},
                "spec": {"controllerName": "gateway.standin.local/controller"},
            },
        )
        self._create(
            GATEWAY,
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "Gateway",
                "metadata": {"name": "kserve-ingress-gateway", "namespace": "kserve"},
                "spec": {
                    "gatewayClassName": "simulated",
                    "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
                },
            },
        )

    def _create(self, type_: ResourceType, body: Wire) -> None:
        try:
            self.kube.create(type_, body)
        except ApiError as err:
            if err.status != 409:  # seeded by an earlier fleet on the same cluster
                raise

    def create_all(self, names: list[str], bodies: list[Wire] | None = None) -> None:
        """Every service at once (16 requests in flight), as a ``kubectl apply`` of a big file would:
        ``bodies``, or :func:`service` for each of ``names``."""
        todo = bodies if bodies is not None else [service(n, self.namespace) for n in names]
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda body: self.kube.create(LLMISVC, body), todo))

    def ready(self) -> set[str]:
        """The services whose ``RouterReady`` is True now (one list request)."""
        found = set()
        for svc in self.kube.list_objects(LLMISVC, self.namespace, {}):
            for cond in (svc.get("status") or {}).get("conditions") or []:
                if cond.get("type") == "RouterReady" and cond.get("status") == "True":
                    found.add(svc["metadata"]["name"])
        return found

    def watch_ready(self, names: list[str], started: float, timeout: float) -> dict[str, float]:
        """Seconds after ``started`` at which each service was first seen Ready, until all are or
        ``timeout`` seconds have passed: one list, then a watch from its resourceVersion (a list of
        thousands of services every fraction of a second would load the API server under test)."""
        wanted, seen = set(names), dict[str, float]()
        version = ""
        while (
            not wanted <= seen.keys() and time.monotonic() - started < timeout and not self._closing.is_set()
        ):
            try:
                if not version:
                    listed = get_collection(self.client, LLMISVC, self.namespace, []).body()
                    version = listed["metadata"]["resourceVersion"]
                    for item in listed.get("items") or []:
                        self._note_ready(item, wanted, seen, started)
                    continue
                left = max(1, int(timeout - (time.monotonic() - started)))
                query = [
                    ("watch", "true"),
                    ("resourceVersion", version),
                    ("timeoutSeconds", str(min(left, 60))),
                ]
                stream = self._stream = get_collection(
                    self.client, LLMISVC, self.namespace, query, read_timeout=70
                )
                try:
                    for event in stream.events():
                        obj = event.get("object") or {}
                        version = (obj.get("metadata") or {}).get("resourceVersion") or version
                        if event.get("type") in ("ADDED", "MODIFIED"):
                            self._note_ready(obj, wanted, seen, started)
                        if wanted <= seen.keys():
                            break
                finally:
                    self._stream = None
                    stream.close()
            except ApiError:  # an expired resourceVersion (410), a cut stream: list again
                version = ""
                time.sleep(0.2)
        return seen

    @staticmethod
    def _note_ready(obj: Wire, wanted: set[str], seen: dict[str, float], started: float) -> None:
        name = (obj.get("metadata") or {}).get("name")
        if name not in wanted or name in seen:
            return
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "RouterReady" and cond.get("status") == "True":
                seen[name] = time.monotonic() - started

    def product_requests(self) -> tuple[int, int]:
        """(reads, writes) by the product (neither the benchmark nor a simulated controller)."""
        rows = [
            r
            for r in self.control.requests()["counts"]
            if not str(r["user_agent"]).startswith((BENCH_AGENT, CONTROLLER_AGENT))
        ]
        reads = sum(r["count"] for r in rows if r["verb"] in READ_VERBS)
        return reads, sum(r["count"] for r in rows) - reads

    def wait_quiet(self, quiet: float = 3.0, timeout: float = 60.0) -> None:
        """Until the product made no request for ``quiet`` seconds (or ``timeout``)."""
        deadline = time.monotonic() + timeout
        last, since = self.product_requests(), time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - since < quiet:
            time.sleep(0.5)
            now = self.product_requests()
            if now != last:
                last, since = now, time.monotonic()

    def wait_settled(self, names: list[str], started: float, timeout: float) -> float:
        """Seconds after ``started`` until the product is quiet with every service RouterReady at once
        (a service seen Ready once may be rewritten after: what is compared must be the end state), or
        NaN after ``timeout``."""
        while time.monotonic() - started < timeout:
            self.wait_quiet()
            if self.ready() >= set(names):
                return time.monotonic() - started
        return float("nan")

    def route_has(self, name: str, text: str) -> bool:
        route = self.kube.get(HTTPROUTE, self.namespace, naming.route_name(name)) or {}
        return text in str(route.get("spec"))
