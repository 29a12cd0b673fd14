"""One client connection's requests: read, route to the control endpoint or fault and forward, count.

A request's way through: its head and body are read (:mod:`wire`); the URL is parsed as
kube-apiserver does, so fault rules and counters see its verb and resource; a fired rule waits
(``delay``, ``hang``) and may answer its ``Status`` instead of the server, or after it (``commit``);
otherwise the request goes upstream unchanged but for the hop-by-hop headers, and the answer comes
back as it arrives. Every answered request is counted before its answer goes out, so a client that
reads the counters next sees it. Requests on one connection are served one after the other, as
HTTP/1.1 without pipelining is used by every Kubernetes client.
"""

from __future__ import annotations

import io
import json
import socketserver
import time
from dataclasses import dataclass
from http import HTTPStatus
from typing import cast
from urllib.parse import parse_qs, unquote

from llmisvc_devstack.proxy import control, requestinfo
from llmisvc_devstack.proxy.counters import RequestRecord
from llmisvc_devstack.proxy.faults import FaultRule
from llmisvc_devstack.proxy.listener import ProxyServer, Session
from llmisvc_devstack.proxy.relay import HOP_BY_HOP, ClientGone, Downstream, Ending, event_limit, stream_body
from llmisvc_devstack.proxy.requestinfo import RequestInfo
from llmisvc_devstack.proxy.status import ApiError, bad_request, upstream_unreachable
from llmisvc_devstack.proxy.upstream import Response
from llmisvc_devstack.proxy.wire import Body, Head, ProtocolError, content_length, is_chunked, read_head

HANDSHAKE_TIMEOUT = 10.0
SMALL_BODY = 64 * 1024  # a length-delimited body up to this size goes out in one write with its head
_NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "expect"}


@dataclass(slots=True)
class Request:
    method: str
    target: str  # as the client sent it: passed on unchanged, never re-quoted
    head: Head
    body: bytes
    info: RequestInfo

    @property
    def agent(self) -> str:
        return self.head.get("user-agent")


def _phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return ""


def _head(code: int, reason: str, fields: list[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {code} {reason}\r\n".encode("latin-1")]
    lines.extend(f"{name}: {value}\r\n".encode("latin-1") for name, value in fields)
    lines.append(b"\r\n")
    return b"".join(lines)


def _created_name(info: RequestInfo, code: int, body: bytes, content_type: str) -> str:
    """The name a create stored (a POST's path has none, and ``generateName`` picks it server-side),
    so the request log says which object each write touched."""
    if info.verb != "create" or info.name or code >= 300 or not body or "json" not in content_type:
        return ""
    try:
        return str((json.loads(body).get("metadata") or {}).get("name") or "")
    except (ValueError, AttributeError):
        return ""


class ProxyHandler(socketserver.StreamRequestHandler):
    disable_nagle_algorithm = True  # TCP_NODELAY: small keep-alive answers are not held back
    server: ProxyServer
    session: Session

    def setup(self) -> None:
        if hasattr(self.request, "do_handshake"):
            self.request.settimeout(HANDSHAKE_TIMEOUT)
            self.request.do_handshake()
        super().setup()
        self.reader = cast(io.BufferedReader, self.rfile)  # what makefile("rb", -1) made it
        # Idle keep-alive connections end after this long, as kube-apiserver's do.
        self.connection.settimeout(self.server.idle_timeout)
        self.session = self.server.open_session(self.connection)
        self.out = Downstream(self.connection)
        self.close_connection = False

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.close_session(self.session)

    def handle(self) -> None:
        while not self.close_connection and not self.server.stopping.is_set():
            try:
                request = self._read_request()
            except ProtocolError as exc:
                self.close_connection = True
                self._send_json(400, bad_request(str(exc)).body(), {})
                return
            except OSError:  # the client left, or stayed idle past the timeout
                return
            if request is None:
                return
            self._serve(request)

    # --- the request ---------------------------------------------------------------------------

    def _read_request(self) -> Request | None:
        head = read_head(self.reader)
        if head is None:
            return None
        method, _, rest = head.start.partition(" ")
        target, _, version = rest.rpartition(" ")
        if not version.startswith("HTTP/1.") or not target or not method.isalpha():
            raise ProtocolError(f"not an HTTP/1.x request line: {head.start[:80]!r}")
        connection = head.tokens("connection")
        self.close_connection = "close" in connection or (
            version == "HTTP/1.0" and "keep-alive" not in connection
        )
        if "expect" in head.index and "100-continue" in head.tokens("expect") and version == "HTTP/1.1":
            self.out.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        chunked = is_chunked(head)
        body = Body(self.reader, None if chunked else content_length(head) or 0, chunked).read_all()
        raw_path, _, query = target.partition("?")
        path = unquote(raw_path)
        params = parse_qs(query) if query else {}
        watch = requestinfo.is_watch_query(params.get("watch", [""])[-1])
        info = requestinfo.parse(method, path, watch, dry_run=params.get("dryRun") == ["All"])
        return Request(method, target, head, body, info)

    def _forwarded(self, head: Head) -> list[tuple[str, str]]:
        named = head.tokens("connection") - {"close", "keep-alive"}  # fields named hop-by-hop
        skip = _NOT_FORWARDED | named if named else _NOT_FORWARDED
        return [(k, v) for k, v in head.fields if k.lower() not in skip]

    def _serve(self, request: Request) -> None:
        info = request.info
        if info.path.startswith(control.PREFIX):
            query = request.target.partition("?")[2]
            code, answer = control.handle(self.server, request.method, info.path, query, request.body)
            self._send_json(code, json.dumps(answer, separators=(",", ":")).encode(), {})
            return
        rule = self.server.faults.evaluate(info, request.agent) if info.is_resource else None
        error = self._before(rule)
        if error is not None and not (rule is not None and rule.commit and info.is_write):
            self._answer_error(request, error)
            return
        link = self.session.link
        try:
            response = link.send(request.method, request.target, self._forwarded(request.head), request.body)
        except (OSError, ProtocolError) as exc:
            link.close()
            self._answer_error(request, upstream_unreachable(self.server.upstream.url, str(exc) or repr(exc)))
            return
        try:
            if error is not None:
                response.body.read_all()  # committed upstream; the client is told it failed
                link.finished(response)
                self._answer_error(request, error)
            else:
                self._relay(request, response, rule)
        except (OSError, ProtocolError, ClientGone):
            link.close()
            self.close_connection = True

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

    def _record(self, request: Request, code: int, name: str = "") -> None:
        info = request.info
        self.server.counter.record(
            RequestRecord(
                verb=info.verb,
                group=info.group,
                resource=info.resource,
                subresource=info.subresource,
                namespace=info.namespace or "",
                name=name or info.name,
                code=code,
                method=request.method,
                path=info.path,
                user_agent=request.agent,
                time=time.time(),
                version=info.version,
                dry_run=info.dry_run,
                body=request.body if info.is_write else b"",
            )
        )

    def _answer_error(self, request: Request, error: ApiError) -> None:
        self._record(request, error.code)
        self._send_json(error.code, error.body(), error.headers, head_only=request.method == "HEAD")

    def _send_json(self, code: int, data: bytes, extra: dict[str, str], head_only: bool = False) -> None:
        fields = [("Content-Type", "application/json"), ("Content-Length", str(len(data))), *extra.items()]
        if self.close_connection:
            fields.append(("Connection", "close"))
        try:
            self.out.write(_head(code, _phrase(code), fields) + (b"" if head_only else data))
        except ClientGone:
            self.close_connection = True

    def _relay(self, request: Request, response: Response, rule: FaultRule | None) -> None:
        length = response.length
        info = request.info
        if length is None and info.verb == "create" and not info.name and response.code < 300:
            self._relay_whole(request, response)
            return
        # A body of unknown length goes on in chunks, but to an HTTP/1.0 client, which ends with the
        # connection; its Content-Length, if the server sent one with chunks, is void (RFC 9112 6.3).
        chunked = length is None and not request.head.start.endswith("HTTP/1.0")
        skip = HOP_BY_HOP if length is not None else HOP_BY_HOP | {"content-length"}
        fields = [(k, v) for k, v in response.head.fields if k.lower() not in skip]
        if length is None and not chunked:
            self.close_connection = True
        if chunked:
            fields.append(("Transfer-Encoding", "chunked"))
        if self.close_connection:
            fields.append(("Connection", "close"))
        head = _head(response.code, response.reason, fields)
        if length is not None and length <= SMALL_BODY:
            data = response.body.read_all()
            name = _created_name(request.info, response.code, data, response.head.get("content-type"))
            self._record(request, response.code, name)
            self.out.write(head + data)
            self.session.link.finished(response)
            return
        self._record(request, response.code)
        self._stream(request, response, rule, head, chunked)

    def _relay_whole(self, request: Request, response: Response) -> None:
        """A create's answer in chunks (Go's server chunks any answer over 2 KiB), read whole and sent on
        with its length, so the request log names the object the POST stored as for a short answer."""
        data = response.body.read_all()
        skip = HOP_BY_HOP | {"content-length"}
        fields = [(k, v) for k, v in response.head.fields if k.lower() not in skip]
        fields.append(("Content-Length", str(len(data))))
        if self.close_connection:
            fields.append(("Connection", "close"))
        name = _created_name(request.info, response.code, data, response.head.get("content-type"))
        self._record(request, response.code, name)
        self.out.write(_head(response.code, response.reason, fields) + data)
        self.session.link.finished(response)

    def _stream(
        self, request: Request, response: Response, rule: FaultRule | None, head: bytes, chunked: bool
    ) -> None:
        watch = request.info.verb == "watch"
        drop_after = rule.drop_watch_after if watch and rule is not None else None
        content_type = response.head.get("content-type")
        limit = event_limit(drop_after, content_type) if drop_after is not None else None
        send = self.out.chunk if chunked else self.out.write
        if watch:
            self.session.start_watch()
        try:
            self.out.write(head)
            ending = Ending.LIMIT if limit is not None and limit.left <= 0 else None
            ending = ending or stream_body(response.body, send, limit, self.session.is_cut)
        finally:
            if watch:
                self.session.end_watch()
        if ending is Ending.COMPLETE:
            if chunked:
                self.out.end_chunks()
            self.session.link.finished(response)
            return
        # The rest of the upstream body is unread (or lost): that connection cannot serve again.
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
