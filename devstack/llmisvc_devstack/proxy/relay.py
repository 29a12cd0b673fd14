"""Copying an upstream response's body to the client as it arrives, and where a watch event ends.

Bodies are never gathered before they are sent on (beyond one small, length-delimited answer, sent
with its head in one write): each piece read (:class:`wire.Body`) is written at once, so watch events
flow one by one. A body of unknown length is re-framed as chunks, as the client connection stays. A
``drop_watch_after`` fault needs the event boundaries: newlines in a JSON watch, 4-byte length
prefixes in a protobuf one (``;stream=watch``).
"""

from __future__ import annotations

import enum
import socket
from collections.abc import Callable
from typing import Protocol

from llmisvc_devstack.proxy.wire import Body, ProtocolError

# Headers that describe one connection, not the message (RFC 9110 7.6.1): never passed on.
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
)


class ClientGone(Exception):  # noqa: N818 - the client hanging up is an ordinary end, not an error
    """Writing to the client failed: it went away."""


class Downstream:
    """Writes to the client's socket; each call is one ``sendall``, so one TLS record at most."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def write(self, data: bytes | memoryview) -> None:
        try:
            self._sock.sendall(data)
        except OSError as exc:
            raise ClientGone(str(exc)) from exc

    def chunk(self, data: bytes) -> None:
        # One buffer per chunk: copying the data once is cheaper than a TLS record per piece.
        self.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_chunks(self) -> None:
        self.write(b"0\r\n\r\n")


class EventLimit(Protocol):
    left: int

    def cut(self, data: bytes) -> int | None:
        """How many bytes of ``data`` to send before the limit is reached, or None: all, no limit yet."""


class LineEvents:
    """Newline-delimited JSON watch events (kube-apiserver writes each event followed by a newline)."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def cut(self, data: bytes) -> int | None:
        if self.left <= 0:
            return 0
        newlines = data.count(b"\n")
        if newlines < self.left:
            self.left -= newlines
            return None
        end = -1
        for _ in range(self.left):
            end = data.index(b"\n", end + 1)
        self.left = 0
        return end + 1


class LengthFramedEvents:
    """Protobuf watch events: each a 4-byte big-endian length, then that many bytes."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self._prefix = bytearray()
        self._remaining = 0
        self._in_prefix = True

    def cut(self, data: bytes) -> int | None:
        if self.left <= 0:
            return 0
        at = 0
        while at < len(data):
            if self._in_prefix:
                taken = data[at : at + 4 - len(self._prefix)]
                self._prefix += taken
                at += len(taken)
                if len(self._prefix) < 4:
                    break
                self._remaining, self._in_prefix = int.from_bytes(self._prefix, "big"), False
                self._prefix.clear()
            step = min(self._remaining, len(data) - at)
            at += step
            self._remaining -= step
            if self._remaining == 0:
                self._in_prefix = True
                self.left -= 1
                if self.left == 0:
                    return at
        return None


def event_limit(limit: int, content_type: str) -> EventLimit:
    if "protobuf" in content_type and "stream=watch" in content_type:
        return LengthFramedEvents(limit)
    return LineEvents(limit)


class Ending(enum.Enum):
    COMPLETE = "the upstream finished the body"
    LIMIT = "the event limit was reached"
    CUT = "the stream was cut from outside"
    BROKEN = "the upstream connection broke mid-body"


def stream_body(
    body: Body,
    send: Callable[[bytes], None],
    limit: EventLimit | None,
    is_cut: Callable[[], bool],
) -> Ending:
    """Copy the body piece by piece as it arrives; :class:`ClientGone` from ``send`` propagates."""
    while True:
        try:
            data = body.read()
        except (OSError, ProtocolError):
            return Ending.CUT if is_cut() else Ending.BROKEN
        if not data:
            # A cut socket reads as an end: only is_cut tells it from a body that was complete.
            return Ending.CUT if is_cut() else Ending.COMPLETE
        if limit is not None:
            end = limit.cut(data)
            if end is not None:
                if end:
                    send(data[:end])
                return Ending.LIMIT
        send(data)
