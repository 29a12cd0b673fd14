"""A read-through view of the live cluster that remembers every answer, so the exact set of objects a
pass reads can be captured as a snapshot and planned again, deterministically, in another activity."""

from __future__ import annotations

from collections.abc import Mapping

from activities.cluster_api import ClusterApi, Wire
from router_core.kube import BUILTIN_TYPES, ObjectKey, ResourceType


class RecordingReader:
    """Implements ``router_core.state.Reader`` by asking the API once per distinct question."""

    def __init__(self, api: ClusterApi, installed: set[ResourceType]) -> None:
        self.api = api
        self.installed = installed | BUILTIN_TYPES
        self.objects: dict[ObjectKey, Wire] = {}
        self._answered_gets: set[ObjectKey] = set()
        self._answered_lists: set[tuple[ResourceType, str, frozenset[tuple[str, str]]]] = set()
        self.reads = 0

    def is_installed(self, type_: ResourceType) -> bool:
        return type_ in self.installed

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        key = ObjectKey(type_, namespace if type_.namespaced else "", name)
        if key not in self._answered_gets and key not in self.objects and self.is_installed(type_):
            self._answered_gets.add(key)
            self.reads += 1
            found = self.api.get(type_, key.namespace, name)
            if found is not None:
                self.objects[key] = found
        return self.objects.get(key)

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        query = (type_, namespace, frozenset(labels.items()))
        if query not in self._answered_lists and self.is_installed(type_):
            self._answered_lists.add(query)
            self.reads += 1
            for obj in self.api.list_objects(type_, namespace, labels):
                name = (obj.get("metadata") or {}).get("name", "")
                self.objects[ObjectKey(type_, namespace, name)] = obj
        have = [o for k, o in self.objects.items() if k.type == type_ and k.namespace == namespace]
        return [
            o
            for o in have
            if all(((o.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in labels.items())
        ]
