"""The assembled stand-in: registry, store, fault injector and counters behind one HTTP server.

with StandinApiServer(crds="all").start() as server:
    core = kubernetes.client.CoreV1Api(server.client)
    server.faults.inject(verb="create", resource="httproutes", status=500, times=1)
    assert server.counter.writes() == 0
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Iterable
from types import TracebackType
from typing import Any, Self

from kubernetes import client as k8s

from apiserver_standin.counters import RequestCounter
from apiserver_standin.faults import FaultInjector
from apiserver_standin.http_server import StandinHTTPServer
from apiserver_standin.registry import Registry
from apiserver_standin.state import StandinState
from apiserver_standin.store import Store
from apiserver_standin.watch_stream import WatchSettings

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def make_api_client(url: str, user_agent: str | None = None, retries: Any = None) -> k8s.ApiClient:
    """A ``kubernetes.client.ApiClient`` for ``url``: plain HTTP, no auth; ``retries`` is urllib3's
    (None: its default; the router's processes pass ``activities.kube_api.CLIENT_RETRIES``)."""
    configuration = k8s.Configuration(host=url)
    configuration.verify_ssl = False
    configuration.retries = retries
    api_client = k8s.ApiClient(configuration)
    if user_agent:
        api_client.user_agent = user_agent
    return api_client


class StandinApiServer:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        crds: str | Iterable[str] = "none",
        watch_log_size: int = 10_000,
        bookmark_interval: float = 1.0,
        default_watch_timeout: float = 1800.0,
        fault_seed: int | None = None,
        namespace_cleanup_delay: float = 0.5,
        gc_delay: float = 0.1,
    ) -> None:
        registry = Registry()
        self.state = StandinState(
            registry=registry,
            store=Store(registry, watch_log_size),
            faults=FaultInjector(fault_seed),
            counter=RequestCounter(),
            watch_settings=WatchSettings(default_watch_timeout, bookmark_interval),
        )
        # How long a deleted Namespace stays Terminating with its contents before the namespace
        # controller empties it: a real one takes a moment too, which ``kubectl delete -f`` relies on.
        self.store.namespace_cleanup_delay = namespace_cleanup_delay
        # How long after an owner's deletion the garbage collector looks at its dependents: a real
        # one is asynchronous too, so tests must wait for the cascade as they would on a cluster.
        self.store.gc_delay = gc_delay
        self._thread: threading.Thread | None = None
        self._reaper: threading.Thread | None = None
        self._client: k8s.ApiClient | None = None
        self.httpd = StandinHTTPServer((host, port), self.state)  # bound now: the port is known at once
        for name in DEFAULT_NAMESPACES:
            self.store.create(self.state.info("", "namespaces"), "", {"metadata": {"name": name}})
        self.install_crds(crds)

    # The parts of the state, as the tests and the benchmarks reach them.
    @property
    def registry(self) -> Registry:
        return self.state.registry

    @property
    def store(self) -> Store:
        return self.state.store

    @property
    def faults(self) -> FaultInjector:
        """Fault rules for the requests to come."""
        return self.state.faults

    @property
    def counter(self) -> RequestCounter:
        """The requests served so far."""
        return self.state.counter

    @property
    def stopping(self) -> threading.Event:
        return self.state.stopping

    @property
    def host(self) -> str:
        return str(self.httpd.server_address[0])

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # --- lifecycle -------------------------------------------------------------------------------

    def start(self) -> Self:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, name=f"standin-{self.port}", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        if self._reaper is None:
            self._reaper = threading.Thread(
                target=self._reap_namespaces, name="namespace-controller", daemon=True
            )
            self._reaper.start()
        self.httpd.serve_forever(poll_interval=0.1)

    def _reap_namespaces(self) -> None:
        """The controllers' thread: the namespace controller and the garbage collector, each pass
        as soon as something is due (or the store signals new work)."""
        wakeup = self.store.controllers_wakeup
        while not self.stopping.is_set():
            wakeup.clear()  # before the passes: work scheduled during them wakes the next wait
            dues: list[float] = []
            for controller in (self.store.reap_namespaces, self.store.collect_garbage):
                try:
                    due = controller()
                except Exception:  # a bug here must not stop the controllers for good: report, go on
                    traceback.print_exc(file=sys.stderr)
                    due = None
                if due is not None:
                    dues.append(due)
            wakeup.wait(min([max(due, 0.005) for due in dues] + [0.25]))

    def stop(self) -> None:
        """Stop serving: hung requests are released, watch streams and keep-alive connections cut."""
        self.stopping.set()
        self.store.controllers_wakeup.set()
        self.faults.clear()
        self.store.wake_all()
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        if self._reaper is not None:
            self._reaper.join(timeout=5)
            self._reaper = None
        self.httpd.server_close()
        self.httpd.close_connections()
        if self._client is not None:
            self._client.close()  # type: ignore[no-untyped-call]
            self._client = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- clients ---------------------------------------------------------------------------------

    def api_client(self, user_agent: str | None = None, retries: Any = None) -> k8s.ApiClient:
        """A new client for this server (the caller closes it); ``retries``: see :func:`make_api_client`."""
        return make_api_client(self.url, user_agent, retries)

    @property
    def client(self) -> k8s.ApiClient:
        """A shared client, closed by :meth:`stop`."""
        if self._client is None:
            self._client = self.api_client()
        return self._client

    # --- CRDs ------------------------------------------------------------------------------------

    def install_crd(self, manifest: dict[str, Any]) -> None:
        """Create (or replace) a CustomResourceDefinition object, which installs its resources."""
        self.state.install_crd(manifest)

    def remove_crd(self, name: str) -> bool:
        """Delete a CustomResourceDefinition (and so every object of its resource); False if absent."""
        return self.state.remove_crd(name)

    def install_crds(self, selection: str | Iterable[str] = "all") -> list[str]:
        """Install some of the project's CRDs (see :mod:`apiserver_standin.crds` for the selection syntax)."""
        return self.state.install_crds(selection)

    def remove_crds(self, selection: str | Iterable[str] = "all") -> list[str]:
        return self.state.remove_crds(selection)
