"""A simulated Gateway API controller: what Istio/Envoy would write to status, since none runs here.

It talks to the API server only through the official ``kubernetes`` client: one list+watch thread per
resource keeps a local cache (a CRD that is not installed is retried until it is), and a reconcile
thread writes status -- Gateways ``Accepted``/``Programmed`` with addresses, HTTPRoute
``status.parents``, InferencePool ``status.parents`` (v1) / ``status.parent`` (v1alpha2) -- only
when it differs from what is stored, so an idle world costs no writes.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any, Self, cast

import urllib3
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch
from kubernetes.client.exceptions import ApiException

from llmisvc_devstack.controllers.gateway_status import (
    ControllerConfig,
    gateway_status,
    gatewayclass_status,
    meta,
    pool_parents,
    route_parents,
    routes_by_pool,
)
from llmisvc_devstack.controlplane.crds import GATEWAY_GROUP, POOL_V1_GROUP, POOL_V1ALPHA2_GROUP

Obj = dict[str, Any]
log = logging.getLogger(__name__)
__all__ = ["ControllerConfig", "Informer", "SimulatedGatewayController"]


def _rv(obj: Obj) -> int:
    try:
        return int(meta(obj).get("resourceVersion") or 0)
    except ValueError:
        return 0


class Informer:
    """List+watch of one custom resource (all namespaces) into a dict, calling ``on_change``."""

    def __init__(
        self,
        api: k8s.CustomObjectsApi,
        gvr: tuple[str, str, str],
        on_change: Callable[[], None],
        stopping: threading.Event,
    ) -> None:
        self.api, self.gvr, self.on_change, self.stopping = api, gvr, on_change, stopping
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], Obj] = {}
        self._watch: k8s_watch.Watch | None = None
        self.synced = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"informer-{gvr[2]}.{gvr[0]}", daemon=True)

    def items(self) -> list[Obj]:
        with self._lock:
            return list(self._cache.values())

    def put(self, obj: Obj, deleted: bool = False) -> None:
        """Record ``obj`` unless the cache already holds a newer version of it."""
        key = (str(meta(obj).get("namespace", "")), str(meta(obj).get("name", "")))
        with self._lock:
            held = self._cache.get(key)
            if held is not None and _rv(held) > _rv(obj):
                return
            if deleted:
                self._cache.pop(key, None)
            else:
                self._cache[key] = obj

    def _relist(self) -> str:
        group, version, plural = self.gvr
        listed = cast(dict[str, Any], self.api.list_cluster_custom_object(group, version, plural))
        with self._lock:
            self._cache = {
                (str(meta(o).get("namespace", "")), str(meta(o)["name"])): o for o in listed["items"]
            }
        self.synced.set()
        self.on_change()
        return str(listed["metadata"]["resourceVersion"])

    def _watch_from(self, rv: str) -> str:
        """Follow the watch until it ends; returns the last resourceVersion seen (bookmarks count)."""
        group, version, plural = self.gvr
        self._watch = k8s_watch.Watch()  # type: ignore[no-untyped-call]
        events = self._watch.stream(  # type: ignore[no-untyped-call]
            self.api.list_cluster_custom_object,
            group,
            version,
            plural,
            resource_version=rv,
            allow_watch_bookmarks=True,
            timeout_seconds=30,
            deserialize=False,
        )
        for event in events:
            if self.stopping.is_set():
                break
            rv = str(meta(event["object"]).get("resourceVersion") or rv)
            if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                self.put(event["object"], deleted=event["type"] == "DELETED")
                self.on_change()
        return rv

    def _forget_all(self) -> None:
        with self._lock:
            had_items, self._cache = bool(self._cache), {}
        self.synced.set()
        if had_items:
            self.on_change()

    def _run(self) -> None:
        # Like client-go's reflector: list once, then keep watching from the last version seen;
        # relist only when the watch fails (410 Gone, a cut connection, a CRD that went away).
        rv: str | None = None
        while not self.stopping.is_set():
            try:
                rv = self._watch_from(rv if rv is not None else self._relist())
            except ApiException as exc:
                rv = None
                if exc.status == 404:  # the CRD is not installed (yet): nothing to see
                    self._forget_all()
                self.stopping.wait(0.5 if exc.status == 404 else 0.1)
            except Exception:  # connection cut (shutdown, dropped watch): relist after a pause
                rv = None
                self.stopping.wait(0.1)

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()  # type: ignore[no-untyped-call]


class SimulatedGatewayController:
    def __init__(self, api_client: k8s.ApiClient, config: ControllerConfig | None = None) -> None:
        self.api = k8s.CustomObjectsApi(api_client)
        self.config = config or ControllerConfig()
        self.stopping = threading.Event()
        self._dirty = threading.Event()
        self.writes = 0
        self._reconcile_lock = threading.Lock()
        self._failed = False  # an object of the last round could not be handled: another round soon
        gvrs = {
            "gateways": (GATEWAY_GROUP, "v1", "gateways"),
            "httproutes": (GATEWAY_GROUP, "v1", "httproutes"),
            "gatewayclasses": (GATEWAY_GROUP, "v1", "gatewayclasses"),
            POOL_V1_GROUP: (POOL_V1_GROUP, "v1", "inferencepools"),
            POOL_V1ALPHA2_GROUP: (POOL_V1ALPHA2_GROUP, "v1alpha2", "inferencepools"),
        }
        self.informers = {
            name: Informer(self.api, gvr, self._dirty.set, self.stopping) for name, gvr in gvrs.items()
        }
        self._thread = threading.Thread(target=self._loop, name="gateway-controller", daemon=True)

    def start(self) -> Self:
        for informer in self.informers.values():
            informer.thread.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._dirty.set()
        for informer in self.informers.values():
            informer.stop()
        for thread in [self._thread, *(i.thread for i in self.informers.values())]:
            if thread.is_alive():
                thread.join(timeout=5)

    def configure(self, **changes: Any) -> None:
        """Change the behaviour (e.g. ``reject_routes=True``) and reconcile everything again."""
        self.config = dataclasses.replace(self.config, **changes)
        self._dirty.set()

    def wait_synced(self, timeout: float = 10.0) -> bool:
        return all(i.synced.wait(timeout) for i in self.informers.values())

    def _loop(self) -> None:
        while not self.stopping.is_set():
            self._dirty.wait()
            if self.stopping.is_set():
                return
            self._dirty.clear()
            if self.config.lag_seconds > 0 and self.stopping.wait(self.config.lag_seconds):
                return
            try:
                self.reconcile_once()
                failed = self._failed
            except Exception:  # a failed read of the informers: try again shortly
                failed = True
            if failed and not self.stopping.wait(0.1):  # a failed write (faults, a conflict): again soon
                self._dirty.set()
            # Changes that arrive meanwhile make one more round, not one round each: every round reads
            # every route and pool.
            self.stopping.wait(self.config.min_round_seconds)

    def reconcile_once(self) -> int:
        """One pass over the cached world; returns how many status writes it made."""
        with self._reconcile_lock:
            config, before = self.config, self.writes
            self._failed = False
            routes = self.informers["httproutes"].items()
            self._reconcile_gateways(config)
            self._reconcile_routes(config, routes)
            self._reconcile_pools(config, routes)
            return self.writes - before

    def _reconcile_gateways(self, config: ControllerConfig) -> None:
        def gateway(obj: Obj) -> None:
            class_name = (obj.get("spec") or {}).get("gatewayClassName")
            if config.gateway_class_names is None or class_name in config.gateway_class_names:
                self._write("gateways", obj, gateway_status(obj, config))

        def gateway_class(obj: Obj) -> None:
            status = gatewayclass_status(obj, config)
            if status is not None:
                self._write("gatewayclasses", obj, status)

        self._each(self.informers["gateways"].items(), gateway)
        self._each(self.informers["gatewayclasses"].items(), gateway_class)

    def _reconcile_routes(self, config: ControllerConfig, routes: list[Obj]) -> None:
        def route(obj: Obj) -> None:
            current = dict(obj.get("status") or {})
            parents = route_parents(obj, config)
            if parents or "parents" in current:  # a route without parentRefs gets no status at all
                self._write("httproutes", obj, {**current, "parents": parents})

        self._each(routes, route)

    def _reconcile_pools(self, config: ControllerConfig, routes: list[Obj]) -> None:
        by_pool = routes_by_pool(routes)
        for group, key in ((POOL_V1_GROUP, "parents"), (POOL_V1ALPHA2_GROUP, "parent")):

            def pool(obj: Obj, group: str = group, key: str = key) -> None:
                pool_key = (group, str(meta(obj).get("namespace", "")), str(meta(obj).get("name")))
                parents = pool_parents(obj, group, by_pool.get(pool_key, []), config)
                status = {k: v for k, v in (obj.get("status") or {}).items() if k != key}
                if parents:
                    status[key] = parents
                self._write(group, obj, status)

            self._each(self.informers[group].items(), pool)

    def _each(self, objects: Iterable[Obj], handle: Callable[[Obj], None]) -> None:
        """One object at a time, as a real controller's work queue: an object that cannot be handled (a
        failed write, or a malformed object) does not end the round for the others."""
        for obj in objects:
            try:
                handle(obj)
            except (ApiException, urllib3.exceptions.HTTPError, OSError):
                self._failed = True  # a refused or lost write: the next round tries again
            except Exception as err:  # malformed: skipped until it changes (a change makes a round)
                log.debug("simulated gateway controller: skipped %s: %r", meta_name(obj), err)

    def _write(self, informer_name: str, obj: Obj, status: Obj) -> None:
        if (obj.get("status") or {}) == status:
            return
        informer = self.informers[informer_name]
        group, version, plural = informer.gvr
        m = meta(obj)
        patch = {"status": {**{k: None for k in obj.get("status") or {} if k not in status}, **status}}
        if m.get("namespace"):
            updated = self.api.patch_namespaced_custom_object_status(
                group, version, m["namespace"], plural, m["name"], patch
            )
        else:
            updated = self.api.patch_cluster_custom_object_status(group, version, plural, m["name"], patch)
        self.writes += 1
        informer.put(cast(Obj, updated))


def meta_name(obj: Obj) -> str:
    found = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(found, dict):
        return "an object without metadata"
    return f"{obj.get('kind', 'object')} {found.get('namespace', '')}/{found.get('name', '')}"
