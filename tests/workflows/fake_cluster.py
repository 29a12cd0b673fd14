"""An in-memory Kubernetes API for workflow tests: the only thing faked is I/O.

``FakeCluster`` implements ``llmisvc_kube.api.ClusterApi``, and ``ClusterView`` as a cache that
is always synced and never behind (its reads are the API's, faults and holds included), with the few
API-server rules the activities rely on (uids, resourceVersions and 409 on a stale write, 404 as
"absent", discovery of served kinds), so the production ``RouterActivities`` and the real planning
core run unchanged on top of it.
The JSON merge patch is its own (RFC 7386, as the API server applies it).
Tests change the world directly (``put``, ``remove``, ``served``) and queue faults (``fail``) or hold a
call (``hold``) to control what the activities see.
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from activities.events import EVENT
from llmisvc_cache.model import SeenVersion
from llmisvc_core.models.kube import BUILTIN_TYPES, KNOWN_TYPES, LLMISVC, ObjectKey, ResourceType, key_of
from llmisvc_kube.api import ApiError, Wire

#: The kinds that need a CRD: the ones ``served`` can take away.
DISCOVERED_TYPES = [t for t in KNOWN_TYPES.values() if t not in BUILTIN_TYPES]

#: The operations of ``ClusterApi``, as faults and holds name them.
#: ``sync`` is the cache's "wait until synced", which ``fetch_gateways`` calls first, once per pass.
#: ``dry_run`` is a create with ``dryRun=All``: accepted unless a fault says otherwise (no schema here).
OPERATIONS = frozenset(
    {"sync", "get", "list", "create", "dry_run", "replace", "replace_status", "patch", "delete"}
)
HOLD_TIMEOUT = 30.0  # a held call gives up after this long, so a failing test cannot hang the worker


@dataclass
class _Fault:
    operation: str
    error: ApiError
    times: int
    kind: str | None


@dataclass
class _Hold:
    operation: str
    kind: str | None
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)


class FakeCluster:
    """Objects by key; every read returns a copy, every write bumps the resourceVersion."""

    def __init__(
        self, objects: Iterable[Wire] = (), served: Iterable[ResourceType] = DISCOVERED_TYPES
    ) -> None:
        self._lock = threading.Lock()
        self._objects: dict[ObjectKey, Wire] = {}
        self._versions = itertools.count(1)
        self._uids = itertools.count(1)
        self._faults: list[_Fault] = []
        self._holds: list[_Hold] = []
        self.served_types = set(served)
        self.writes: list[str] = []  # "create HTTPRoute llm/x", in the order the API accepted them
        self.failed: list[str] = []  # "create HTTPRoute: 409", for every fault that fired
        self.events: list[Wire] = []  # events.k8s.io Events, apart from the objects and the writes
        self.dry_runs: list[Wire] = []  # the bodies of creates with dryRun=All (nothing is stored)
        for obj in objects:
            self.put(obj)

    # -- the test's side ------------------------------------------------------------------------------

    def put(self, obj: Wire) -> Wire:
        """Store ``obj`` as if a user applied it (a new uid unless it names one)."""
        key = _key(obj)
        stored = copy.deepcopy(obj)
        meta = stored.setdefault("metadata", {})
        meta.setdefault("uid", f"uid-{next(self._uids)}")
        meta.setdefault("generation", 1)
        with self._lock:
            meta["resourceVersion"] = str(next(self._versions))
            self._objects[key] = stored
        return copy.deepcopy(stored)

    def read(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        with self._lock:
            found = self._objects.get(ObjectKey(type_, namespace if type_.namespaced else "", name))
            return copy.deepcopy(found)

    def remove(self, type_: ResourceType, namespace: str, name: str, *, collect: bool = True) -> None:
        """Delete as a user would; ``collect`` also runs the garbage collector at once."""
        with self._lock:
            self._objects.pop(ObjectKey(type_, namespace, name), None)
        if collect:
            self.collect_garbage()

    def collect_garbage(self) -> None:
        """Kubernetes' garbage collector: delete objects whose controlling owner no longer exists."""
        with self._lock:
            uids = {(obj.get("metadata") or {}).get("uid") for obj in self._objects.values()}
            orphans = [key for key, obj in self._objects.items() if _controller_uid(obj) not in uids | {None}]
            for key in orphans:
                del self._objects[key]

    def kinds(self) -> list[str]:
        """``Kind namespace/name`` of every stored object, sorted."""
        with self._lock:
            return sorted(f"{k.type.kind} {k}" for k in self._objects)

    def fail(self, operation: str, error: ApiError, *, times: int = 1, kind: str | None = None) -> None:
        """The next ``times`` calls of ``operation`` (on ``kind``, if given) raise ``error``."""
        assert operation in OPERATIONS, operation
        with self._lock:
            self._faults.append(_Fault(operation, error, times, kind))

    def hold(self, operation: str, *, kind: str | None = None) -> _Hold:
        """The next call of ``operation`` waits until ``release()``; ``reached`` tells it is waiting."""
        assert operation in OPERATIONS, operation
        hold = _Hold(operation, kind)
        with self._lock:
            self._holds.append(hold)
        return hold

    @staticmethod
    def release(hold: _Hold) -> None:
        hold.released.set()

    # -- ClusterApi -----------------------------------------------------------------------------------

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        self._enter("get", type_)
        if not self._is_served(type_):
            return None
        return self.read(type_, namespace, name)

    def list_objects(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        self._enter("list", type_)
        if not self._is_served(type_):
            return []
        with self._lock:
            return [
                copy.deepcopy(obj)
                for key, obj in sorted(self._objects.items())
                if key.type == type_ and key.namespace == namespace and _has_labels(obj, labels)
            ]

    def create(self, type_: ResourceType, body: Wire) -> Wire:
        if type_ == EVENT:
            with self._lock:
                self.events.append(copy.deepcopy(body))
            return body
        self._enter("create", type_)
        key = _key(body)
        with self._lock:
            if key in self._objects:
                raise ApiError(409, f"{type_.plural} {key.name!r} already exists")
            stored = copy.deepcopy(body)
            meta = stored.setdefault("metadata", {})
            meta.update(
                uid=f"uid-{next(self._uids)}", generation=1, resourceVersion=str(next(self._versions))
            )
            self._objects[key] = stored
            self.writes.append(f"create {type_.kind} {key}")
            return copy.deepcopy(stored)

    def create_dry_run(self, type_: ResourceType, body: Wire) -> Wire:
        self._enter("dry_run", type_)
        with self._lock:
            self.dry_runs.append(copy.deepcopy(body))
        return copy.deepcopy(body)

    def replace(self, type_: ResourceType, body: Wire) -> Wire:
        self._enter("replace", type_)
        return self._replace(type_, body, "replace", status_only=False)

    def replace_status(self, type_: ResourceType, body: Wire) -> Wire:
        self._enter("replace_status", type_)
        return self._replace(type_, body, "replace_status", status_only=True)

    def patch_merge(self, type_: ResourceType, namespace: str, name: str, patch: Wire) -> Wire:
        if type_ == EVENT:
            with self._lock:
                found = [e for e in self.events if e["metadata"]["name"] == name]
                if not found:
                    raise ApiError(404, f"events {name!r} not found")
                found[0].update(copy.deepcopy(patch))
                return copy.deepcopy(found[0])
        self._enter("patch", type_)
        key = ObjectKey(type_, namespace, name)
        with self._lock:
            stored = self._objects.get(key)
            if stored is None:
                raise ApiError(404, f"{type_.plural} {name!r} not found")
            wanted = (patch.get("metadata") or {}).get("resourceVersion")
            if wanted is not None and wanted != stored["metadata"]["resourceVersion"]:
                # The API server's optimistic concurrency: a patch naming a version applies to it only.
                raise ApiError(409, f"Operation cannot be fulfilled on {type_.plural} {name!r}: modified")
            merged = merge_patch(stored, patch)
            merged["metadata"]["resourceVersion"] = str(next(self._versions))
            self._objects[key] = merged
            self.writes.append(f"patch {type_.kind} {key}")
            return copy.deepcopy(merged)

    def patch_status_merge(self, type_: ResourceType, namespace: str, name: str, patch: Wire) -> Wire:
        self._enter("patch_status", type_)
        key = ObjectKey(type_, namespace, name)
        with self._lock:
            stored = self._objects.get(key)
            if stored is None:
                raise ApiError(404, f"{type_.plural} {name!r} not found")
            merged = copy.deepcopy(stored)
            merged["status"] = merge_patch(stored.get("status") or {}, patch.get("status") or {})
            merged["metadata"]["resourceVersion"] = str(next(self._versions))
            self._objects[key] = merged
            self.writes.append(f"patch_status {type_.kind} {key}")
            return copy.deepcopy(merged)

    def events_about(self, namespace: str, name: str) -> list[Wire]:
        """The Events recorded on an object (they are kept apart from the router's writes)."""
        with self._lock:
            return [copy.deepcopy(e) for e in self.events if e.get("regarding", {}).get("name") == name
                    and e.get("regarding", {}).get("namespace") == namespace]  # fmt: skip

    def delete(
        self,
        type_: ResourceType,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> None:
        self._enter("delete", type_)
        key = ObjectKey(type_, namespace, name)
        with self._lock:
            meta = (self._objects.get(key) or {}).get("metadata") or {}
            for field, wanted in (("UID", uid), ("ResourceVersion", resource_version)):
                actual = meta.get("uid" if field == "UID" else "resourceVersion")
                if key in self._objects and wanted and wanted != actual:
                    raise ApiError(
                        409,
                        f"Precondition failed: {field} in precondition: {wanted}, "
                        f"{field} in object meta: {actual}",
                    )
            if self._objects.pop(key, None) is not None:
                self.writes.append(f"delete {type_.kind} {namespace}/{name}")

    # -- ClusterView: a cache that is never behind -----------------------------------------------------

    def wait_synced(self, timeout: float) -> bool:
        self._enter("sync", None)
        return True

    def unsynced(self) -> list[str]:
        return []

    def wait_for(self, seen: Iterable[SeenVersion], timeout: float) -> list[SeenVersion]:
        return []

    def is_installed(self, type_: ResourceType) -> bool:
        return self._is_served(type_)

    def knows(self, type_: ResourceType, namespace: str, name: str) -> bool:
        return True

    def covers_list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> bool:
        return True

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        return self.list_objects(type_, namespace, labels)

    def observe(self, type_: ResourceType, obj: Wire) -> None:
        pass

    def observe_absent(self, type_: ResourceType, namespace: str, name: str) -> None:
        pass

    def observe_deleted(self, type_: ResourceType, namespace: str, name: str) -> None:
        pass

    # -- rules ----------------------------------------------------------------------------------------

    def _replace(self, type_: ResourceType, body: Wire, verb: str, *, status_only: bool) -> Wire:
        key = _key(body)
        with self._lock:
            stored = self._objects.get(key)
            if stored is None:
                raise ApiError(404, f"{type_.plural} {key.name!r} not found")
            meta = body.get("metadata") or {}
            wanted = meta.get("resourceVersion")
            if wanted and wanted != stored["metadata"].get("resourceVersion"):
                raise ApiError(409, f"the object {key} has been modified; please apply your changes again")
            new = copy.deepcopy(stored)
            if status_only:
                new["status"] = copy.deepcopy(body.get("status") or {})
            else:
                new = copy.deepcopy(body)
                new.pop("status", None)
                if "status" in stored:
                    new["status"] = copy.deepcopy(stored["status"])
                new["metadata"] = {**new["metadata"], "uid": stored["metadata"]["uid"]}
                if body.get("spec") != stored.get("spec"):
                    new["metadata"]["generation"] = (stored["metadata"].get("generation") or 1) + 1
                else:
                    new["metadata"]["generation"] = stored["metadata"].get("generation") or 1
            new["metadata"]["resourceVersion"] = str(next(self._versions))
            self._objects[key] = new
            self.writes.append(f"{verb} {type_.kind} {key}")
            return copy.deepcopy(new)

    def _is_served(self, type_: ResourceType) -> bool:
        return type_ not in DISCOVERED_TYPES or type_ in self.served_types

    def _enter(self, operation: str, type_: ResourceType | None) -> None:
        """Apply the first matching hold, then the first matching fault."""
        kind = type_.kind if type_ is not None else None
        with self._lock:
            hold = next((h for h in self._holds if _matches(h.operation, h.kind, operation, kind)), None)
            if hold is not None:
                self._holds.remove(hold)
        if hold is not None:
            hold.reached.set()
            hold.released.wait(HOLD_TIMEOUT)
        with self._lock:
            fault = next((f for f in self._faults if _matches(f.operation, f.kind, operation, kind)), None)
            if fault is None:
                return
            fault.times -= 1
            if fault.times <= 0:
                self._faults.remove(fault)
            self.failed.append(f"{operation} {kind}: {fault.error.status}")
        raise fault.error


def _matches(want_operation: str, want_kind: str | None, operation: str, kind: str | None) -> bool:
    return want_operation == operation and (want_kind is None or want_kind == kind)


def _controller_uid(obj: Wire) -> str | None:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return next((ref.get("uid") for ref in refs if ref.get("controller")), None)


def _key(obj: Wire) -> ObjectKey:
    key = key_of(obj)
    assert key is not None, f"not a kind the router knows: {obj.get('apiVersion')} {obj.get('kind')}"
    return key


def _has_labels(obj: Wire, labels: Mapping[str, str]) -> bool:
    have = (obj.get("metadata") or {}).get("labels") or {}
    return all(have.get(k) == v for k, v in labels.items())


def annotations_of(cluster: FakeCluster, namespace: str, name: str) -> dict[str, str]:
    """The stored LLMInferenceService's annotations (empty when it is gone)."""
    svc = cluster.read(LLMISVC, namespace, name) or {}
    return dict((svc.get("metadata") or {}).get("annotations") or {})


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386, as the API server applies a merge patch: objects merge key by key, ``null`` deletes a
    key, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
