"""The core's ``Reader`` over the process's cluster cache: what a pass reads, it reads from memory.

An object the cache cannot answer for (outside every watched selector, e.g. a Service named like a
Gateway without the gateway label) is read from the API once and remembered briefly by the cache. Every
answer is noted as a digest entry, ``Kind namespace/name@resourceVersion``, which is what the history
keeps of the reads instead of the objects.
"""

from __future__ import annotations

from collections.abc import Mapping

from activities import errors
from activities.cluster_view import ClusterView
from activities.errors import ErrorType
from llmisvc_core import limits
from llmisvc_core.models.kube import BUILTIN_TYPES, LLMISVC, ObjectKey, ResourceType
from llmisvc_kube.api import ClusterApi, Wire


class CachedReader:
    """Implements ``llmisvc_core.world.snapshot.Reader``; counts the requests it had to make."""

    def __init__(self, view: ClusterView, api: ClusterApi) -> None:
        self.view = view
        self.api = api
        self.live_reads = 0
        self.versions: dict[ObjectKey, str] = {}

    def is_installed(self, type_: ResourceType) -> bool:
        return type_ in BUILTIN_TYPES or self.view.is_installed(type_)

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        if not self.is_installed(type_) or not name:
            return None
        found = self.view.get(type_, namespace, name)
        if found is None and not self.view.knows(type_, namespace, name):
            self.live_reads += 1
            found = self.api.get(type_, namespace, name)
            if found is None:
                self.view.observe_absent(type_, namespace, name)
            else:
                self.view.observe(type_, found)
        self._note(type_, namespace, name, found)
        _bounded(type_, found)
        return found

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]:
        if not self.is_installed(type_):
            return []
        if self.view.covers_list(type_, namespace, labels):
            found = self.view.list(type_, namespace, labels)
        else:
            self.live_reads += 1
            found = self.api.list_objects(type_, namespace, labels)
            for obj in found:
                self.view.observe(type_, obj)
        for obj in found:
            self._note(type_, namespace, (obj.get("metadata") or {}).get("name") or "", obj)
            _bounded(type_, obj)
        return found

    def _note(self, type_: ResourceType, namespace: str, name: str, obj: Wire | None) -> None:
        version = str((obj.get("metadata") or {}).get("resourceVersion") or "?") if obj is not None else "-"
        self.versions[ObjectKey(type_, namespace if type_.namespaced else "", name)] = version

    def digest(self) -> tuple[str, ...]:
        """``Kind namespace/name@version`` of every object read, sorted (``@-``: read and absent)."""
        return tuple(sorted(f"{key.type.kind} {key}@{version}" for key, version in self.versions.items()))


def _bounded(type_: ResourceType, obj: Wire | None) -> None:
    """Stop the pass with one clear line before the core's recursive readers meet a too-deep object."""
    if type_ == LLMISVC:
        return  # the service itself: fetch_gateways reports it in its own status (InvalidSpec)
    problem = limits.depth_problem(obj) if obj is not None else None
    if problem is not None:
        meta = obj.get("metadata") if obj is not None else None
        where = f"{meta.get('namespace') or ''}/{meta.get('name')}" if isinstance(meta, dict) else "?"
        raise errors.permanent(
            ErrorType.TOO_DEEP, f"{type_.kind} {where.lstrip('/')}: {problem}", benign=True
        )
