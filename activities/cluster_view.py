"""What the activities need from the process's cluster cache, as a protocol with no ``kubernetes``
import; ``llmisvc_cache.cache.ClusterCache`` implements it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from llmisvc_cache.model import SeenVersion
from llmisvc_core.models.kube import ResourceType
from llmisvc_kube.api import Wire


class ClusterView(Protocol):
    """The watch-fed cache the activities read from (``llmisvc_cache.cache.ClusterCache``)."""

    def wait_synced(self, timeout: float) -> bool: ...

    def unsynced(self) -> list[str]: ...

    def wait_for(self, seen: Iterable[SeenVersion], timeout: float) -> list[SeenVersion]: ...

    def is_installed(self, type_: ResourceType) -> bool: ...

    def knows(self, type_: ResourceType, namespace: str, name: str) -> bool: ...

    def covers_list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> bool: ...

    def get(self, type_: ResourceType, namespace: str, name: str) -> Wire | None: ...

    def list(self, type_: ResourceType, namespace: str, labels: Mapping[str, str]) -> list[Wire]: ...

    def observe(self, type_: ResourceType, obj: Wire) -> None: ...

    def observe_absent(self, type_: ResourceType, namespace: str, name: str) -> None: ...

    def observe_deleted(self, type_: ResourceType, namespace: str, name: str) -> None: ...
