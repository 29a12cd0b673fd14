"""The watcher's trigger rules over a real :class:`ClusterCache` whose loops list nothing: the test fills
their stores as a watch loop would, then asks which services the change affects."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any, cast

from llmisvc_cache.cache import ClusterCache
from llmisvc_cache.model import DELETED, LoopHealth, Tuning, WatchEvent, WatchTarget
from llmisvc_cache.store import TargetStore, object_key
from llmisvc_cache.targets import dependent_targets, service_targets
from llmisvc_core.models import kube
from llmisvc_core.triggers import rules
from llmisvc_core.triggers.change import Affected, Key
from llmisvc_core.world.config import Environment
from llmisvc_kube.client import ApiClient
from llmisvc_watcher.runner import Triggers, add_indexes
from tests.builders import KSERVE, Wire
from tests.builders.watch import event

ENV = Environment(kserve_namespace=KSERVE)


class StillLoop:
    """A loop that never talks to an API server: served, synced, and filled by the test."""

    def __init__(self, api_client: Any, target: WatchTarget, emit: Any, tuning: Tuning) -> None:
        self.target = target
        self.store = TargetStore()
        self.store.replace_all({})
        self.synced = threading.Event()
        self.synced.set()

    def start(self) -> StillLoop:
        return self

    def wake(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def join(self, timeout: float) -> bool:
        return True

    def health(self) -> LoopHealth:
        return LoopHealth(str(self.target), 0.0, True)


class CacheWorld:
    """The cache as the watcher reads it, and the watcher's rules over it."""

    def __init__(self, env: Environment = ENV, shadow: bool = False) -> None:
        self.cache = ClusterCache(cast(ApiClient, None), loop=StillLoop)  # its loops never call the API
        add_indexes(self.cache, env)
        self.cache.add([*dependent_targets([], env), *service_targets([])])
        self.triggers = Triggers(self.cache, env, shadow)

    def apply(self, change: WatchEvent) -> WatchEvent:
        """Store the change as the watch loop does; the event as the loop reports it (``old``: the state
        the store had). An object no loop watches is stored nowhere."""
        store = self._store(change.resource, change.namespace)
        if store is None:
            return change
        key = object_key(change.obj)
        old = store.get(key)
        if change.type == DELETED:
            store.remove(key)
            return change
        store.put(key, change.obj)
        return change if change.old is not None else replace(change, old=old)

    def put(self, *objects: Wire) -> CacheWorld:
        """The world as it was at start-up."""
        for obj in objects:
            self.apply(event(obj, initial=True))
        return self

    def affected(self, change: WatchEvent) -> list[Affected]:
        """Apply ``change``, then the watcher's rules (which re-index what it was read through)."""
        return self.triggers.affected(self.apply(change))

    def watches(self, change: WatchEvent) -> bool:
        """Whether a loop of the cache lists the object of ``change`` (else no event of it arrives)."""
        return self._store(change.resource, change.namespace) is not None

    def keys(self, change: WatchEvent) -> list[Key]:
        return [(a.namespace, a.name) for a in self.affected(change)]

    def users(self, kind: str, namespace: str, name: str) -> list[Key]:
        return rules.users(self.cache.watched(), kind, namespace, name)

    def _store(self, resource: kube.ResourceType, namespace: str) -> TargetStore | None:
        for loop in self.cache.loops:
            target = loop.target
            if target.resource == resource and target.namespace in ("", namespace):
                return loop.store
        return None
