"""One client connection's requests: parse, route to the control endpoint or fault and forward, count.

A request's way through: its body is read (``Content-Length`` or chunked); the URL is parsed as
kube-apiserver does, so fault rules and counters see its verb and resource; a fired rule waits
(``delay``, ``hang``) and may answer its ``Status`` instead of the server, or after it (``commit``);
otherwise the request goes upstream unchanged, but for the hop-by-hop headers, and the response
comes back as it arrives. Every answered request is counted before its answer goes out, so a client
that reads the counters next sees it.
"""

from __future__ import annotations

import json
import time
from http.client import HTTPException, HTTPResponse
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote

from llmisvc_devstack.proxy import control, requestinfo
from llmisvc_devstack.proxy.counters import RequestRecord
from llmisvc_devstack.proxy.faults import FaultRule
from llmisvc_devstack.proxy.listener import ProxyServer, Session
from llmisvc_devstack.proxy.relay import HOP_BY_HOP, ClientGone, Downstream, Ending, event_limit, stream_body
from llmisvc_devstack.proxy.requestinfo import RequestInfo
from llmisvc_devstack.proxy.status import ApiError, upstream_unreachable

HANDSHAKE_TIMEOUT = 10.0
SMALL_BODY = 64 * 1024  # a length-delimited body up to this size goes out in one write with its head
_NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "expect"}
_NO_BODY_CODES = frozenset({204, 304})


def _head(code: int, reason: str, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {code} {reason}\r\n".encode("latin-1")]
    lines.extend(f"{name}: {value}\r\n".encode("latin-1") for name, value in headers)
    lines.append(b"\r\n")
    return b"".join(lines)


def _created_name(info: RequestInfo, code: int, body: bytes | None, content_type: str) -> str:
    """The name a create stored (a POST's path has none, and ``generateName`` picks it server-side),
    so the request log says which object each write touched."""
    if info.verb != "create" or info.name or code >= 300 or not body or "json" not in content_type:
        return ""
    try:
        return str((json.loads(body).get("metadata") or {}).get("name") or "")
    except (ValueError, AttributeError):
        return ""


class ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # TCP_NODELAY: small keep-alive answers are not held back
    server: ProxyServer
    session: Session

    def setup(self) -> None:
        if hasattr(self.request, "do_handshake"):
            self.request.settimeout(HANDSHAKE_TIMEOUT)
            self.request.do_handshake()
        super().setup()
        # Idle keep-alive connections end after this long, as kube-apiserver's do.
        self.connection.settimeout(self.server.idle_timeout)
        self.session = self.server.open_session(self.connection)
        self.out = Downstream(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.close_session(self.session)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a request log on stderr would drown test output (the counters keep one)."""

    def do_GET(self) -> None:
        self._proxy()

    def do_HEAD(self) -> None:
        self._proxy()

    def do_POST(self) -> None:
        self._proxy()

    def do_PUT(self) -> None:
        self._proxy()

    def do_PATCH(self) -> None:
        self._proxy()

    def do_DELETE(self) -> None:
        self._proxy()

    def do_OPTIONS(self) -> None:
        self._proxy()

    # --- the request ---------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked_body()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked_body(self) -> bytes:
        # Forwarded with a Content-Length: Kubernetes request bodies are bounded (a few MiB).
        pieces = []
        while True:
            size = int(self.rfile.readline(1024).split(b";", 1)[0], 16)
            if size == 0:
                break
            pieces.append(self.rfile.read(size))
            self.rfile.readline(8)
        while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
            pass  # trailers: nothing of Kubernetes uses them
        return b"".join(pieces)

    def _forwarded_headers(self) -> list[tuple[str, str]]:
        named = {t.strip().lower() for t in self.headers.get("Connection", "").split(",")}
        skip = _NOT_FORWARDED | named
        return [(k, v) for k, v in self.headers.items() if k.lower() not in skip]

    def _proxy(self) -> None:
        try:
            body = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            return
        raw_path, _, query = self.path.partition("?")
        path = unquote(raw_path)
        if path.startswith(control.PREFIX):
            code, answer = control.handle(self.server, self.command, path, query, body)
            self._send_json(code, json.dumps(answer, separators=(",", ":")).encode(), {})
            return
        watch = "watch" in query and requestinfo.is_watch_query(parse_qs(query).get("watch", [""])[-1])
        info = requestinfo.parse(self.command, path, watch)
        rule = self.server.faults.evaluate(info, self._agent()) if info.is_resource else None
        error = self._before(rule)
        if error is not None and not (rule is not None and rule.commit and info.is_write):
            self._answer_error(info, error)
            return
        head = f"{self.command} {self.path} HTTP/1.1\r\n".encode("latin-1")
        try:
            response = self.session.link.send(head, self._forwarded_headers(), body, self.command)
        except (OSError, HTTPException) as exc:
            self.session.link.close()
            self._answer_error(info, upstream_unreachable(self.server.upstream.url, str(exc) or repr(exc)))
            return
        try:
            if error is not None:
                response.read()  # committed upstream; the client is told it failed
                self.session.link.finished(response)
                self._answer_error(info, error)
            else:
                self._relay(info, response, rule)
        except (OSError, HTTPException, ClientGone):
            response.close()
            self.session.link.close()
            self.close_connection = True

    def _agent(self) -> str:
        return self.headers.get("User-Agent", "")

    def _before(self, rule: FaultRule | None) -> ApiError | None:
        """Run a fired rule's delay and hang; the error it answers with, if any."""
        if rule is None:
            return None
        stopping = self.server.stopping
        if rule.delay > 0:
            stopping.wait(rule.delay)
        if rule.hang:
            deadline = time.monotonic() + rule.hang_timeout
            while not rule.released.is_set() and not stopping.is_set() and time.monotonic() < deadline:
                rule.released.wait(min(0.05, max(deadline - time.monotonic(), 0)))
        return rule.error()

    # --- the answer ----------------------------------------------------------------------------

    def _record(self, info: RequestInfo, code: int, name: str = "") -> None:
        self.server.counter.record(
            RequestRecord(
                verb=info.verb,
                group=info.group,
                resource=info.resource,
                subresource=info.subresource,
                namespace=info.namespace or "",
                name=name or info.name,
                code=code,
                method=self.command,
                path=info.path,
                user_agent=self._agent(),
                time=time.time(),
            )
        )

    def _answer_error(self, info: RequestInfo, error: ApiError) -> None:
        self._record(info, error.code)
        self._send_json(error.code, error.body(), error.headers)

    def _send_json(self, code: int, data: bytes, extra: dict[str, str]) -> None:
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
        headers.extend(extra.items())
        if self.close_connection:
            headers.append(("Connection", "close"))
        try:
            self.out.write(_head(code, self.responses.get(code, ("",))[0], headers) + data)
        except ClientGone:
            self.close_connection = True

    def _relay(self, info: RequestInfo, response: HTTPResponse, rule: FaultRule | None) -> None:
        code = response.status
        headers = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_BY_HOP]
        has_body = self.command != "HEAD" and code not in _NO_BODY_CODES and code >= 200
        length = response.length if has_body else 0
        chunked = has_body and length is None and self.request_version == "HTTP/1.1"
        if has_body and length is None and not chunked:
            self.close_connection = True  # an HTTP/1.0 client: the body ends with the connection
        if chunked:
            headers.append(("Transfer-Encoding", "chunked"))
        if self.close_connection:
            headers.append(("Connection", "close"))
        head = _head(code, response.reason, headers)
        if length is not None and length <= SMALL_BODY:
            data = response.read() if has_body else b""
            name = _created_name(info, code, data, response.getheader("Content-Type", ""))
            self._record(info, code, name)
            self.out.write(head + data)
            self.session.link.finished(response)
            return
        self._record(info, code)
        self._stream(info, response, rule, head, chunked)

    def _stream(
        self, info: RequestInfo, response: HTTPResponse, rule: FaultRule | None, head: bytes, chunked: bool
    ) -> None:
        watch = info.verb == "watch"
        drop_after = rule.drop_watch_after if watch and rule is not None else None
        limit = (
            event_limit(drop_after, response.getheader("Content-Type", ""))
            if drop_after is not None
            else None
        )
        send = self.out.chunk if chunked else self.out.write
        if watch:
            self.session.start_watch()
        try:
            self.out.write(head)
            ending = Ending.LIMIT if limit is not None and limit.left <= 0 else None
            ending = ending or stream_body(response, send, limit, self.session.is_cut)
        finally:
            if watch:
                self.session.end_watch()
        if ending is Ending.COMPLETE:
            if chunked:
                self.out.end_chunks()
            self.session.link.finished(response)
            return
        # The rest of the upstream body is unread (or lost): that connection cannot serve again.
        response.close()
        self.session.link.close()
        abruptly = (
            ending is Ending.BROKEN
            or (ending is Ending.LIMIT and rule is not None and rule.drop_abruptly)
            or (ending is Ending.CUT and self.session.cut_abruptly)
            or not chunked  # a length- or close-delimited body cannot end early but by closing
        )
        if abruptly:
            self.close_connection = True
            self.session.abort_downstream()
        else:
            self.out.end_chunks()
