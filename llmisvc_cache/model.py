"""Plain values of the list+watch loops: what to watch, what the loops report, and the timing knobs.
No I/O. The cluster cache, the worker's reads and the watcher's triggers all speak these; a
:class:`WatchEvent` is the core's :class:`~llmisvc_core.triggers.change.Change`.

A :class:`WatchEvent` is one change of one object as the watcher learned it, either from a watch stream
or from comparing a (re)list with the last known state. An ``initial`` event comes from the first list of
a kind: it describes the world as it already was, not a change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from llmisvc_core.models.kube import TYPES_BY_NAME, ResourceType
from llmisvc_core.triggers.change import ADDED, DELETED, MODIFIED

__all__ = [
    "ADDED",
    "DELETED",
    "MODIFIED",
    "LoopHealth",
    "SeenVersion",
    "Tuning",
    "WatchEvent",
    "WatchTarget",
    "Wire",
]

Wire = dict[str, Any]

_VERBS = {ADDED: "created", MODIFIED: "modified", DELETED: "deleted"}


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED or DELETED
    resource: ResourceType
    obj: Wire
    old: Wire | None = None  # the last state the watcher knew, when it knew one
    initial: bool = False  # from the first list of this kind: the state at start-up
    relisted: bool = False  # found by comparing a relist with the last known state

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "")

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name") or "")

    def describe(self) -> str:
        """``Gateway kserve/kserve-ingress-gateway modified``: the reason a signal carries."""
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        verb = "found" if self.initial else _VERBS.get(self.type, self.type.lower())
        suffix = " (seen on relist)" if self.relisted and not self.initial else ""
        return f"{self.resource.kind} {where} {verb}{suffix}"


@dataclass(frozen=True)
class WatchTarget:
    """One collection to list and watch: a resource, a namespace ("" for all) and optional selectors."""

    resource: ResourceType
    namespace: str = ""
    label_selector: str | None = None
    field_selector: str | None = None

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        selectors = [s for s in (self.label_selector, self.field_selector) if s]
        return f"{self.resource}{where}" + (f" ({', '.join(selectors)})" if selectors else "")


@dataclass(frozen=True)
class LoopHealth:
    """What a watch loop knows of its own progress, for the readiness probe (``llmisvc_runtime.health``).

    Times are ``time.monotonic()`` seconds. ``failing_since`` is when the current run of failed requests
    began (a request refused, unanswered, or answered other than 200, 404 or 410, or a stream that broke)
    and is None once the API server answers again; ``last_error`` describes the latest failure."""

    target: str
    started: float
    listed: bool  # the first list succeeded, or found the kind not served (404)
    failing_since: float | None = None
    last_error: str = ""


@dataclass(frozen=True)
class Tuning:
    """Timing of the watch loops and of the signals; the defaults suit a real cluster, tests shrink them."""

    watch_timeout_seconds: int = 300  # a server-side watch ends after this long and is resumed
    backoff_first: float = 0.5  # first wait after a failure; doubles per failure
    #: An API server back from an outage is seen within this long: a watch failing for a minute (a
    #: kube-apiserver restarting on a loaded machine) had backed off to 30 s with the former cap, and
    #: missed changes for up to that long after the server answered again. A retry every 8 s costs a
    #: server that is down nothing.
    backoff_cap: float = 8.0
    debounce_seconds: float = 0.2  # after a signal, events for its service within this window make one more
    #: A held signal (another service's change that can only change this one's ModelNameCollision
    #: Warning) waits until no other held reason has come for this long, and at most ``hold_max_seconds``
    #: after the first: a burst of creations sharing one model name is one pass per claimant, not one per
    #: creation (304 claimants ran 7.0 passes each, 2,056 of them for a claimant's creation; issue 21).
    hold_quiet_seconds: float = 2.0
    hold_max_seconds: float = 30.0
    sync_timeout: float = 10.0  # how long start-up waits for the first list of the other kinds
    send_concurrency: int = 32  # signals in flight at once


class SeenVersion(BaseModel):
    """An object at the version a watcher saw it (or saw it deleted): a signal carries these, and a pass
    waits until its cache has caught up with them before it plans."""

    model_config = ConfigDict(frozen=True)

    resource: str  # llmisvc_core.models.kube.TYPES_BY_NAME key, e.g. httproutes.gateway.networking.k8s.io/v1
    namespace: str
    name: str
    resource_version: str
    deleted: bool = False

    @property
    def type(self) -> ResourceType:
        return TYPES_BY_NAME[self.resource]

    @classmethod
    def of(cls, event: WatchEvent) -> SeenVersion:
        meta = event.obj.get("metadata") or {}
        return cls(
            resource=str(event.resource),
            namespace=event.namespace,
            name=event.name,
            resource_version=str(meta.get("resourceVersion") or ""),
            deleted=event.type == DELETED,
        )

    @classmethod
    def stored(cls, type_: ResourceType, obj: Wire) -> SeenVersion:
        """An object as read from the API server (a command that reads the service before it asks for a
        pass): the pass plans on this version or a newer one."""
        meta = obj.get("metadata") or {}
        return cls(
            resource=str(type_),
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            resource_version=str(meta.get("resourceVersion") or ""),
        )
