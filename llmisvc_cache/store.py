"""What one list+watch loop knows: the objects of its collection, by key and by namespace. Thread-safe.

The loop's thread writes (a relist replaces everything, a watch event puts or removes one object); any
thread reads. Readers get the stored dicts themselves, never copies: the core never mutates what it
reads (``PassWorld`` copies before it writes), and a copy per read would cost more than the pass.
Every change wakes the threads waiting in :meth:`TargetStore.wait` (the cache's "caught up to version
X" barrier).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

Wire = dict[str, Any]
Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


def object_key(obj: Wire) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def resource_version(obj: Wire) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


#: How many deletions a store remembers the version of (the oldest are forgotten first).
DELETIONS_KEPT = 4096
#: Seconds a deletion counts against a write of the same object: as long as the cache's overlay keeps a
#: write (cache.OVERLAY_SECONDS).
DELETED_MEMORY = 60.0


class TargetStore:
    """Objects by key, indexed by namespace, with a served flag (the kind answered its last list)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._objects: dict[Key, Wire] = {}
        self._by_namespace: dict[str, dict[str, Wire]] = {}
        #: None until the first list answered; then whether the kind is served (False: 404, no CRD).
        self.served: bool | None = None
        #: The version of the latest deletion the watch delivered per key, so that a freshness wait for a
        #: version that was then deleted ends (the object is gone, and newer than what was waited for).
        #: With the time it was seen, for :meth:`deleted_at`.
        self._deleted: dict[Key, tuple[str, float]] = {}

    # --- the loop's side -----------------------------------------------------------------------------

    def replace_all(self, objects: dict[Key, Wire], served: bool = True) -> None:
        by_namespace: dict[str, dict[str, Wire]] = {}
        for (namespace, name), obj in objects.items():
            by_namespace.setdefault(namespace, {})[name] = obj
        with self._changed:
            self._objects = dict(objects)
            self._by_namespace = by_namespace
            self.served = served
            self._changed.notify_all()

    def put(self, key: Key, obj: Wire) -> None:
        with self._changed:
            self._objects[key] = obj
            self._by_namespace.setdefault(key[0], {})[key[1]] = obj
            self._changed.notify_all()

    def remove(self, key: Key, version: str = "") -> None:
        with self._changed:
            self._objects.pop(key, None)
            if version:
                self._deleted.pop(key, None)
                self._deleted[key] = (version, time.monotonic())
                if len(self._deleted) > DELETIONS_KEPT:
                    del self._deleted[next(iter(self._deleted))]  # the oldest deletion
            names = self._by_namespace.get(key[0])
            if names is not None:
                names.pop(key[1], None)
                if not names:
                    del self._by_namespace[key[0]]
            self._changed.notify_all()

    # --- readers -------------------------------------------------------------------------------------

    def deleted_version(self, key: Key) -> str:
        """The version of the latest deletion of ``key`` the watch delivered ("" if none is known)."""
        with self._changed:
            found = self._deleted.get(key)
            return found[0] if found is not None else ""

    def deleted_at(self, key: Key) -> str | None:
        """The resourceVersion at which the watch saw this object deleted (recently), if it did and the
        object has not come back since: a write of it older than that is history, not news."""
        with self._changed:
            found = self._deleted.get(key)
            if found is None or key in self._objects or time.monotonic() - found[1] > DELETED_MEMORY:
                return None
            return found[0]

    def get(self, key: Key) -> Wire | None:
        with self._changed:
            return self._objects.get(key)

    def in_namespace(self, namespace: str) -> list[Wire]:
        with self._changed:
            return list(self._by_namespace.get(namespace, {}).values())

    def snapshot(self) -> dict[Key, Wire]:
        with self._changed:
            return dict(self._objects)

    def __len__(self) -> int:
        with self._changed:
            return len(self._objects)

    def wait(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Block until ``ready()`` holds (checked after every change) or ``timeout`` seconds passed."""
        with self._changed:
            return self._changed.wait_for(ready, timeout)
