"""A tiny TLS upstream for the proxy's own tests: just enough HTTP to watch the proxy's behaviour.

Not an API server: it stores ConfigMaps in a dict, echoes requests back, streams watch events a test
pushes, and has a few routes that misbehave on purpose. Each answer says which upstream connection
served it (``X-Upstream-Connection``), so a test can see connections being reused.

    /api/v1/namespaces/<ns>/configmaps[/<name>]   get, list, create (generateName too), ?watch=true
    /apis/echo.test/v1/namespaces/<ns>/echoes...  any method: the request as JSON (headers, body)
    /big?size=N[&chunked=1]                       N bytes, length-delimited or chunked
    /broken                                       a chunked answer cut off mid-body
    /hangup                                       an answer, then the connection closed silently
"""

from __future__ import annotations

import base64
import itertools
import json
import queue
import socket
import socketserver
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

_END = object()


class FakeUpstream(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, certfile: str, keyfile: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certfile, keyfile)
        self.socket = context.wrap_socket(self.socket, server_side=True)
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.watches: list[queue.Queue[object]] = []
        self.watches_lock = threading.Lock()
        self.connections = itertools.count(1)
        self.requests: list[tuple[str, str]] = []
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def server_bind(self) -> None:
        # Skip HTTPServer's getfqdn(): no name lookups in tests.
        socketserver.TCPServer.server_bind(self)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server_address[1]}"

    def start(self) -> FakeUpstream:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.end_watches()
        self.shutdown()
        self.server_close()

    def emit(self, type_: str, obj: dict[str, Any]) -> None:
        """Send one event down every open watch."""
        with self.watches_lock:
            for events in self.watches:
                events.put({"type": type_, "object": obj})

    def end_watches(self) -> None:
        with self.watches_lock:
            for events in self.watches:
                events.put(_END)

    def open_watches(self) -> int:
        with self.watches_lock:
            return len(self.watches)


def configmap(name: str, namespace: str = "ns", **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeUpstream

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.number = next(self.server.connections)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._route()

    def do_HEAD(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def do_PUT(self) -> None:
        self._route()

    def do_PATCH(self) -> None:
        self._route()

    def do_DELETE(self) -> None:
        self._route()

    def _route(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.requests.append((self.command, self.path))
        parts = [p for p in url.path.split("/") if p]
        if parts[:4] == ["apis", "echo.test", "v1", "namespaces"]:
            self._echo(body)
        elif parts[:3] == ["api", "v1", "namespaces"] and parts[4:5] == ["configmaps"]:
            self._configmaps(parts[3], parts[5] if len(parts) > 5 else "", query, body)
        elif parts == ["big"]:
            self._big(int(query["size"]), query.get("chunked") == "1")
        elif parts == ["broken"]:
            self._send_head(200, {"Transfer-Encoding": "chunked"})
            self.wfile.write(b"5\r\nhello\r\n")
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        elif parts == ["hangup"]:
            self._json(200, {"kind": "Status", "status": "Success"})
            self.close_connection = True  # without a Connection: close header: a silent hang-up
        else:
            self._json(404, {"kind": "Status", "code": 404, "reason": "NotFound"})

    def _send_head(self, code: int, headers: dict[str, str]) -> None:
        self.send_response_only(code)
        self.send_header("X-Upstream-Connection", str(self.number))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _json(self, code: int, doc: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(doc).encode()
        self._send_head(
            code, {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}
        )
        if self.command != "HEAD":
            self.wfile.write(data)

    def _echo(self, body: bytes) -> None:
        self._json(
            200,
            {
                "method": self.command,
                "path": self.path,
                "headers": [[k, v] for k, v in self.headers.items()],
                "body": base64.b64encode(body).decode(),
            },
        )

    def _configmaps(self, namespace: str, name: str, query: dict[str, str], body: bytes) -> None:
        store = self.server.objects
        if self.command == "POST":
            obj = json.loads(body)
            meta = obj.setdefault("metadata", {})
            meta.setdefault("name", f"{meta.get('generateName', 'x-')}{len(store) + 1}")
            meta["namespace"] = namespace
            store[(namespace, meta["name"])] = obj
            self._json(201, obj)
        elif name:
            obj = store.get((namespace, name))
            if obj is None:
                self._json(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
            else:
                self._json(200, obj)
        elif query.get("watch") in ("true", "1"):
            self._watch()
        else:
            items = [o for (ns, _), o in sorted(store.items()) if ns == namespace]
            self._json(200, {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {}, "items": items})

    def _watch(self) -> None:
        events: queue.Queue[object] = queue.Queue()
        with self.server.watches_lock:
            self.server.watches.append(events)
        try:
            self._send_head(200, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
            self.wfile.flush()
            while (event := events.get()) is not _END:
                data = json.dumps(event).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True
        finally:
            with self.server.watches_lock:
                self.server.watches.remove(events)

    def _big(self, size: int, chunked: bool) -> None:
        data = (bytes(range(251)) * (size // 251 + 1))[:size]
        if not chunked:
            self._send_head(200, {"Content-Type": "application/octet-stream", "Content-Length": str(size)})
            self.wfile.write(data)
            return
        self._send_head(200, {"Content-Type": "application/octet-stream", "Transfer-Encoding": "chunked"})
        for at in range(0, size, 10_000):
            piece = data[at : at + 10_000]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")
