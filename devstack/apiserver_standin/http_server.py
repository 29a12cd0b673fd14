"""The HTTP/1.1 layer: a threaded server with keep-alive that routes URLs to discovery, the resource
verbs, watch streams or the control endpoint, applies fault rules and counts every request.

Each response is written with a single ``write`` (status line, headers and body together) and
TCP_NODELAY is set, so small keep-alive responses are not held back by Nagle's algorithm.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from apiserver_standin import control, discovery, openapi, requestinfo, tables
from apiserver_standin.api import ApiRequest, Response, handle, resolve
from apiserver_standin.counters import RequestRecord
from apiserver_standin.errors import ApiError, internal_error, resource_not_found
from apiserver_standin.faults import FaultRule
from apiserver_standin.registry import ResourceInfo
from apiserver_standin.requestinfo import RequestInfo
from apiserver_standin.state import StandinState
from apiserver_standin.watch_stream import ChunkedEvents, StreamClosed, stream, validate_watch


class StandinHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: StandinState) -> None:
        super().__init__(address, Handler)
        self.app = app
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def track(self, sock: socket.socket, open_: bool) -> None:
        with self._connections_lock:
            if open_:
                self._connections.add(sock)
            else:
                self._connections.discard(sock)

    def close_connections(self) -> None:
        """Cut every open connection, so idle keep-alive threads and watch streams end at stop()."""
        with self._connections_lock:
            connections = list(self._connections)
        for sock in connections:
            _shutdown(sock)


def _nonresource(app: StandinState, address: str, path: str) -> Response:
    parts = [p for p in path.split("/") if p]
    doc: Any = None
    if path in ("/healthz", "/livez", "/readyz"):
        return Response(200, "ok")
    if parts == ["version"]:
        doc = discovery.VERSION_INFO
    elif parts == ["api"]:
        doc = discovery.core_versions(address)
    elif parts == ["apis"]:
        doc = discovery.group_list(app.registry)
    elif len(parts) == 2 and parts[0] == "apis":
        doc = discovery.group(app.registry, parts[1])
    elif parts == ["api", "v1"]:
        doc = discovery.resource_list(app.registry, "", "v1")
    elif len(parts) == 3 and parts[0] == "apis":
        doc = discovery.resource_list(app.registry, parts[1], parts[2])
    elif parts[:2] == ["openapi", "v3"]:
        doc = openapi.document(app.registry, path)
    if doc is None:
        raise resource_not_found(path)
    return Response(200, doc)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StandinHTTPServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a request log on stderr would drown test output."""

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _handle(self) -> None:
        app = self.server.app
        url = urlsplit(self.path)
        path = unquote(url.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        try:
            body = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            return
        if path.startswith("/_standin/"):
            try:
                response = control.handle(app, self.command, path, query, body)
            except Exception:
                traceback.print_exc(file=sys.stderr)
                response = Response(500, internal_error("unexpected error in the control endpoint").status())
            self._send(response)
            return
        info = requestinfo.parse(self.command, path, query.get("watch", "").lower() in ("true", "1"))
        answer = self._serve(app, info, query, body)
        if answer is not None:
            # Counted before the answer goes out, so a client that reads the counters next sees it.
            self._record(info, answer.code)
            self._send(answer)

    def _record(self, info: RequestInfo, code: int) -> None:
        self.server.app.counter.record(
            RequestRecord(
                verb=info.verb,
                group=info.group,
                resource=info.resource,
                subresource=info.subresource,
                namespace=info.namespace or "",
                name=info.name,
                code=code,
                method=self.command,
                path=info.path,
                user_agent=self.headers.get("User-Agent", ""),
                time=time.time(),
            )
        )

    def _serve(
        self, app: StandinState, info: RequestInfo, query: dict[str, str], body: bytes
    ) -> Response | None:
        """The answer to send, or None when a watch stream was served (and recorded) already."""
        try:
            if not info.is_resource:
                host, port = self.server.server_address[:2]
                response = _nonresource(app, f"{host!s}:{port}", info.path)
            else:
                rule = app.faults.evaluate(info, self.headers.get("User-Agent", ""))
                error = _before(app, rule)
                if error is not None and not (rule is not None and rule.commit and info.is_write):
                    raise error
                content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                req = ApiRequest(info, query, content_type, body, self.headers.get("User-Agent", ""))
                resource = resolve(app.registry, info)
                if info.verb == "watch":
                    validate_watch(
                        req, resource
                    )  # a malformed query is a plain 400, before the stream starts
                    self._record(info, 200)  # counted when it starts: a watch may stay open for long
                    self._watch(app, resource, req, rule)
                    return None
                response = handle(app.store, resource, req)
                if error is not None:
                    raise error  # the write is stored, yet the client is told it failed
                if info.verb in ("get", "list"):
                    response = tables.maybe_table(self.headers.get("Accept", ""), resource, response)
        except ApiError as exc:
            response = Response(exc.code, exc.status(), exc.headers)
        except Exception:
            traceback.print_exc(file=sys.stderr)
            response = Response(500, internal_error("unexpected error in the API server stand-in").status())
        return response

    def _watch(
        self, app: StandinState, resource: ResourceInfo, req: ApiRequest, rule: FaultRule | None
    ) -> None:
        out = ChunkedEvents(self.wfile, rule.drop_watch_after if rule else None)
        try:
            self.wfile.write(_head(200, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}))
            stream(app.store, resource, req, out, app.stopping, app.watch_settings)
        except (StreamClosed, OSError):
            if not out.dropped or (rule is not None and rule.drop_abruptly):
                self.close_connection = True  # the client left, or an abrupt drop: no final chunk
                _shutdown(self.connection)
                return
        except ApiError as exc:  # cannot happen after validate(); answered in-stream as a real server would
            with contextlib.suppress(StreamClosed):
                out.send("ERROR", exc.status())
        try:
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _send(self, response: Response) -> None:
        if isinstance(response.body, str):
            data, content_type = response.body.encode(), "text/plain; charset=utf-8"
        else:
            data, content_type = json.dumps(response.body, separators=(",", ":")).encode(), "application/json"
        headers = {"Content-Type": content_type, "Content-Length": str(len(data)), **response.headers}
        if self.command == "HEAD":
            data = b""
        try:
            self.wfile.write(_head(response.code, headers) + data)
        except OSError:
            self.close_connection = True


def _head(code: int, headers: dict[str, str]) -> bytes:
    try:
        phrase = HTTPStatus(code).phrase
    except ValueError:
        phrase = ""
    lines = [f"HTTP/1.1 {code} {phrase}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _before(app: StandinState, rule: FaultRule | None) -> ApiError | None:
    """Run a fired rule's delay/hang; return the error it answers with, if any."""
    if rule is None:
        return None
    if rule.delay > 0:
        app.stopping.wait(rule.delay)
    if rule.hang:
        deadline = time.monotonic() + rule.hang_timeout
        while not rule.released.is_set() and not app.stopping.is_set() and time.monotonic() < deadline:
            rule.released.wait(0.05)
    return rule.error()
