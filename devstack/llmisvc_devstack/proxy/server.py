"""The assembled proxy: a TLS listener in front of kube-apiserver with fault rules and counters.

with ApiProxy(apiserver_url, ca_file=ca, certfile=cert, keyfile=key).start() as proxy:
    proxy.faults.inject(verb="create", resource="httproutes", status=500, times=1)
    ...  # point the product at proxy.url
    assert proxy.counter.writes(user_agent="llmisvc-router/") == 1
"""

from __future__ import annotations

import ssl
import threading
from types import TracebackType
from typing import Self

from llmisvc_devstack.proxy.counters import RequestCounter
from llmisvc_devstack.proxy.faults import FaultInjector
from llmisvc_devstack.proxy.handler import ProxyHandler
from llmisvc_devstack.proxy.listener import ProxyServer
from llmisvc_devstack.proxy.upstream import Upstream

IDLE_TIMEOUT = 90.0  # kube-apiserver's own idle keep-alive timeout


def server_context(certfile: str, keyfile: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certfile, keyfile)
    # HTTP/1.1 only: a Go client offered h2 by ALPN would speak a protocol the proxy does not.
    context.set_alpn_protocols(["http/1.1"])
    return context


class ApiProxy:
    """Forwards every request to ``upstream`` (verified with ``ca_file``), faulting and counting them.

    It listens on ``host``:``port`` (0: an ephemeral port) with TLS when ``certfile`` and ``keyfile``
    are given, else plain HTTP. Clients authenticate to the upstream themselves: their headers
    (``Authorization`` included) pass through unchanged.
    """

    def __init__(
        self,
        upstream: str,
        *,
        ca_file: str | None = None,
        certfile: str | None = None,
        keyfile: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        fault_seed: int | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
        keep_requests: int = 20_000,
    ) -> None:
        if (certfile is None) != (keyfile is None):
            raise ValueError("give both certfile and keyfile (TLS), or neither (plain HTTP)")
        context = server_context(certfile, keyfile) if certfile and keyfile else None
        self.httpd = ProxyServer(
            (host, port),
            ProxyHandler,
            context,
            Upstream(upstream, ca_file),
            FaultInjector(fault_seed),
            RequestCounter(keep_requests),
            idle_timeout,
        )
        self._thread: threading.Thread | None = None

    @property
    def faults(self) -> FaultInjector:
        """Fault rules for the requests to come."""
        return self.httpd.faults

    @property
    def counter(self) -> RequestCounter:
        """The requests proxied so far."""
        return self.httpd.counter

    @property
    def upstream(self) -> str:
        return self.httpd.upstream.url

    @property
    def host(self) -> str:
        return str(self.httpd.server_address[0])

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        scheme = "https" if self.httpd.context is not None else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def cut_watches(self, abruptly: bool = False) -> int:
        """End every watch stream open now, as a server ending them would (``abruptly``: by cutting
        the connection, no final chunk); how many there were. Clients resume from their last event."""
        return self.httpd.cut_watches(abruptly)

    def open_watches(self) -> int:
        """How many watch streams are open now."""
        return sum(session.watching for session in self.httpd.sessions())

    # --- lifecycle -------------------------------------------------------------------------------

    def start(self) -> Self:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, name=f"proxy-{self.port}", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        reaper = threading.Thread(target=self.httpd.end_abandoned_watches, name="proxy-hangups", daemon=True)
        reaper.start()
        self.httpd.serve_forever(poll_interval=0.1)

    def stop(self) -> None:
        """Stop serving: hung requests are released, watch streams and keep-alive connections cut."""
        self.httpd.stopping.set()
        self.faults.clear()
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self.httpd.server_close()
        self.httpd.abort_sessions()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
