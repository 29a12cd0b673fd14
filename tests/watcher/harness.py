"""The watcher running against the API server stand-in, with a signaller that only records."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client as k8s

from apiserver_standin.server import StandinApiServer
from cluster_cache.cache import ClusterCache
from router_core.world.config import Environment
from watcher.model import ServiceSignal, Tuning
from watcher.runner import stop_cache, watch_and_signal

ENV = Environment(kserve_namespace="kserve")
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
CANARY = ("watcher-ready", "canary")


@dataclass
class RecordingSignaller:
    signals: list[ServiceSignal] = field(default_factory=list)

    async def send(self, signal: ServiceSignal) -> None:
        self.signals.append(signal)


@dataclass
class Harness:
    server: StandinApiServer
    signaller: RecordingSignaller
    stop: asyncio.Event
    task: asyncio.Task[None]

    @property
    def custom(self) -> k8s.CustomObjectsApi:
        return k8s.CustomObjectsApi(self.server.client)

    @property
    def core(self) -> k8s.CoreV1Api:
        return k8s.CoreV1Api(self.server.client)

    @property
    def apps(self) -> k8s.AppsV1Api:
        return k8s.AppsV1Api(self.server.client)

    def signals(self, name: str | None = None, namespace: str = "ns") -> list[ServiceSignal]:
        """Every signal so far (the readiness canary left out), or those of one service."""
        return [
            s
            for s in self.signaller.signals
            if (s.namespace, s.name) != CANARY
            and (name is None or (s.namespace, s.name) == (namespace, name))
        ]

    async def wait_for(self, check: Callable[[], object], timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if self.task.done():
                self.task.result()  # the watcher died: show why
            if time.monotonic() > deadline:
                raise AssertionError(f"not seen within {timeout}s; signals: {self.signaller.signals}")
            await asyncio.sleep(0.02)

    async def wait_for_signal(self, name: str, namespace: str = "ns", *, count: int = 1) -> ServiceSignal:
        await self.wait_for(lambda: len(self.signals(name, namespace)) >= count)
        return self.signals(name, namespace)[count - 1]

    def create(self, resource: tuple[str, str, str], body: dict[str, Any], namespace: str = "ns") -> None:
        group, version, plural = resource
        self.custom.create_namespaced_custom_object(group, version, namespace, plural, body)

    def patch(
        self, resource: tuple[str, str, str], name: str, patch: dict[str, Any], namespace: str = "ns"
    ) -> None:
        group, version, plural = resource
        self.custom.patch_namespaced_custom_object(group, version, namespace, plural, name, patch)

    def delete(self, resource: tuple[str, str, str], name: str, namespace: str = "ns") -> None:
        group, version, plural = resource
        self.custom.delete_namespaced_custom_object(group, version, namespace, plural, name)


@asynccontextmanager
async def watching(
    server: StandinApiServer,
    *,
    namespaces: Sequence[str] = (),
    tuning: Tuning = FAST,
    wait_ready: bool = True,
) -> AsyncIterator[Harness]:
    """Run the watcher until the block ends. With ``wait_ready`` the block starts once the start-up
    lists are done: a canary service is created first and its signal awaited, and the watcher only
    lists services after every other kind was listed."""
    signaller = RecordingSignaller()
    stop = asyncio.Event()
    if wait_ready:
        spaces = list(namespaces) or [CANARY[0]]
        canary = service(CANARY[1])
        k8s.CustomObjectsApi(server.client).create_namespaced_custom_object(
            *SERVING[:2], spaces[0], SERVING[2], canary
        )
    cache = ClusterCache(server.client, tuning)
    task = asyncio.create_task(watch_and_signal(cache, signaller, namespaces, ENV, stop, tuning))
    harness = Harness(server, signaller, stop, task)
    try:
        if wait_ready:
            ready_ns = (list(namespaces) or [CANARY[0]])[0]
            await harness.wait_for(
                lambda: any((s.namespace, s.name) == (ready_ns, CANARY[1]) for s in signaller.signals)
            )
            await asyncio.sleep(0.2)  # let start-up signals settle
        yield harness
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
        await stop_cache(cache)


def service(name: str, router: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": name},
        "spec": {"model": {"uri": "hf://org/model"}},
    }
    if router is not None:
        body["spec"]["router"] = router
    return body


def gateway(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": name},
        "spec": {
            "gatewayClassName": "istio",
            "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}],
        },
    }


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
