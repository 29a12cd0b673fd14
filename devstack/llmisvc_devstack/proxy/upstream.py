"""The proxy's side towards kube-apiserver: one persistent TLS connection per client connection.

Pairing one upstream connection with each downstream one keeps the model simple (a request and its
response, watches included, never share a connection with another client's) and gives keep-alive
reuse for free. Requests are written as one buffer; answers are read with :mod:`wire`, the body
left for the caller to relay as it arrives.
"""

from __future__ import annotations

import contextlib
import io
import socket
import ssl
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

from llmisvc_devstack.proxy.wire import (
    PIECE,
    Body,
    Head,
    ProtocolError,
    content_length,
    is_chunked,
    read_head,
)

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


@dataclass(slots=True)
class Response:
    """An upstream answer whose head has been read; its body is read as it is relayed."""

    code: int
    reason: str
    head: Head
    body: Body
    length: int | None  # the Content-Length of a length-delimited body, 0 when there is no body
    chunked: bool
    will_close: bool  # the server ends the connection after this answer


def read_response(rfile: io.BufferedReader, method: str) -> Response:
    while True:
        head = read_head(rfile)
        if head is None:
            raise UpstreamClosedError("the upstream closed the connection before answering")
        version, _, rest = head.start.partition(" ")
        code_text, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or len(code_text) != 3 or not code_text.isdigit():
            raise ProtocolError(f"not an HTTP/1.x status line: {head.start[:80]!r}")
        code = int(code_text)
        if not 100 <= code < 200 or code == 101:
            break  # 1xx answers are interim (100 Continue): the real one follows
    connection = head.tokens("connection")
    keep = "close" not in connection and (version == "HTTP/1.1" or "keep-alive" in connection)
    if method == "HEAD" or code in (204, 304):
        return Response(code, reason, head, Body(rfile, 0, False), 0, False, not keep)
    if is_chunked(head):
        return Response(code, reason, head, Body(rfile, None, True), None, True, not keep)
    length = content_length(head)
    body = Body(rfile, length, False)
    return Response(code, reason, head, body, length, False, not keep or length is None)


class UpstreamClosedError(ConnectionError):
    """The upstream ended the connection where an answer should have begun."""


class UpstreamLink:
    """The upstream connection of one downstream connection, opened on first use and reused.

    :meth:`abort` may be called from another thread (a watch cut, the proxy stopping): it shuts the
    socket down, which wakes a read blocked on it.
    """

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self._sock: socket.socket | None = None
        self._rfile: io.BufferedReader | None = None
        self._lock = threading.Lock()

    def send(self, method: str, target: str, fields: Iterable[tuple[str, str]], body: bytes) -> Response:
        """Send one request and read the head of its answer."""
        lines = [f"{method} {target} HTTP/1.1\r\n".encode("latin-1")]
        lines.extend(f"{name}: {value}\r\n".encode("latin-1") for name, value in fields)
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

    def _exchange(self, data: bytes, method: str) -> Response:
        sock, rfile = self._sock, self._rfile
        if sock is None or rfile is None:
            sock = self.upstream.connect()
            rfile = cast(io.BufferedReader, sock.makefile("rb", PIECE))
            with self._lock:
                self._sock, self._rfile = sock, rfile
        sock.sendall(data)
        return read_response(rfile, method)

    def finished(self, response: Response) -> None:
        """The answer was read to its end: keep the connection unless the server will close it."""
        if response.will_close or not response.body.done:
            self.close()

    def abort(self) -> None:
        with self._lock:
            sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self._lock:
            sock, rfile, self._sock, self._rfile = self._sock, self._rfile, None, None
        for closable in (rfile, sock):
            if closable is not None:
                with contextlib.suppress(OSError):
                    closable.close()
