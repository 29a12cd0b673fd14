"""The cluster cache: an informer per collection the router reads, shared by every activity of a worker
process and by the watcher (``llmisvc-router run`` holds one cache, not two).

Reads come from the watch loops' stores, seen through an overlay of the process's own writes (client-go's
mutation cache): an object this process just wrote is read back at the version the API server returned,
until the watch delivers that version or a newer one, so a pass never plans from a state older than its
own last write. The overlay also holds objects read live because the cache could not answer for them
(outside a label selector), for a short while.

:meth:`ClusterCache.wait_for` is the freshness barrier: a signal says "I saw HTTPRoute x at version 12",
and the pass waits until the cache has version 12 (or newer) before it plans. Which kinds are installed
is known from the loops themselves: a kind whose list answered 404 is not served (no CRD); a CRD event
wakes every loop so a newly installed kind is listed at once. kube-apiserver serves a custom resource
moments after its CRD is Established, so a kind whose CRD the cache holds as Established, but whose loop
has not listed it yet, is waited for (up to :data:`SERVED_WAIT`, once per version of the CRD) instead of
read as absent: a pass signalled by the CRD's event would otherwise plan without it, and nothing would
signal it again.

Indexes (client-go's ``AddIndexers``/``ByIndex``): :meth:`ClusterCache.add_index` indexes every store of a
kind, now and in loops added later, and keeps the index in step with every add, update and delete;
:meth:`ClusterCache.by_index` answers "the services using this object" for the watcher's trigger rules
(``llmisvc_core.triggers``), which read the cluster through this cache and keep no copy of their own.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from llmisvc_cache.model import DELETED, LoopHealth, SeenVersion, Tuning, WatchEvent, WatchTarget, Wire
from llmisvc_cache.store import IndexFn, TargetStore, object_key, resource_version
from llmisvc_cache.watch_loop import ResourceWatch
from llmisvc_core.models import kube
from llmisvc_core.models.kube import BUILTIN_TYPES, ObjectKey, ResourceType
from llmisvc_kube.client import ApiClient

Listener = Callable[[WatchEvent], None]
#: How long an overlay entry may stand in for the watch (a written object outside every selector, or a
#: watch that lags this much): then the store is the truth again.
OVERLAY_SECONDS = 60.0
#: How long a read waits for a kind whose CRD is Established to be listed as served by its loop.
#: Once per version of the CRD: a loop that still cannot list the kind (refused, say) is not waited for
#: again by every read of every pass.
SERVED_WAIT = 5.0


@dataclass
class _Written:
    obj: Wire | None  # None: deleted, or read live and absent
    version: str  # the written version; for a delete, the last version known before it; "" if absent
    expires: float


def at_least(version: str, wanted: str) -> bool:
    """resourceVersions are opaque, but every real server (etcd) and the stand-in issue integers."""
    if version.isdigit() and wanted.isdigit():
        return int(version) >= int(wanted)
    return version == wanted


def _selector_terms(selector: str | None) -> dict[str, str | None]:
    """``a=b,c`` -> {a: b, c: None} (None: the label must exist). Only the forms the targets use."""
    terms: dict[str, str | None] = {}
    for term in filter(None, (t.strip() for t in (selector or "").split(","))):
        key, sep, value = term.partition("=")
        terms[key.strip()] = value.strip() if sep else None
    return terms


def _has_labels(obj: Wire, labels: Mapping[str, str]) -> bool:
    have = (obj.get("metadata") or {}).get("labels") or {}
    return all(have.get(k) == v for k, v in labels.items())


class Loop(Protocol):
    """What the cache needs of a list+watch loop (:class:`~llmisvc_cache.watch_loop.ResourceWatch`)."""

    target: WatchTarget
    store: TargetStore
    synced: threading.Event

    def start(self) -> object: ...

    def wake(self) -> None: ...

    def stop(self) -> None: ...

    def join(self, timeout: float) -> bool: ...

    def health(self) -> LoopHealth: ...


LoopFactory = Callable[[ApiClient, WatchTarget, Listener, Tuning], Loop]


class ClusterCache:
    """Watch loops over :class:`WatchTarget` collections; reads, indexes, freshness waits and a write
    overlay. ``loop`` makes the loops (tests give loops that list nothing)."""

    def __init__(
        self, api_client: ApiClient, tuning: Tuning | None = None, loop: LoopFactory = ResourceWatch
    ) -> None:
        self._api_client = api_client
        self._tuning = tuning or Tuning()
        self._make_loop = loop
        self._loops: list[Loop] = []
        self._by_type: dict[ResourceType, list[Loop]] = {}
        self._indexes: list[tuple[ResourceType, str, IndexFn]] = []
        self._listeners: list[Listener] = []
        self._overlay: dict[ObjectKey, _Written] = {}
        self._lock = threading.Lock()
        #: The CRD resourceVersion each kind was last waited for at (see :meth:`is_installed`).
        self._waited: dict[ResourceType, str] = {}

    # --- lifecycle -----------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` (from a loop thread) for every change; subscribe before :meth:`add`."""
        self._listeners.append(listener)

    def add(self, targets: Iterable[WatchTarget]) -> builtins.list[Loop]:
        """Start a loop per target not already watched; the new loops."""
        known = {loop.target for loop in self._loops}
        fresh = [
            self._make_loop(self._api_client, t, self._emit, self._tuning) for t in targets if t not in known
        ]
        with self._lock:
            for loop in fresh:
                for type_, name, fn in self._indexes:
                    if type_ == loop.target.resource:
                        loop.store.add_index(name, fn)
                self._loops.append(loop)
                self._by_type.setdefault(loop.target.resource, []).append(loop)
        for loop in fresh:
            loop.start()
        return fresh

    def add_index(self, type_: ResourceType, name: str, fn: IndexFn) -> None:
        """Index the objects of ``type_`` under the values ``fn`` gives each, in every loop of that kind,
        kept in step with every add, update and delete. Add before the loops, or they are indexed now."""
        with self._lock:
            self._indexes.append((type_, name, fn))
            loops = builtins.list(self._by_type.get(type_, ()))
        for loop in loops:
            loop.store.add_index(name, fn)

    def watched(self) -> Watched:
        """This cache as the watch delivered it, without the overlay (:class:`Watched`)."""
        return Watched(self)

    @property
    def loops(self) -> Sequence[Loop]:
        return tuple(self._loops)

    def is_synced(self) -> bool:
        return all(loop.synced.is_set() for loop in self._loops)

    def wait_synced(self, timeout: float) -> bool:
        """Wait until every loop has listed once (or found its kind not served)."""
        deadline = time.monotonic() + timeout
        return all(loop.synced.wait(max(0.0, deadline - time.monotonic())) for loop in self.loops)

    def health(self) -> builtins.list[LoopHealth]:
        """Each loop's progress, for the readiness probe (``llmisvc_runtime.health``)."""
        return [loop.health() for loop in self.loops]

    def unsynced(self) -> builtins.list[str]:
        return [str(loop.target) for loop in self._loops if not loop.synced.is_set()]

    def stop(self) -> None:
        for loop in self._loops:
            loop.stop()

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for loop in self._loops:
            loop.join(max(0.0, deadline - time.monotonic()))

    def _emit(self, event: WatchEvent) -> None:
        self._settle(_key(event.resource, event.namespace, event.name), resource_version(event.obj))
        if event.resource == kube.CRD and event.type != DELETED and not event.initial:
            for loop in self.loops:
                loop.wake()  # a kind a loop is polling for may be served now: list it without waiting
        for listener in self._listeners:
            listener(event)

    # --- reads ---------------------------------------------------------------------------------------

    def is_installed(self, type_: ResourceType) -> bool:
        if type_ in BUILTIN_TYPES:
            return True
        loops = self._by_type.get(type_, ())
        if any(loop.store.served for loop in loops):
            return True
        if not loops:
            return False
        crd_version = self._established(type_)
        if crd_version is None or self._waited.get(type_) == crd_version:
            return False
        self._waited[type_] = crd_version
        for loop in loops:
            loop.wake()  # list it now, and back off from the first step again
        loops[0].store.wait(lambda: bool(loops[0].store.served), SERVED_WAIT)
        return any(loop.store.served for loop in loops)

    def _established(self, type_: ResourceType) -> str | None:
        """The resourceVersion of ``type_``'s CRD when the cache holds it Established, serving that
        version, and not being deleted; else None."""
        crd = self._stored(ObjectKey(kube.CRD, "", type_.crd_name))
        if crd is None or (crd.get("metadata") or {}).get("deletionTimestamp"):
            return None
        if not kube.crd_established(crd):
            return None
        versions = (crd.get("spec") or {}).get("versions") or []
        if not any(v.get("name") == type_.version and v.get("served") for v in versions):
            return None
        return resource_version(crd)

    def covers(self, type_: ResourceType, namespace: str, name: str) -> bool:
        """Whether an absence in the cache means the object does not exist (no selector hides it)."""
        return any(
            _in_scope(loop.target, namespace)
            and not loop.target.label_selector
            and loop.target.field_selector in (None, f"metadata.name={name}")
            for loop in self._by_type.get(type_, ())
        )

    def covers_list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> bool:
        """Whether the cache holds every object of a list with these labels (its selector is implied)."""
        for loop in self._by_type.get(type_, ()):
            if not _in_scope(loop.target, namespace) or loop.target.field_selector:
                continue
            terms = _selector_terms(loop.target.label_selector)
            if all(k in labels and (v is None or labels[k] == v) for k, v in terms.items()):
                return True
        return False

    def knows(self, type_: ResourceType, namespace: str, name: str) -> bool:
        """Whether :meth:`get` answers for this object: cached, remembered, or covered by a selector-free
        loop (so that an absence means the object does not exist)."""
        key = ObjectKey(type_, namespace if type_.namespaced else "", name)
        if self.covers(type_, namespace, name) or self._stored(key) is not None:
            return True
        self.get(type_, namespace, name)  # drops an entry the watch has caught up with
        with self._lock:
            return key in self._overlay

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        key = ObjectKey(type_, namespace if type_.namespaced else "", name)
        stored = self._stored(key)
        with self._lock:
            written = self._overlay.get(key)
            if written is None:
                return stored
            if self._superseded(key, written, stored):
                return stored
            return written.obj

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        found: dict[str, Wire] = {}
        for loop in self._by_type.get(type_, ()):
            if _in_scope(loop.target, namespace):
                for obj in loop.store.in_namespace(namespace):
                    found[(obj.get("metadata") or {}).get("name") or ""] = obj
        with self._lock:
            written = [k.name for k in self._overlay if k.type == type_ and k.namespace == namespace]
        for name in written:
            current = self.get(type_, namespace, name)  # the overlay rule, one object at a time
            if current is None:
                found.pop(name, None)
            else:
                found[name] = current
        return [o for _, o in sorted(found.items()) if _has_labels(o, labels)]

    def by_index(self, type_: ResourceType, index: str, value: str) -> builtins.list[Wire]:
        """The objects of ``type_`` the index ``index`` finds under ``value``, by namespace and name (the
        watch's state: the overlay of this process's writes is not indexed)."""
        found: dict[tuple[str, str], Wire] = {}
        for loop in self._by_type.get(type_, ()):
            for obj in loop.store.by_index(index, value):
                found.setdefault(object_key(obj), obj)
        return [found[k] for k in sorted(found)]

    def reindex(self, type_: ResourceType, keys: Iterable[tuple[str, str]]) -> None:
        """Index these objects again: what their index functions read of other objects changed."""
        for key in keys:
            for loop in self._by_type.get(type_, ()):
                if _in_scope(loop.target, key[0]):
                    loop.store.reindex(key)

    def list_all(self, type_: ResourceType) -> builtins.list[Wire]:
        """Every object of ``type_`` the watch holds, in every namespace, by namespace and name."""
        found: dict[tuple[str, str], Wire] = {}
        for loop in self._by_type.get(type_, ()):
            for key, obj in loop.store.snapshot().items():
                found.setdefault(key, obj)
        return [found[k] for k in sorted(found)]

    def _stored(self, key: ObjectKey) -> Wire | None:
        for loop in self._by_type.get(key.type, ()):
            if _in_scope(loop.target, key.namespace):
                found = loop.store.get((key.namespace, key.name))
                if found is not None:
                    return found
        return None

    def _deleted_since(self, key: ObjectKey, version: str) -> bool:
        """The watch saw the object deleted after this version was written: the write is history."""
        for loop in self._by_type.get(key.type, ()):
            if _in_scope(loop.target, key.namespace):
                deleted = loop.store.deleted_at((key.namespace, key.name))
                if deleted is not None and deleted != version and at_least(deleted, version):
                    return True
        return False

    def _superseded(self, key: ObjectKey, written: _Written, stored: Wire | None) -> bool:
        """Whether the watch has caught up with an overlay entry (then it is dropped). Lock held."""
        if written.expires < time.monotonic():
            superseded = True
        elif written.obj is None and not written.version:  # read live and absent
            superseded = stored is not None
        elif written.obj is None:  # a delete: done once the object left the store or came back newer
            superseded = stored is None or (
                resource_version(stored) != written.version
                and at_least(resource_version(stored), written.version)
            )
        else:
            superseded = (
                at_least(resource_version(stored), written.version)
                if stored is not None
                else self._deleted_since(key, written.version)
            )
        if superseded:
            self._overlay.pop(key, None)
        return superseded

    # --- the process's own writes and live reads -----------------------------------------------------

    def observe(self, type_: ResourceType, obj: Wire) -> None:
        """Remember an object as the API server returned it (a write's answer, a live read)."""
        meta = obj.get("metadata") or {}
        key = ObjectKey(type_, str(meta.get("namespace") or "") if type_.namespaced else "", meta["name"])
        stored = self._stored(key)
        version = resource_version(obj)
        if stored is not None and at_least(resource_version(stored), version):
            return  # the watch is already there (or further)
        with self._lock:
            self._overlay[key] = _Written(obj, version, time.monotonic() + OVERLAY_SECONDS)

    def observe_absent(self, type_: ResourceType, namespace: str, name: str) -> None:
        """Remember that a live read found nothing, so the next pass does not ask again at once."""
        key = ObjectKey(type_, namespace if type_.namespaced else "", name)
        with self._lock:
            self._overlay[key] = _Written(None, "", time.monotonic() + OVERLAY_SECONDS)

    def observe_deleted(self, type_: ResourceType, namespace: str, name: str) -> None:
        key = ObjectKey(type_, namespace if type_.namespaced else "", name)
        stored = self.get(type_, namespace, name)
        if stored is None:
            return
        with self._lock:
            self._overlay[key] = _Written(None, resource_version(stored), time.monotonic() + OVERLAY_SECONDS)

    def overlay_size(self) -> int:
        with self._lock:
            return len(self._overlay)

    # --- freshness -----------------------------------------------------------------------------------

    def wait_for(self, seen: Iterable[SeenVersion], timeout: float) -> builtins.list[SeenVersion]:
        """Wait until the cache reflects each version seen elsewhere; those it still lacks at the end."""
        deadline = time.monotonic() + timeout
        behind = []
        for item in seen:
            loops = [
                loop for loop in self._by_type.get(item.type, ()) if _in_scope(loop.target, item.namespace)
            ]
            if not loops:
                continue  # not a cached kind: the pass reads it live anyway

            def caught_up(item: SeenVersion = item) -> bool:
                return self._reflects(item)

            if not loops[0].store.wait(caught_up, max(0.0, deadline - time.monotonic())):
                behind.append(item)
        return behind

    def _reflects(self, item: SeenVersion) -> bool:
        # The store, not the overlay: an entry of this process's own create must not stand in for a
        # deletion the watch has already delivered (the pass would keep a route that is gone).
        key = _key(item.type, item.namespace, item.name)
        current = self._stored(key)
        if item.deleted:
            caught_up = current is None or (
                resource_version(current) != item.resource_version
                and at_least(resource_version(current), item.resource_version)
            )
        elif current is None:  # deleted since that version, if the watch delivered a later deletion
            caught_up = any(at_least(v, item.resource_version) for v in self._deletions(key))
        else:
            caught_up = at_least(resource_version(current), item.resource_version)
        if caught_up:
            self._settle(key, item.resource_version)
        return caught_up

    def _deletions(self, key: ObjectKey) -> builtins.list[str]:
        loops = self._by_type.get(key.type, ())
        found = [loop.store.deleted_version((key.namespace, key.name)) for loop in loops]
        return [v for v in found if v]

    def _settle(self, key: ObjectKey, version: str) -> None:
        """The watch reached ``version`` of an object the overlay holds an older write of: from now on the
        store answers for it."""
        with self._lock:
            written = self._overlay.get(key)
            if (
                written is not None
                and written.obj is not None
                and version
                and at_least(version, written.version)
            ):
                self._overlay.pop(key, None)


class Watched:
    """The cluster as the watch loops delivered it: no overlay of this process's writes, no live reads.
    What the trigger rules read (``llmisvc_core.triggers.change.IndexedCluster``); its reads take one
    store's lock at a time, so an index function may use it from any loop's thread."""

    def __init__(self, cache: ClusterCache) -> None:
        self._cache = cache

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        return self._cache._stored(_key(type_, namespace, name))

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> builtins.list[Wire]:
        found: dict[str, Wire] = {}
        for loop in self._cache._by_type.get(type_, ()):
            if _in_scope(loop.target, namespace):
                for obj in loop.store.in_namespace(namespace):
                    found.setdefault((obj.get("metadata") or {}).get("name") or "", obj)
        return [o for _, o in sorted(found.items()) if _has_labels(o, labels)]

    def is_installed(self, type_: ResourceType) -> bool:
        return type_ in BUILTIN_TYPES or any(
            loop.store.served for loop in self._cache._by_type.get(type_, ())
        )

    def by_index(self, type_: ResourceType, index: str, value: str) -> builtins.list[Wire]:
        return self._cache.by_index(type_, index, value)

    def list_all(self, type_: ResourceType) -> builtins.list[Wire]:
        return self._cache.list_all(type_)


def _key(type_: ResourceType, namespace: str, name: str) -> ObjectKey:
    return ObjectKey(type_, namespace if type_.namespaced else "", name)


def _in_scope(target: WatchTarget, namespace: str) -> bool:
    return not target.resource.namespaced or target.namespace in ("", namespace)
