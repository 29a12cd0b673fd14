"""The proxy's side towards kube-apiserver: one persistent TLS connection per client connection.

Pairing one upstream connection with each downstream one keeps the model simple (a request and its
response, watches included, never share a connection with another client's) and gives keep-alive
reuse for free. Requests are written as one buffer; responses are read with ``http.client``'s parser,
which knows chunked and length-delimited bodies.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Iterable
from http.client import HTTPResponse
from urllib.parse import urlsplit

CONNECT_TIMEOUT = 10.0


class Upstream:
    """Where requests go: the upstream's address and the TLS context that verifies it with ``ca_file``."""

    def __init__(
        self, url: str, ca_file: str | None = None, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError(f"the upstream must be an https:// URL with a host, not {url!r}")
        self.url = url.rstrip("/")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.authority = parts.netloc.encode("latin-1")
        self.connect_timeout = connect_timeout
        self.context: ssl.SSLContext | None = None
        if parts.scheme == "https":
            self.context = ssl.create_default_context(cafile=ca_file)
            # The proxy speaks HTTP/1.1 only; offering nothing else keeps a Go server off HTTP/2.
            self.context.set_alpn_protocols(["http/1.1"])

    def connect(self) -> socket.socket:
        sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.context is not None:
                sock = self.context.wrap_socket(sock, server_hostname=self.host)
            # No read timeout: a quiet watch may send nothing for its whole (up to an hour) life; the
            # client's own timeout and stop() bound every wait instead.
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        return sock


class UpstreamLink:
    """The upstream connection of one downstream connection, opened on first use and reused.

    :meth:`abort` may be called from another thread (a watch cut, the proxy stopping): it shuts the
    socket down, which wakes a read blocked on it.
    """

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()

    def send(self, head: bytes, headers: Iterable[tuple[str, str]], body: bytes, method: str) -> HTTPResponse:
        """Send one request (``head`` is its request line) and read the response's status and headers."""
        lines = [head]
        lines.extend(f"{name}: {value}\r\n".encode("latin-1") for name, value in headers)
        lines.append(b"Host: " + self.upstream.authority + b"\r\n")
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append(b"Content-Length: %d\r\n" % len(body))
        lines.append(b"\r\n")
        lines.append(body)
        data = b"".join(lines)
        reused = self._sock is not None
        try:
            return self._exchange(data, method)
        except (ConnectionError, ssl.SSLEOFError):
            self.close()
            if not reused:
                raise
        # The server closed the idle connection as the request went out (kube-apiserver drops idle
        # keep-alive connections): it answered nothing, so sending again on a new connection is safe.
        return self._exchange(data, method)

    def _exchange(self, data: bytes, method: str) -> HTTPResponse:
        sock = self._sock
        if sock is None:
            sock = self.upstream.connect()
            with self._lock:
                self._sock = sock
        sock.sendall(data)
        response = HTTPResponse(sock, method=method)
        response.begin()
        return response

    def finished(self, response: HTTPResponse) -> None:
        """The response was read to its end: keep the connection unless the server will close it."""
        if response.will_close:
            self.close()

    def abort(self) -> None:
        with self._lock:
            sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()
