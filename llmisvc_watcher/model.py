"""Plain values of the watcher: what is sent to a workflow. No I/O.

The watch loops' own values (:class:`WatchEvent`, :class:`WatchTarget`, :class:`Tuning`) live in
:mod:`llmisvc_cache.model`, shared with the worker's cache, and the services a change affects
(:class:`Affected`) in :mod:`llmisvc_core.triggers.change`; they are named here too for the watcher's
modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmisvc_cache.model import ADDED, DELETED, MODIFIED, SeenVersion, Tuning, WatchEvent, WatchTarget, Wire
from llmisvc_core.triggers.change import Affected

__all__ = [
    "ADDED",
    "DELETED",
    "MODIFIED",
    "Affected",
    "ServiceSignal",
    "Tuning",
    "WatchEvent",
    "WatchTarget",
    "Wire",
]


@dataclass(frozen=True)
class ServiceSignal:
    """What the watcher sends one workflow: ``start`` asks for signal-with-start, else a plain signal."""

    namespace: str
    name: str
    reason: str
    start: bool = False
    seen: tuple[SeenVersion, ...] = ()  # the versions of the objects the events were about
