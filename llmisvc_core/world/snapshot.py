"""The cluster as one pass sees it: a read-only snapshot plus the writes the pass has made so far.

A pass never talks to the API server. It reads a :class:`Snapshot` (a closed world: what is not in it does
not exist) through a :class:`PassWorld`, which records every create, update and delete the rules decide
on and serves later reads from those writes (decision P8: a read after a write in the same pass sees the
written object, with the status it had before the write). The recorded writes, and the Events the rules
decide on, become the plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from llmisvc_core.models.kube import BUILTIN_TYPES, KubeObject, ObjectKey, ResourceType, key_of
from llmisvc_core.world.events import PlannedEvent

M = TypeVar("M", bound=KubeObject)
Wire = dict[str, Any]


class Reader(Protocol):
    """Read access to a consistent view of the cluster."""

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None: ...

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]: ...

    def is_installed(self, type_: ResourceType) -> bool: ...


class Snapshot:
    """A closed-world snapshot: objects by key and the resource types the server serves."""

    def __init__(self, objects: Iterable[tuple[ObjectKey, Wire]], installed: Iterable[ResourceType]) -> None:
        self._installed = frozenset(installed) | BUILTIN_TYPES
        self._objects: dict[ObjectKey, Wire] = {}
        self._by_namespace: dict[tuple[ResourceType, str], list[ObjectKey]] = {}
        for key, obj in objects:
            if key not in self._objects:
                self._by_namespace.setdefault((key.type, key.namespace), []).append(key)
            self._objects[key] = obj

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        if not self.is_installed(type_):
            return None
        return self._objects.get(ObjectKey(type_, namespace if type_.namespaced else "", name))

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        if not self.is_installed(type_):
            return []
        keys = self._by_namespace.get((type_, namespace), [])
        found = [self._objects[k] for k in keys]
        return [o for o in found if _has_labels(o, labels)]

    def is_installed(self, type_: ResourceType) -> bool:
        return type_ in self._installed

    def keys(self) -> tuple[ObjectKey, ...]:
        return tuple(self._objects)


def snapshot_of(objects: Iterable[Wire], installed: Iterable[ResourceType]) -> Snapshot:
    """A snapshot of wire objects; objects of kinds the router does not use are left out."""
    keyed = ((key, obj) for obj in objects if (key := key_of(obj)) is not None)
    return Snapshot(keyed, installed)


def _has_labels(obj: Wire, labels: Mapping[str, str]) -> bool:
    have = (obj.get("metadata") or {}).get("labels") or {}
    return all(have.get(k) == v for k, v in labels.items())


class PassWorld:
    """The snapshot seen through the writes of the current pass."""

    def __init__(self, reader: Reader, rejected: Mapping[ObjectKey, str] | None = None) -> None:
        self.reader = reader
        #: Writes the API server refused when this pass was carried out, with its error text: re-planning
        #: with them gives the status KServe reports for a failed create/update/delete.
        self.rejected = dict(rejected or {})
        self._written: dict[ObjectKey, Wire | None] = {}
        self.applied: dict[ObjectKey, Wire] = {}
        self.deleted: dict[ObjectKey, None] = {}
        #: Events the rules decided on (``llmisvc_core.world.events``), in the order they were decided.
        self.events: list[PlannedEvent] = []

    def is_installed(self, type_: ResourceType) -> bool:
        return self.reader.is_installed(type_)

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        key = ObjectKey(type_, namespace if type_.namespaced else "", name)
        if key in self._written:
            return self._written[key]
        return self.reader.get(type_, namespace, name)

    def read(self, model: type[M], type_: ResourceType, namespace: str, name: str) -> M | None:
        raw = self.get(type_, namespace, name)
        return model.model_validate(raw) if raw is not None else None

    def list(self, model: type[M], type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[M]:
        found = {_key_of(type_, o): o for o in self.reader.list(type_, namespace, labels)}
        for key, obj in self._written.items():
            if key.type == type_ and key.namespace == namespace:
                if obj is None or not _has_labels(obj, labels):
                    found.pop(key, None)
                else:
                    found[key] = obj
        return [model.model_validate(o) for o in found.values()]

    def record_apply(self, key: ObjectKey, manifest: Wire, stored: Wire) -> None:
        """Remember a create/update: ``manifest`` is what is sent, ``stored`` what later reads see."""
        self.applied[key] = manifest
        self.deleted.pop(key, None)
        self._written[key] = stored

    def record_delete(self, key: ObjectKey) -> None:
        self.deleted[key] = None
        self.applied.pop(key, None)
        self._written[key] = None

    def record_event(self, event: PlannedEvent) -> None:
        if event not in self.events:
            self.events.append(event)


def _key_of(type_: ResourceType, obj: Wire) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return ObjectKey(type_, meta.get("namespace") or "", meta.get("name") or "")
