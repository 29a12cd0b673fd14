"""Message heads and bodies are read as RFC 9112 frames them, however they arrive on the wire."""

from __future__ import annotations

import io

import pytest

from llmisvc_devstack.proxy.wire import Body, Head, ProtocolError, content_length, is_chunked, read_head


class Trickle(io.RawIOBase):
    """A connection that delivers a few bytes per read, as a slow network may."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data, self._step = data, step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        piece, self._data = (
            self._data[: min(self._step, len(buffer))],
            self._data[min(self._step, len(buffer)) :],
        )
        buffer[: len(piece)] = piece
        return len(piece)


def reader(data: bytes, step: int = 0) -> io.BufferedReader:
    return io.BufferedReader(Trickle(data, step) if step else io.BytesIO(data))


HEAD = b"GET /api/v1/pods HTTP/1.1\r\nHost: h\r\nAccept: a\r\naccept: b\r\nUser-Agent:  u/1 \r\n\r\n"


@pytest.mark.parametrize("step", [0, 1, 7], ids=["at-once", "byte-by-byte", "in-pieces"])
def test_a_head_keeps_its_fields_in_order_and_indexes_them_case_blind(step: int) -> None:
    head = read_head(reader(HEAD + b"rest", step))
    assert head == Head(
        "GET /api/v1/pods HTTP/1.1",
        [("Host", "h"), ("Accept", "a"), ("accept", "b"), ("User-Agent", "u/1")],
        {"host": "h", "accept": "a, b", "user-agent": "u/1"},
    )


def test_empty_lines_before_a_request_are_ignored() -> None:
    head = read_head(reader(b"\r\n\r\n" + HEAD))
    assert head is not None and head.start == "GET /api/v1/pods HTTP/1.1"


def test_a_connection_that_ends_between_messages_has_no_next_head() -> None:
    assert read_head(reader(b"")) is None


@pytest.mark.parametrize(
    "data",
    [
        b"GET / HTTP/1.1\r\nHost: h\r\n",  # ends inside the head
        b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: h\r\n folded: value\r\n\r\n",  # obsolete line folding
        b"GET / HTTP/1.1\r\nName : spaced\r\n\r\n",
        b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 300 + b"\r\n",
    ],
    ids=["truncated", "no-colon", "folded", "space-before-colon", "too-many-fields"],
)
def test_a_malformed_head_is_refused(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        read_head(reader(data))


def fields(*pairs: tuple[str, str]) -> Head:
    return Head("", list(pairs), {k.lower(): v for k, v in pairs})


def test_conflicting_content_lengths_are_refused_and_repeated_equal_ones_accepted() -> None:
    assert content_length(fields(("Content-Length", "5, 5"))) == 5
    with pytest.raises(ProtocolError):
        content_length(fields(("Content-Length", "5, 6")))
    with pytest.raises(ProtocolError):
        content_length(fields(("Content-Length", "-1")))


def test_chunked_is_the_final_transfer_coding_or_nothing() -> None:
    assert is_chunked(fields(("Transfer-Encoding", "gzip, chunked")))
    assert not is_chunked(fields(("Transfer-Encoding", "chunked, gzip")))


CHUNKED = b"5\r\nhello\r\n1;ext=x\r\n \r\n5\r\nworld\r\n0\r\nTrailer: t\r\n\r\nNEXT"


@pytest.mark.parametrize("step", [0, 1, 4], ids=["at-once", "byte-by-byte", "in-pieces"])
def test_a_chunked_body_is_read_to_its_last_chunk_and_no_further(step: int) -> None:
    rfile = reader(CHUNKED, step)
    body = Body(rfile, None, chunked=True)
    assert body.read_all() == b"hello world"
    assert body.done and rfile.read() == b"NEXT"


def test_a_length_delimited_body_is_read_to_its_length_and_no_further() -> None:
    rfile = reader(b"0123456789NEXT", 3)
    body = Body(rfile, 10, chunked=False)
    pieces = []
    while piece := body.read():
        pieces.append(piece)
    assert b"".join(pieces) == b"0123456789" and body.done and rfile.read() == b"NEXT"


def test_a_body_without_length_or_chunks_lasts_until_the_connection_ends() -> None:
    assert Body(reader(b"all of it", 2), None, chunked=False).read_all() == b"all of it"


@pytest.mark.parametrize(
    ("data", "length", "chunked"),
    [
        (b"0123", 10, False),
        (b"5\r\nhel", None, True),
        (b"5\r\nhelloXX3\r\n", None, True),
        (b"z\r\n", None, True),
    ],
    ids=["short-length", "short-chunk", "chunk-overrun", "bad-chunk-size"],
)
def test_a_truncated_or_misframed_body_is_an_error(data: bytes, length: int | None, chunked: bool) -> None:
    with pytest.raises(ProtocolError):
        Body(reader(data), length, chunked).read_all()
