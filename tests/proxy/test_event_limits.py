"""Where the Nth watch event ends, however the stream is cut into pieces on the wire."""

from __future__ import annotations

import pytest

from llmisvc_devstack.proxy.relay import LengthFramedEvents, LineEvents, event_limit


def sent_before_limit(limit: LineEvents | LengthFramedEvents, pieces: list[bytes]) -> bytes | None:
    """What is sent of the pieces before the limit ends the stream; None if it never does."""
    sent = b""
    for piece in pieces:
        end = limit.cut(piece)
        if end is not None:
            return sent + piece[:end]
        sent += piece
    return None


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


LINES = b'{"type":"ADDED"}\n{"type":"MODIFIED"}\n{"type":"DELETED"}\n'
FRAMES = frame(b"first") + frame(b"") + frame(b"third!")


def split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [1, 3, 7, len(LINES)], ids=lambda s: f"pieces-of-{s}")
@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_json_watch_ends_after_the_nth_newline(n: int, size: int) -> None:
    expected = b"".join(line + b"\n" for line in LINES.split(b"\n")[:n])
    assert sent_before_limit(LineEvents(n), split(LINES, size)) == expected


@pytest.mark.parametrize("size", [1, 2, 5, len(FRAMES)], ids=lambda s: f"pieces-of-{s}")
@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_protobuf_watch_ends_after_the_nth_length_prefixed_frame(n: int, size: int) -> None:
    frames = [frame(b"first"), frame(b""), frame(b"third!")]
    assert sent_before_limit(LengthFramedEvents(n), split(FRAMES, size)) == b"".join(frames[:n])


def test_a_stream_with_fewer_events_than_the_limit_is_not_cut() -> None:
    assert sent_before_limit(LineEvents(4), split(LINES, 5)) is None
    assert sent_before_limit(LengthFramedEvents(4), split(FRAMES, 5)) is None


def test_a_limit_of_zero_sends_nothing() -> None:
    assert sent_before_limit(LineEvents(0), [LINES]) == b""


@pytest.mark.parametrize(
    ("content_type", "kind"),
    [
        ("application/json", LineEvents),
        ("application/vnd.kubernetes.protobuf;stream=watch", LengthFramedEvents),
        ("application/vnd.kubernetes.protobuf", LineEvents),  # not a watch stream's framing
    ],
)
def test_the_framing_follows_the_watch_streams_content_type(content_type: str, kind: type) -> None:
    assert isinstance(event_limit(1, content_type), kind)
