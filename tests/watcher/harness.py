"""The watcher on the real control plane, as its own ServiceAccount through the test's proxy, with a
signaller that only records.

The test's own writes go straight to kube-apiserver as the admin (neither counted nor faulted by the
proxy); the watcher's requests go through the proxy, where the test's fault rules meet them. The plane is
shared with other tests, whose namespaces may still be emptying while this one runs, so the signals a
test reads are those of its own namespaces.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client as k8s

from llmisvc_cache.cache import ClusterCache
from llmisvc_watcher.model import ServiceSignal, Tuning
from llmisvc_watcher.runner import stop_cache, watch_and_signal
from tests import builders as b
from tests.cluster import Cluster
from tests.private_plane import private_cluster

FAST = Tuning(
    watch_timeout_seconds=5,
    backoff_first=0.05,
    backoff_cap=0.5,
    debounce_seconds=0.05,
    sync_timeout=5.0,
)
SERVING = ("serving.kserve.io", "v1alpha2", "llminferenceservices")
GATEWAYS = ("gateway.networking.k8s.io", "v1", "gateways")
ROUTES = ("gateway.networking.k8s.io", "v1", "httproutes")
POOLS_V1 = ("inference.networking.k8s.io", "v1", "inferencepools")
#: A custom object sent to kube-apiserver names its apiVersion and kind (the typed client does not add them).
KINDS = {
    "llminferenceservices": "LLMInferenceService",
    "gateways": "Gateway",
    "httproutes": "HTTPRoute",
    "inferencepools": "InferencePool",
}
CANARY = "watcher-ready-canary"
WATCHER_AGENT = "llmisvc-router-watcher/test"
SETUP_AGENT = "watcher-test"


@dataclass
class RecordingSignaller:
    signals: list[ServiceSignal] = field(default_factory=list)

    async def send(self, signal: ServiceSignal) -> None:
        self.signals.append(signal)


class World:
    """The test's side of the cluster: its namespaces, and writes as the admin straight to kube-apiserver."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.ns = cluster.namespace
        self.kserve = cluster.kserve_namespace
        self.owned = {cluster.namespace, cluster.kserve_namespace}
        self.client = cluster.api_client(SETUP_AGENT, direct=True)

    def namespace(self, word: str) -> str:
        """Another namespace of the test's own, ``<namespace>-<word>``."""
        name = f"{self.ns}-{word}"
        if name not in self.owned:
            self.cluster.manage(name)
            self.owned.add(name)
        return name

    @property
    def custom(self) -> k8s.CustomObjectsApi:
        return k8s.CustomObjectsApi(self.client)

    @property
    def core(self) -> k8s.CoreV1Api:
        return k8s.CoreV1Api(self.client)

    @property
    def apps(self) -> k8s.AppsV1Api:
        return k8s.AppsV1Api(self.client)

    def create(
        self, resource: tuple[str, str, str], body: dict[str, Any], namespace: str | None = None
    ) -> Any:
        group, version, plural = resource
        body = {"apiVersion": f"{group}/{version}", "kind": KINDS[plural], **body}
        return self.custom.create_namespaced_custom_object(group, version, namespace or self.ns, plural, body)

    def patch(
        self, resource: tuple[str, str, str], name: str, patch: dict[str, Any], namespace: str | None = None
    ) -> None:
        group, version, plural = resource
        self.custom.patch_namespaced_custom_object(group, version, namespace or self.ns, plural, name, patch)

    def delete(self, resource: tuple[str, str, str], name: str, namespace: str | None = None) -> None:
        group, version, plural = resource
        self.custom.delete_namespaced_custom_object(group, version, namespace or self.ns, plural, name)

    def close(self) -> None:
        self.client.close()  # type: ignore[no-untyped-call]


@contextmanager
def private_world(selection: str) -> Iterator[World]:
    """A world on the private plane (``tests.private_plane``) with exactly the CRDs ``selection`` names."""
    with private_cluster(selection) as cluster:
        world = World(cluster)
        try:
            yield world
        finally:
            world.close()


@dataclass
class Harness:
    world: World
    signaller: RecordingSignaller
    stop: asyncio.Event
    task: asyncio.Task[None]

    def signals(self, name: str | None = None, namespace: str | None = None) -> list[ServiceSignal]:
        """Every signal so far of the test's namespaces (the readiness canary left out), or those of one
        service (in the test's namespace unless told)."""
        wanted = (namespace or self.world.ns, name)
        return [
            s
            for s in self.signaller.signals
            if s.namespace in self.world.owned
            and s.name != CANARY
            and (name is None or (s.namespace, s.name) == wanted)
        ]

    async def wait_for(self, check: Callable[[], object], timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if self.task.done():
                self.task.result()  # the watcher died: show why
            if time.monotonic() > deadline:
                raise AssertionError(f"not seen within {timeout}s; signals: {self.signals()}")
            await asyncio.sleep(0.02)

    async def wait_for_signal(
        self, name: str, namespace: str | None = None, *, count: int = 1, timeout: float = 5.0
    ) -> ServiceSignal:
        await self.wait_for(lambda: len(self.signals(name, namespace)) >= count, timeout)
        return self.signals(name, namespace)[count - 1]


@asynccontextmanager
async def watching(
    world: World,
    *,
    namespaces: Sequence[str] = (),
    tuning: Tuning = FAST,
    wait_ready: bool = True,
) -> AsyncIterator[Harness]:
    """Run the watcher (as the watcher ServiceAccount, through the proxy) until the block ends. With
    ``wait_ready`` the block starts once the start-up lists are done: a canary service is created first
    and its signal awaited, and the watcher only lists services after every other kind was listed."""
    signaller = RecordingSignaller()
    stop = asyncio.Event()
    ready_ns = (list(namespaces) or [world.ns])[0]
    if wait_ready:
        world.create(SERVING, service(CANARY), namespace=ready_ns)
    api_client = world.cluster.api_client(WATCHER_AGENT, role="watcher")
    cache = ClusterCache(api_client, tuning)
    task = asyncio.create_task(
        watch_and_signal(cache, signaller, namespaces, world.cluster.env, stop, tuning)
    )
    harness = Harness(world, signaller, stop, task)
    try:
        if wait_ready:
            await harness.wait_for(
                lambda: any((s.namespace, s.name) == (ready_ns, CANARY) for s in signaller.signals),
                timeout=10,
            )
            await asyncio.sleep(0.2)  # let start-up signals settle
        yield harness
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
        await stop_cache(cache)
        api_client.close()  # type: ignore[no-untyped-call]


def service(name: str, router: dict[str, Any] | None = None) -> dict[str, Any]:
    """A service body to create in any namespace (the API server sets uid and generation)."""
    return b.service(name, None, uid=None, generation=None, model=b.model(b.ORG_MODEL, None), router=router)


def gateway(name: str) -> dict[str, Any]:
    return b.gateway(name, None, status=False)


def wire(**fields: Any) -> Any:
    """A request body for the typed kubernetes APIs, which accept plain dicts too."""
    return dict(fields)


def managed_labels(owner: str) -> dict[str, str]:
    return {"app.kubernetes.io/part-of": "llminferenceservice", "app.kubernetes.io/name": owner}


def owner_reference(owner: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "name": owner,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
