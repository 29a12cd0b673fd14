"""What one list+watch loop knows: the objects of its collection, by key and by namespace. Thread-safe.

The loop's thread writes (a relist replaces everything, a watch event puts or removes one object); any
thread reads. Readers get the stored dicts themselves, never copies: the core never mutates what it
reads (``PassWorld`` copies before it writes), and a copy per read would cost more than the pass.
Every change wakes the threads waiting in :meth:`TargetStore.wait` (the cache's "caught up to version
X" barrier).

Indexes, as client-go's ``Indexer`` keeps them: :meth:`TargetStore.add_index` names a function from an
object to the values it is found under, and every put, relist and removal keeps the index in step, so
:meth:`TargetStore.by_index` answers without walking the objects. An index function may read other
stores (the one of what a service uses reads its routes and configs): it runs under the store's own index
lock, never under another store's, and :meth:`TargetStore.reindex` runs it again for an object when what
it read has changed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

Wire = dict[str, Any]
Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects
IndexFn = Callable[[Wire], Iterable[str]]


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
        #: Held while index values are computed and stored: an index function may read other stores, so
        #: it must not run under ``_changed`` (which readers of this store wait on).
        self._indexing = threading.RLock()
        self._index_fns: dict[str, IndexFn] = {}
        self._indexed: dict[str, dict[Key, frozenset[str]]] = {}  # index -> key -> its values
        self._indices: dict[str, dict[str, set[Key]]] = {}  # index -> value -> keys

    # --- the loop's side -----------------------------------------------------------------------------

    def replace_all(self, objects: dict[Key, Wire], served: bool = True) -> None:
        by_namespace: dict[str, dict[str, Wire]] = {}
        for (namespace, name), obj in objects.items():
            by_namespace.setdefault(namespace, {})[name] = obj
        with self._indexing:
            values = {key: self._values(obj) for key, obj in objects.items()}
            with self._changed:
                self._objects = dict(objects)
                self._by_namespace = by_namespace
                self.served = served
                for key in set(self._indexed_keys()) - set(objects):
                    self._unindex(key)
                for key, found in values.items():
                    self._index(key, found)
                self._changed.notify_all()

    def put(self, key: Key, obj: Wire) -> None:
        with self._indexing:
            values = self._values(obj)
            with self._changed:
                self._objects[key] = obj
                self._by_namespace.setdefault(key[0], {})[key[1]] = obj
                self._index(key, values)
                self._changed.notify_all()

    def remove(self, key: Key, version: str = "") -> None:
        with self._indexing, self._changed:
            self._unindex(key)
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

    # --- indexes -------------------------------------------------------------------------------------

    def add_index(self, name: str, fn: IndexFn) -> None:
        """Index every object, now and on each later change, under the values ``fn`` gives it."""
        with self._indexing:
            self._index_fns[name] = fn
            objects = self.snapshot()
            values = {key: frozenset(fn(obj)) for key, obj in objects.items()}
            with self._changed:
                self._indexed[name], self._indices[name] = {}, {}
                for key, found in values.items():
                    self._index(key, {name: found})

    def reindex(self, key: Key) -> None:
        """Run the index functions again for ``key`` (something they read of other objects changed)."""
        with self._indexing:
            obj = self.get(key)
            if obj is None:
                return
            values = self._values(obj)
            with self._changed:
                if self._objects.get(key) is obj:
                    self._index(key, values)

    def by_index(self, name: str, value: str) -> list[Wire]:
        """The objects the index ``name`` finds under ``value``."""
        with self._changed:
            keys = self._indices.get(name, {}).get(value, ())
            return [self._objects[k] for k in sorted(keys) if k in self._objects]

    def _values(self, obj: Wire) -> dict[str, frozenset[str]]:
        return {name: frozenset(fn(obj)) for name, fn in self._index_fns.items()}

    def _indexed_keys(self) -> set[Key]:
        return {key for keys in self._indexed.values() for key in keys}

    def _index(self, key: Key, values: dict[str, frozenset[str]]) -> None:
        """Move ``key`` to ``values`` in each index (``_changed`` held)."""
        for name, found in values.items():
            before = self._indexed[name].get(key, frozenset())
            users = self._indices[name]
            for value in before - found:
                _discard(users, value, key)
            for value in found - before:
                users.setdefault(value, set()).add(key)
            if found:
                self._indexed[name][key] = found
            else:
                self._indexed[name].pop(key, None)

    def _unindex(self, key: Key) -> None:
        self._index(key, {name: frozenset() for name in self._index_fns})

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


def _discard(users: dict[str, set[Key]], value: str, key: Key) -> None:
    keys = users.get(value)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del users[value]  # an index of what is used now, not of everything ever used
