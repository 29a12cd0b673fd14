"""The worker's cluster API in the integration tests: ``KubeClusterApi`` (the official client) with every
successful write remembered, body and all, so a test can compare what a live pass wrote with what
``llmisvc-router plan`` printed."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from activities.events import EVENT
from llmisvc_core.models.kube import ResourceType
from llmisvc_kube.api import Wire
from llmisvc_kube.client import KubeClusterApi


class RecordingClusterApi:
    """The worker's :class:`~llmisvc_kube.api.ClusterApi`: passes every call to ``KubeClusterApi``
    and remembers each write that succeeded, with the body sent, so a test can compare what a live pass
    wrote with what ``plan`` printed."""

    def __init__(self, inner: KubeClusterApi) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self.writes: list[Write] = []

    def reset(self) -> None:
        with self._lock:
            self.writes = []

    def recorded(self) -> list[Write]:
        with self._lock:
            return list(self.writes)

    def _record(self, verb: str, type_: ResourceType, namespace: str, name: str, body: Wire | None) -> None:
        if type_ == EVENT:
            return  # Events tell about the writes; they are not writes the plan makes
        with self._lock:
            self.writes.append(Write(verb, type_, namespace, name, body))

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        return self.inner.get(type_, namespace, name)

    def list_objects(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        return self.inner.list_objects(type_, namespace, labels)

    def create(self, type_: ResourceType, body: Wire) -> Wire:
        result = self.inner.create(type_, body)
        self._record("create", type_, *_where(body), body)
        return result

    def create_dry_run(self, type_: ResourceType, body: Wire) -> Wire:
        return self.inner.create_dry_run(type_, body)  # nothing is written: not a write of the plan's

    def replace(self, type_: ResourceType, body: Wire) -> Wire:
        result = self.inner.replace(type_, body)
        self._record("replace", type_, *_where(body), body)
        return result

    def replace_status(self, type_: ResourceType, body: Wire) -> Wire:
        result = self.inner.replace_status(type_, body)
        self._record("replace_status", type_, *_where(body), body)
        return result

    def patch_merge(self, type_: ResourceType, namespace: str, name: str, patch: Wire) -> Wire:
        result = self.inner.patch_merge(type_, namespace, name, patch)
        self._record("patch", type_, namespace, name, patch)
        return result

    def patch_status_merge(self, type_: ResourceType, namespace: str, name: str, patch: Wire) -> Wire:
        result = self.inner.patch_status_merge(type_, namespace, name, patch)
        self._record("patch_status", type_, namespace, name, patch)
        return result

    def delete(
        self,
        type_: ResourceType,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> None:
        self.inner.delete(type_, namespace, name, uid=uid, resource_version=resource_version)
        self._record("delete", type_, namespace, name, None)


@dataclass(frozen=True)
class Write:
    verb: str
    type: ResourceType
    namespace: str
    name: str
    body: Wire | None


def _where(body: Wire) -> tuple[str, str]:
    meta = body.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")
