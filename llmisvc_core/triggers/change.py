"""What the trigger rules read: one change of one object, and the cluster with its indexes. No I/O.

:class:`Change` is what a watch loop reports (``llmisvc_cache.model.WatchEvent`` is one);
:class:`IndexedCluster` is the cluster as the process's cache holds it, with client-go-style indexes
(``by_index``) kept on every add, update and delete. The rules answer with :class:`Affected` services.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol

from llmisvc_core.models.kube import ResourceType
from llmisvc_core.world.snapshot import Reader

Wire = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"

#: An index function: the values an object is found under (client-go's ``IndexFunc``).
IndexFn = Callable[[Wire], Iterable[str]]


class Change(Protocol):
    """One change of one object: ``type`` is ADDED, MODIFIED or DELETED; ``old`` the state known before
    it (when known); ``initial`` marks the first list of a kind (the world as it was, not a change)."""

    @property
    def type(self) -> str: ...

    @property
    def resource(self) -> ResourceType: ...

    @property
    def obj(self) -> Wire: ...

    @property
    def old(self) -> Wire | None: ...

    @property
    def initial(self) -> bool: ...

    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...

    def describe(self) -> str: ...


class IndexedCluster(Reader, Protocol):
    """The cluster after the change, with the indexes of :func:`llmisvc_core.triggers.uses.indexes`."""

    def by_index(self, type_: ResourceType, index: str, value: str) -> list[Wire]: ...

    def list_all(self, type_: ResourceType) -> list[Wire]: ...


class Affected(NamedTuple):
    """One LLMInferenceService a change affects, and why. ``held``: the change can only change the
    service's ``ModelNameCollision`` Warning, never its objects, so its signal may wait for a burst of
    such changes to end (``llmisvc_watcher.coalescing``)."""

    namespace: str
    name: str
    reason: str
    held: bool = False


def key_of(obj: Wire) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")
