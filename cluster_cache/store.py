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
#: Seconds a deletion is remembered: as long as the cache's overlay keeps a write (cache.OVERLAY_SECONDS).
DELETED_MEMORY = 60.0


def object_key(obj: Wire) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def resource_version(obj: Wire) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class TargetStore:
    """Objects by key, indexed by namespace, with a served flag (the kind answered its last list)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._objects: dict[Key, Wire] = {}
        self._by_namespace: dict[str, dict[str, Wire]] = {}
        #: None until the first list answered; then whether the kind is served (False: 404, no CRD).
        self.served: bool | None = None
        #: The resourceVersion each object was deleted at, for a while (see :meth:`deleted_at`).
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
        """Forget an object; ``version``: the resourceVersion of its deletion, remembered a while."""
        with self._changed:
            now = time.monotonic()
            if version:
                self._deleted[key] = (version, now)
            if len(self._deleted) > 1024:  # bounded memory under churn: forget the old ones
                self._deleted = {k: v for k, v in self._deleted.items() if now - v[1] < DELETED_MEMORY}
            self._objects.pop(key, None)
            names = self._by_namespace.get(key[0])
            if names is not None:
                names.pop(key[1], None)
                if not names:
                    del self._by_namespace[key[0]]
            self._changed.notify_all()

    # --- readers -------------------------------------------------------------------------------------

    def get(self, key: Key) -> Wire | None:
        with self._changed:
            return self._objects.get(key)

    def deleted_at(self, key: Key) -> str | None:
        """The resourceVersion at which the watch saw this object deleted (recently), if it did and the
        object has not come back since: a write of it older than that is history, not news."""
        with self._changed:
            found = self._deleted.get(key)
            return found[0] if found is not None and key not in self._objects else None

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
