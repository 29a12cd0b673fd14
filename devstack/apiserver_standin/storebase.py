"""The store's state and its write primitive, shared by the read/write and the deletion layers.

Locking rule: every method whose name ends in ``_locked``, and :meth:`StoreState._record`, expects
the caller to hold ``self.cond``. Watch streams only hold it while collecting events, never while
blocked on the network.
"""

from __future__ import annotations

import threading
import time

from apiserver_standin import objects as o
from apiserver_standin.registry import GroupResource, Registry
from apiserver_standin.watchlog import Event, WatchLog

Obj = o.Obj
CRD_RESOURCE: GroupResource = ("apiextensions.k8s.io", "customresourcedefinitions")
NAMESPACES: GroupResource = ("", "namespaces")


class StoreState:
    def __init__(self, registry: Registry, watch_log_size: int = 10_000) -> None:
        self.registry = registry
        self.cond = threading.Condition(threading.Lock())
        self.log = WatchLog(watch_log_size)
        self._rv = 0
        # group/resource -> namespace ("" if cluster-scoped) -> name -> object
        self._objects: dict[GroupResource, dict[str, dict[str, Obj]]] = {}
        self._by_uid: dict[str, tuple[GroupResource, str, str]] = {}
        # owner uid -> uids of the objects whose ownerReferences name it
        self._dependents: dict[str, set[str]] = {}
        # namespaces being terminated -> when the namespace controller empties them (monotonic)
        self._terminating: dict[str, float] = {}
        self.namespace_cleanup_delay = 0.0
        # owner uids the garbage collector is to look at -> when (monotonic); see garbage_collector.py
        self._gc_due: dict[str, float] = {}
        self.gc_delay = 0.0
        # Set when a controller (namespace, garbage collector) has work: its thread wakes at once.
        self.controllers_wakeup = threading.Event()

    def current_rv(self) -> int:
        with self.cond:
            return self._rv

    def count(self) -> int:
        with self.cond:
            return sum(len(objs) for buckets in self._objects.values() for objs in buckets.values())

    def compact(self) -> None:
        """Forget every logged event, so a watch from any older resourceVersion gets 410 Gone."""
        with self.cond:
            self.log.compact()
            self.log.compacted_rv = self._rv

    def _lookup(self, gr: GroupResource, namespace: str, name: str) -> Obj | None:
        return self._objects.get(gr, {}).get(namespace, {}).get(name)

    def _lookup_uid(self, uid: str) -> tuple[GroupResource, Obj] | None:
        key = self._by_uid.get(uid)
        if key is None:
            return None
        obj = self._lookup(*key)
        return (key[0], obj) if obj is not None else None

    def _record(self, gr: GroupResource, type_: str, obj: Obj, old: Obj | None) -> Obj:
        """Stamp the next resourceVersion on ``obj``, (un)index it and log the event."""
        self._rv += 1
        obj = {**obj, "metadata": {**o.meta(obj), "resourceVersion": str(self._rv)}}
        m = obj["metadata"]
        namespace, name, uid = m.get("namespace", ""), m["name"], m["uid"]
        if old is not None:
            for owner in o.owner_uids(old):
                self._dependents.get(owner, set()).discard(uid)
        if type_ == "DELETED":
            del self._objects[gr][namespace][name]
            self._by_uid.pop(uid, None)
        else:
            self._objects.setdefault(gr, {}).setdefault(namespace, {})[name] = obj
            self._by_uid[uid] = (gr, namespace, name)
            for owner in o.owner_uids(obj):
                self._dependents.setdefault(owner, set()).add(uid)
        self.log.append(Event(self._rv, gr, type_, obj, old))
        self.cond.notify_all()
        return obj

    def wait_events(self, after_rv: int, timeout: float) -> tuple[list[Event], int]:
        """Events newer than ``after_rv`` (waiting up to ``timeout`` for one) and the newest version."""
        with self.cond:
            if self._rv <= after_rv and timeout > 0:
                self.cond.wait(timeout)
            return self.log.since(after_rv), self._rv

    def _schedule_gc_locked(self, uid: str, delay: float | None = None) -> None:
        """Have the garbage collector look at ``uid`` (a removed owner, or one held by
        ``orphan``/``foregroundDeletion``) after ``delay`` (default: ``gc_delay``)."""
        due = time.monotonic() + (self.gc_delay if delay is None else delay)
        self._gc_due[uid] = min(due, self._gc_due.get(uid, due))
        self.controllers_wakeup.set()

    def wake_all(self) -> None:
        with self.cond:
            self.cond.notify_all()
