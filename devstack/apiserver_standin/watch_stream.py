"""Watch streams: newline-delimited JSON events over a chunked HTTP/1.1 response.

A stream starts from the current state (synthetic ADDED events) when no resourceVersion (or "0") is
given, else from the log after that version; too old a version yields an in-stream ERROR event with a
410 ``Expired`` Status, as a real server sends it. The store lock is held only while collecting events.
"""

from __future__ import annotations

import io
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from apiserver_standin.api import ApiRequest, predicate_of
from apiserver_standin.errors import ApiError, bad_request
from apiserver_standin.objects import meta, with_api_version
from apiserver_standin.registry import ResourceInfo
from apiserver_standin.selectors import Predicate
from apiserver_standin.store import Store
from apiserver_standin.watchlog import Event

# How often a quiet stream wakes to check for shutdown, its deadline and bookmarks.
_POLL_SECONDS = 0.25


class StreamClosed(Exception):  # noqa: N818 - a normal end of a stream, not an error
    """The client went away, or a fault rule dropped the stream."""


@dataclass
class WatchSettings:
    default_timeout: float = 1800.0
    bookmark_interval: float = 1.0


class ChunkedEvents:
    """Writes events as HTTP chunks; ``limit`` events (from a drop-watch fault) end the stream."""

    def __init__(self, out: io.BufferedIOBase, limit: int | None) -> None:
        self._out = out
        self.limit = limit
        self.sent = 0
        self.dropped = False

    def check(self) -> None:
        if self.limit is not None and self.sent >= self.limit:
            self.dropped = True
            raise StreamClosed("dropped by a fault rule")

    def send(self, type_: str, obj: dict[str, Any]) -> None:
        self.check()
        data = json.dumps({"type": type_, "object": obj}, separators=(",", ":")).encode() + b"\n"
        try:
            self._out.write(b"%x\r\n%s\r\n" % (len(data), data))
        except OSError as exc:
            raise StreamClosed(str(exc)) from exc
        self.sent += 1


def translate(
    event: Event, info: ResourceInfo, namespace: str | None, predicate: Predicate | None
) -> str | None:
    """The event type this watcher sees, or None. A change into/out of a selector is ADDED/DELETED."""
    if event.group_resource != info.group_resource:
        return None
    if namespace is not None and meta(event.obj).get("namespace") != namespace:
        return None
    if predicate is None:
        return event.type
    now_matches = predicate(event.obj)
    if event.type != "MODIFIED" or event.old is None:
        return event.type if now_matches else None
    old_matches = predicate(event.old)
    if now_matches:
        return "MODIFIED" if old_matches else "ADDED"
    return "DELETED" if old_matches else None


def _bookmark(info: ResourceInfo, rv: int, initial_end: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        metadata["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {"kind": info.kind, "apiVersion": info.api_version, "metadata": metadata}


def _timeout(req: ApiRequest, settings: WatchSettings) -> float:
    raw = req.query.get("timeoutSeconds")
    try:
        return float(raw) if raw else settings.default_timeout
    except ValueError as exc:
        raise bad_request(f"invalid timeoutSeconds: {raw}") from exc


def start_rv(req: ApiRequest) -> int | None:
    """None: start from the current state; else the version to resume after (400 if malformed)."""
    raw = req.query.get("resourceVersion", "")
    if raw in ("", "0") or req.flag("sendInitialEvents"):
        return None
    try:
        return int(raw)
    except ValueError as exc:
        raise bad_request(f"invalid resourceVersion: {raw}") from exc


def validate_watch(req: ApiRequest, info: ResourceInfo) -> None:
    """400 for a malformed watch query (checked before the 200 and the first chunk are sent)."""
    start_rv(req)
    _timeout(req, WatchSettings())
    predicate_of(req.query, info)


def stream(
    store: Store,
    info: ResourceInfo,
    req: ApiRequest,
    out: ChunkedEvents,
    stopping: threading.Event,
    settings: WatchSettings,
) -> None:
    """Serve one watch until its timeout, server shutdown, a 410, or the client leaves."""
    predicate = predicate_of(req.query, info)
    namespace = req.info.namespace
    deadline = time.monotonic() + _timeout(req, settings)
    bookmarks = req.flag("allowWatchBookmarks")
    last_rv = start_rv(req)
    if last_rv is None:
        page = store.list(info, namespace, predicate)
        for obj in page.items:
            out.send("ADDED", obj)
        last_rv = page.resource_version
        if req.flag("sendInitialEvents") and bookmarks:
            out.send("BOOKMARK", _bookmark(info, last_rv, initial_end=True))
    next_bookmark = time.monotonic() + settings.bookmark_interval
    while not stopping.is_set():
        out.check()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        try:
            events, top = store.wait_events(last_rv, min(remaining, _POLL_SECONDS))
        except ApiError as exc:  # 410: the log no longer holds what this watcher needs
            out.send("ERROR", exc.status())
            return
        for event in events:
            seen = translate(event, info, namespace, predicate)
            if seen is not None:
                out.send(seen, with_api_version(event.obj, info))
        last_rv = top
        if bookmarks and time.monotonic() >= next_bookmark:
            out.send("BOOKMARK", _bookmark(info, last_rv))
            next_bookmark = time.monotonic() + settings.bookmark_interval
