"""HTTP/1.1 message heads and bodies as the proxy reads them off a connection, in both directions.

Parsed by hand rather than with ``http.server``/``http.client``: those build an ``email`` message per
head, which cost more than half the proxy's CPU time per request; a proxy needs only the header
pairs in order (to pass them on unchanged) and the few that frame a message. Framing follows
RFC 9112: ``Transfer-Encoding: chunked`` wins over ``Content-Length``, conflicting lengths are
refused, and obsolete line folding is refused, as Go's server does.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

MAX_LINE = 64 * 1024
MAX_FIELDS = 256
PIECE = 64 * 1024  # the most one read hands on: big bodies stream, they are never gathered whole


class ProtocolError(Exception):
    """The peer sent something that is not HTTP/1.1 the proxy can pass on."""


@dataclass(slots=True)
class Head:
    """A request or status line and its header fields, in order, with a lower-cased index."""

    start: str
    fields: list[tuple[str, str]]
    index: dict[str, str]  # repeated fields joined with ", ", as RFC 9110 5.3 allows

    def get(self, name: str, default: str = "") -> str:
        return self.index.get(name, default)

    def tokens(self, name: str) -> set[str]:
        """A comma-separated field's values, lower-cased (``Connection``, ``Transfer-Encoding``)."""
        return {t.strip().lower() for t in self.get(name).split(",") if t.strip()}


def _line(rfile: io.BufferedReader) -> bytes:
    line = rfile.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise ProtocolError("line too long")
    return line


def read_head(rfile: io.BufferedReader) -> Head | None:
    """The next message head, or None when the connection ends before one starts."""
    # Fast path: the whole head is in the read buffer already (it nearly always is, a head being
    # small and sent in one write): split it at once instead of reading it line by line.
    buffered = rfile.peek(MAX_LINE)
    end = buffered.find(b"\r\n\r\n")
    if end > 0 and not buffered.startswith(b"\r\n"):
        lines = rfile.read(end + 4)[:end].decode("latin-1").split("\r\n")
        return _parse(lines[0], lines[1:])
    line = _line(rfile)
    while line in (b"\r\n", b"\n"):  # RFC 9112 2.2: empty lines before a request are ignored
        line = _line(rfile)
    if not line:
        return None
    raw_fields = []
    while (raw := _line(rfile)) not in (b"\r\n", b"\n"):
        if not raw:
            raise ProtocolError("the connection ended inside a message head")
        raw_fields.append(raw.decode("latin-1").rstrip("\r\n"))
    return _parse(line.decode("latin-1").rstrip("\r\n"), raw_fields)


def _parse(start: str, raw_fields: list[str]) -> Head:
    if len(raw_fields) > MAX_FIELDS:
        raise ProtocolError("too many header fields")
    fields: list[tuple[str, str]] = []
    index: dict[str, str] = {}
    for raw in raw_fields:
        name, colon, value = raw.partition(":")
        if not colon or not name or name[0] in " \t" or name[-1] in " \t":
            raise ProtocolError(f"malformed header line {raw[:80]!r}")
        value = value.strip()
        fields.append((name, value))
        key = name.lower()
        index[key] = f"{index[key]}, {value}" if key in index else value
    return Head(start, fields, index)


def content_length(head: Head) -> int | None:
    raw = head.get("content-length")
    if not raw:
        return None
    values = {v.strip() for v in raw.split(",")}
    if len(values) != 1 or not next(iter(values)).isdigit():
        raise ProtocolError(f"invalid Content-Length {raw!r}")
    return int(values.pop())


def is_chunked(head: Head) -> bool:
    coding = head.get("transfer-encoding")
    return bool(coding) and coding.rsplit(",", 1)[-1].strip().lower() == "chunked"


class Body:
    """One message body, read piece by piece in its framing: a length, chunks, or until the end.

    ``read`` hands on at most :data:`PIECE` bytes of what has arrived, never waiting for more than
    one piece: that is what lets a watch event through the moment it comes.
    """

    def __init__(self, rfile: io.BufferedReader, length: int | None, chunked: bool) -> None:
        self._rfile = rfile
        self._left = length  # bytes left: of the body (length), of the chunk (chunked), None: to EOF
        self._chunked = chunked
        self._started = False
        self.done = length == 0 and not chunked

    def read(self) -> bytes:
        """The next piece, or b"" once the body is complete; a truncated body raises ProtocolError."""
        if self.done:
            return b""
        if self._chunked and not self._left and not self._next_chunk():
            return b""
        size = PIECE if self._left is None else min(PIECE, self._left)
        data = self._rfile.read1(size)
        if self._left is None:
            self.done = not data
            return data
        if not data:
            raise ProtocolError("the connection ended inside a message body")
        self._left -= len(data)
        if not self._chunked:
            self.done = self._left == 0
        return data

    def _next_chunk(self) -> bool:
        if self._started and _line(self._rfile) not in (b"\r\n", b"\n"):
            raise ProtocolError("a chunk does not end where its size says")
        self._started = True
        size_line = _line(self._rfile)
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise ProtocolError(f"invalid chunk size {size_line[:40]!r}") from None
        if size == 0:
            while _line(self._rfile) not in (b"\r\n", b"\n", b""):
                pass  # trailer fields: nothing of Kubernetes sends them, so none are passed on
            self.done = True
            return False
        self._left = size
        return True

    def read_all(self) -> bytes:
        if not self._chunked and self._left is not None:
            data = self._rfile.read(self._left) if self._left else b""
            if len(data) != self._left:
                raise ProtocolError("the connection ended inside a message body")
            self._left, self.done = 0, True
            return data
        pieces = []
        while piece := self.read():
            pieces.append(piece)
        return b"".join(pieces)
