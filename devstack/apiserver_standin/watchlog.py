"""The bounded in-memory event log that watches are served from.

Every stored change gets the next global resourceVersion and one :class:`Event`. The log keeps the
newest ``capacity`` events; a watch that asks to resume from a version older than the oldest event
still held is answered ``410 Gone`` (reason ``Expired``), as a real server answers once etcd compacted.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from apiserver_standin.errors import gone
from apiserver_standin.registry import GroupResource


@dataclass(frozen=True)
class Event:
    rv: int
    group_resource: GroupResource
    type: str  # ADDED, MODIFIED or DELETED
    obj: dict[str, Any]
    # The previous state of a MODIFIED object: lets a filtered watch turn it into ADDED/DELETED.
    old: dict[str, Any] | None = None


class WatchLog:
    """Not thread-safe by itself: the store calls it under its lock."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("the watch log needs room for at least one event")
        self.capacity = capacity
        self._events: deque[Event] = deque()
        # Highest resourceVersion whose event is no longer held (0: nothing dropped yet).
        self.compacted_rv = 0

    def append(self, event: Event) -> None:
        if len(self._events) >= self.capacity:
            self.compacted_rv = self._events.popleft().rv
        self._events.append(event)

    def check(self, rv: int) -> None:
        if rv < self.compacted_rv:
            raise gone(f"too old resource version: {rv} ({self.compacted_rv + 1})")

    def since(self, rv: int) -> list[Event]:
        """Events newer than ``rv``, oldest first; 410 when some of them were dropped."""
        self.check(rv)
        newer: list[Event] = []
        # Walk back from the newest: a caught-up watcher only pays for what is new.
        for event in reversed(self._events):
            if event.rv <= rv:
                break
            newer.append(event)
        newer.reverse()
        return newer

    def compact(self, keep: int = 0) -> None:
        """Drop all but the newest ``keep`` events (tests use it to force a 410)."""
        while len(self._events) > keep:
            self.compacted_rv = self._events.popleft().rv
