"""The suite's view of one namespace of the control plane: seeding, the services, convergence, and the
audit of what the product wrote.

*Converged* is what an operator would check: the service's ``RouterReady`` is True for its current
generation (``status.observedGeneration == metadata.generation``), and it has its managed route.

The audit reads the request log of the proxy the product talks through (``/_proxy/requests?recent=N``)
in a background thread, so nothing falls off the log's end, and keeps every successful write by the
product made since the audit began (the suite and the simulated controllers talk to kube-apiserver
directly; their User-Agents are left out all the same). A write is *foreign* when its object is not
the service's own (the service itself, its status, or ``<service>-kserve-route`` / ``-inference-pool`` /
``-epp-service``) or was written while the object of that name was someone else's (the ownership
scenarios mark those windows). A ``dryRun=All`` request (the dry-run create of a service's merged spec,
KServe #5918) stores nothing and is not a write: the proxy's log marks it ``dry_run``.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from benchmarks.chaos.kube import AGENT, Kube, KubeError, Obj
from benchmarks.kube_stack import CONTROLLER_AGENT, KSERVE_NAMESPACE, KubeStack
from llmisvc_devstack.controlplane import ControlPlane
from llmisvc_devstack.proxy import ControlClient

SYSTEM = KSERVE_NAMESPACE
OWN_SUFFIXES = ("-kserve-route", "-inference-pool", "-epp-service")
NOT_PRODUCT = (AGENT, CONTROLLER_AGENT)
WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection"}
#: Objects that belong to someone else, planted in every namespace the suite uses.
SENTINELS = (("HTTPRoute", "team-route"), ("Service", "team-service"))


def service(name: str, namespace: str, model: str = "facebook/opt-125m", **spec: Any) -> Obj:
    """A service with a managed route, gateway and scheduler."""
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "model": {"uri": "hf://facebook/opt-125m", "name": model},
            "router": {"route": {}, "gateway": {}, "scheduler": {}},
            **spec,
        },
    }


def user_route(name: str, namespace: str) -> Obj:
    """An HTTPRoute a user wrote by hand: no owner, a backend of their own."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": namespace, "labels": {"team": "users"}},
        "spec": {
            "parentRefs": [{"name": "kserve-ingress-gateway", "namespace": SYSTEM}],
            "rules": [{"backendRefs": [{"name": "team-service", "port": 80}]}],
        },
    }


def conditions(svc: Obj) -> dict[str, Obj]:
    return {
        str(c.get("type")): c
        for c in (svc.get("status") or {}).get("conditions") or []
        if isinstance(c, dict)
    }


def is_converged(svc: Obj) -> bool:
    meta, status = svc["metadata"], svc.get("status") or {}
    ready = conditions(svc).get("RouterReady", {}).get("status") == "True"
    return ready and status.get("observedGeneration") == meta.get("generation")


@dataclass
class Write:
    verb: str
    resource: str
    namespace: str
    name: str
    code: int
    time: float

    def __str__(self) -> str:
        return f"{self.verb} {self.resource} {self.namespace}/{self.name} -> {self.code}"


class Auditor(threading.Thread):
    """Collects the product's successful writes from the proxy's request log, from now on."""

    def __init__(self, control: ControlClient, period: float = 1.0) -> None:
        super().__init__(daemon=True, name="chaos-auditor")
        self.control, self.period = control, period
        self.since = time.time()  # the proxy runs on this machine: its clock is ours
        self.writes: list[Write] = []
        self._seen: set[tuple[Any, ...]] = set()
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(self.period):
            self.poll()

    def poll(self) -> None:
        try:
            recent = self.control.requests(recent=20_000).get("recent", [])
        except OSError:
            return  # the proxy is busy: the next poll catches up
        for r in recent:
            key = (r["time"], r["method"], r["path"], r["user_agent"], r["code"])
            if (
                key in self._seen
                or r["verb"] not in WRITE_VERBS
                or r["dry_run"]
                or r["code"] >= 400
                or r["time"] < self.since
            ):
                continue
            self._seen.add(key)
            if not str(r["user_agent"]).startswith(NOT_PRODUCT):
                self.writes.append(
                    Write(r["verb"], r["resource"], r["namespace"], r["name"], r["code"], r["time"])
                )

    def stop(self) -> list[Write]:
        self._halt.set()
        self.join(5)
        self.poll()
        return self.writes


@dataclass
class Fleet:
    kube: Kube
    control: ControlClient  # the proxy's: faults, counters, watch cuts
    plane: ControlPlane  # the real parts: CRDs, compaction, SIGKILL and restart
    namespace: str
    names: list[str] = field(default_factory=list)
    #: (resource, namespace, name, from, to): windows in which that name was someone else's object.
    foreign_windows: list[tuple[str, str, str, float, float]] = field(default_factory=list)

    @classmethod
    def on(cls, stack: KubeStack, namespace: str) -> Fleet:
        kube = Kube(stack.api_url, str(stack.ca_file), stack.admin_token)
        return cls(kube, stack.control, stack.plane, namespace)

    def seed_cluster(self) -> None:
        """What every namespace shares: the GatewayClass and the ingress Gateway in KServe's namespace
        (which the Kubernetes stack made, with the router's Role to read KServe's configuration)."""
        self._create(
            "GatewayClass",
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "GatewayClass",
                "metadata": {"name": "simulated"},
                "spec": {"controllerName": "gateway.standin.local/controller"},
            },
        )
        self._create(
            "Gateway",
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "Gateway",
                "metadata": {"name": "kserve-ingress-gateway", "namespace": SYSTEM},
                "spec": {
                    "gatewayClassName": "simulated",
                    "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
                },
            },
        )
        self._sentinels("kube-system")

    def seed(self) -> None:
        """This fleet's namespace, with a team's own route and Service in it."""
        self.kube.create("Namespace", {"metadata": {"name": self.namespace}})
        self._sentinels(self.namespace)

    def remove(self, timeout: float) -> bool:
        """Delete the scenario's services (at once, one request) and wait until they are gone, so their
        workflows have ended before the next scenario; then delete the namespace, which the namespace
        controller and the garbage collector empty in the background (waiting for that too cost 5-15 s
        a scenario). Whether the services were gone within ``timeout`` seconds."""
        try:
            self.kube.call("DELETE", self.kube.path("LLMInferenceService", self.namespace))
            deadline = time.monotonic() + timeout
            while self.kube.list("LLMInferenceService", self.namespace):
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.5)
            self.kube.delete("Namespace", "", self.namespace)
        except (KubeError, OSError):
            return False  # the control plane is in trouble: the scenario said so already
        return True

    def _create(self, kind: str, body: Obj) -> None:
        try:
            self.kube.create(kind, body)
        except KubeError as exc:
            if exc.code != 409:  # there already: a control plane another run seeded (the test session's)
                raise

    def _sentinels(self, namespace: str) -> None:
        self._create("HTTPRoute", user_route("team-route", namespace))
        self._create(
            "Service",
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "team-service", "namespace": namespace},
                "spec": {"ports": [{"port": 80}]},
            },
        )

    def create(self, names: list[str], **spec: Any) -> None:
        self.names += [n for n in names if n not in self.names]
        with ThreadPoolExecutor(8) as pool:
            list(
                pool.map(
                    lambda n: self.kube.create("LLMInferenceService", service(n, self.namespace, **spec)),
                    names,
                )
            )

    def services(self) -> dict[str, Obj]:
        return {s["metadata"]["name"]: s for s in self.kube.list("LLMInferenceService", self.namespace)}

    def converged(self, names: list[str] | None = None) -> set[str]:
        wanted = set(self.names if names is None else names)
        return {n for n, s in self.services().items() if n in wanted and is_converged(s)}

    def wait_converged(
        self, names: list[str] | None = None, timeout: float = 120.0, since: float | None = None
    ) -> float | None:
        """Seconds from ``since`` (default now) until every service is converged, polled every 0.2 s;
        None if they were not within ``timeout`` seconds of the call."""
        wanted = set(self.names if names is None else names)
        start = time.monotonic() if since is None else since
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.converged(list(wanted)) == wanted:
                return time.monotonic() - start
            time.sleep(0.2)
        return None

    def bump(self, names: list[str] | None = None, tag: str = "") -> None:
        """A new model name on each service: a new generation, a new pass, a changed route."""
        targets = self.names if names is None else names
        stamp = tag or f"{time.time():.3f}"
        with ThreadPoolExecutor(8) as pool:
            list(
                pool.map(
                    lambda n: self.kube.patch(
                        "LLMInferenceService",
                        self.namespace,
                        n,
                        {"spec": {"model": {"name": f"chaos/{n}-{stamp}"}}},
                    ),
                    targets,
                )
            )

    def foreign(self, writes: list[Write]) -> list[Write]:
        """The writes to objects the product does not own (see the module docstring)."""
        found = []
        for w in writes:
            if w.resource == "events":
                continue  # Events about its own services (the object they regard is not in the path)
            if w.namespace != self.namespace and w.namespace.startswith("chaos-"):
                continue  # another scenario's namespace (the reduced suite shares one stand-in)
            owner = next(
                (n for n in self.names if w.name == n or w.name in (n + s for s in OWN_SUFFIXES)), None
            )
            in_window = any(
                r == w.resource and ns == w.namespace and n == w.name and start <= w.time <= end
                for r, ns, n, start, end in self.foreign_windows
            )
            if owner is None or in_window:
                found.append(w)
        return found
