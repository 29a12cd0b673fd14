"""List+watch loops over the Kubernetes API, one thread per collection: the informers behind the
cluster cache. The requests and the stream are :mod:`llmisvc_kube.stream`'s; their failures are read as
every API failure is (:class:`~llmisvc_kube.api.Failure`).

Each loop keeps the last state it knows of every object in a :class:`~llmisvc_cache.store.TargetStore`
(which the cache reads), so nothing is missed whatever happens to the stream: a watch that ends or
breaks is resumed from the last resourceVersion seen (bookmarks included); when the server answers 410
Gone the loop lists again and reports the difference from what it knew — additions, changes (another
resourceVersion) and deletions. A kind that is not served (its CRD is not installed: absent, 404) reads
as an empty collection and is polled with backoff until it appears; a CRD event can
:meth:`~ResourceWatch.wake` the loop so it does not wait out the backoff, which then starts again from
its first step (kube-apiserver serves a kind moments after its CRD's last event). A 429 with
``Retry-After`` is tried again after that pause, as client-go does: kube-apiserver answers so ("storage is
(re)initializing", ``Retry-After: 1``) while the watch cache of a CRD just installed, or of any kind after
a restart, fills; counted as a failure, it grew the backoff past the seconds the cache took. Other
failures (connection refused, 5xx, 403) back off exponentially up to a cap. Events are handed to
``emit`` from the loop's thread; the caller moves them to its event loop. :meth:`ResourceWatch.health`
says whether the loop has listed and since when its requests fail, for the readiness probe.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from llmisvc_cache.model import ADDED, DELETED, MODIFIED, LoopHealth, Tuning, WatchEvent, WatchTarget, Wire
from llmisvc_cache.store import TargetStore, object_key, resource_version
from llmisvc_core.models import kube
from llmisvc_kube.api import ApiError, Failure
from llmisvc_kube.client import ApiClient
from llmisvc_kube.stream import LIST_READ_TIMEOUT, Collection, get_collection

log = logging.getLogger(__name__)

QUICK_END_SECONDS = 1.0  # a watch that ends this fast with nothing in it is treated as a failure

Key = tuple[str, str]
Emit = Callable[[WatchEvent], None]


class ResourceWatch:
    """Lists and watches one :class:`WatchTarget` in a daemon thread until :meth:`stop`."""

    def __init__(self, api_client: ApiClient, target: WatchTarget, emit: Emit, tuning: Tuning) -> None:
        self.target = target
        self.synced = threading.Event()  # set once the first list succeeded or found the kind not served
        self._api_client = api_client
        self._emit = emit
        self._tuning = tuning
        self.store = TargetStore()
        self._version: str | None = None  # resume point; None: list (again) first
        self._listed = False
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._stream: Collection | None = None
        self._started = time.monotonic()
        #: When the current run of failures began and the latest one; None while the server answers.
        #: One tuple, replaced whole, so the probe's thread never reads half of it.
        self._failing: tuple[float, str] | None = None
        self._thread = threading.Thread(target=self._run, name=f"watch {target}", daemon=True)

    def start(self) -> ResourceWatch:
        self._thread.start()
        return self

    def wake(self) -> None:
        """Retry now if the loop is waiting out a backoff (a CRD it may need appeared)."""
        self._wake.set()

    def stop(self) -> None:
        """Ask the loop to end and cut its open stream, so it ends within moments."""
        self._stopping.set()
        self._wake.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.cut()

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def health(self) -> LoopHealth:
        """The loop's progress as the readiness probe judges it (safe from any thread)."""
        failing = self._failing
        return LoopHealth(
            str(self.target),
            self._started,
            self.synced.is_set(),
            failing[0] if failing else None,
            failing[1] if failing else "",
        )

    def _failed(self, err: Exception) -> None:
        self._failing = self._failing_since(_describe(err))
        log.warning("watch of %s failed (%s); retrying", self.target, _describe(err))

    def _failing_since(self, description: str) -> tuple[float, str]:
        return (self._failing[0] if self._failing else time.monotonic(), description)

    # --- the loop ------------------------------------------------------------------------------------

    def _run(self) -> None:
        failures = 0
        while not self._stopping.is_set():
            try:
                if self._version is None:
                    self._relist()
                    failures = 0
                if self._watch():
                    failures = 0
                    continue
                failures += 1  # ended at once with nothing in it: do not spin
            except ApiError as err:
                if err.expired:
                    log.info("watch of %s expired (410 Gone): listing again", self.target)
                    self._version = None
                    continue
                if err.status == 429 and err.retry_after is not None:
                    self._failing = self._failing_since(_describe(err))
                    log.debug("%s: %s; listing again in %.1fs", self.target, err, err.retry_after)
                    self._wait(min(err.retry_after, self._tuning.backoff_cap))
                    continue
                failures += 1
                if err.failure is Failure.ABSENT:
                    self._forget_all()
                    self.synced.set()
                    self._version = None
                    log.debug("%s is not served (yet): retrying", self.target)
                else:
                    self._failed(err)
            except Exception as err:  # any failure, known or not, must not end the loop
                failures += 1
                self._failed(err)
            if self._pause(failures):
                failures = 0  # woken (a CRD changed): the kind may be served now, or within moments

    def _pause(self, failures: int) -> bool:
        """Back off for ``failures``; whether :meth:`wake` ended the pause early."""
        delay = min(self._tuning.backoff_cap, self._tuning.backoff_first * 2 ** max(failures - 1, 0))
        return self._wait(delay * random.uniform(0.8, 1.0))

    def _wait(self, seconds: float) -> bool:
        woken = self._wake.wait(seconds)
        self._wake.clear()
        return woken

    def _relist(self) -> None:
        """List, report what differs from the last known state, and resume from the list's version."""
        body = self._get(self._query()).body()
        initial = not self._listed
        current = {object_key(obj): obj for obj in (self._stamp(item) for item in body.get("items") or [])}
        known = self.store.snapshot()
        # The store changes before the events go out, so a listener that reads the cache on an event
        # sees at least that event's state.
        self.store.replace_all(current)
        for key, obj in current.items():
            old = known.get(key)
            if old is None:
                event = WatchEvent(ADDED, self.target.resource, obj, initial=initial, relisted=not initial)
                self._report(event)
            elif resource_version(old) != resource_version(obj):
                self._report(WatchEvent(MODIFIED, self.target.resource, obj, old, relisted=True))
        for key in sorted(set(known) - set(current)):
            self._report(WatchEvent(DELETED, self.target.resource, known[key], None, relisted=True))
        self._listed = True
        self.synced.set()
        self._version = str((body.get("metadata") or {}).get("resourceVersion") or "")

    def _watch(self) -> bool:
        """Follow the stream from the last version seen; whether anything came or it lasted a while.

        Every event and bookmark moves the version on, so a stream cut at any point resumes right after
        the last event handled and nothing is reported twice."""
        query = [
            *self._query(),
            ("watch", "true"),
            ("resourceVersion", self._version or ""),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(self._tuning.watch_timeout_seconds)),
        ]
        read_timeout = self._tuning.watch_timeout_seconds + 15.0
        started = time.monotonic()
        progressed = False
        stream = self._get(query, read_timeout)
        with self._lock:
            self._stream = stream
        try:
            for event in stream.events():
                self._version = self._handle(event) or self._version
                progressed = True
        except ApiError as err:
            if err.status != 0 or not self._stopping.is_set():
                raise  # a stream cut by stop() ends quietly
        finally:
            with self._lock:
                self._stream = None
            stream.close()
        return progressed or time.monotonic() - started >= QUICK_END_SECONDS

    def _handle(self, event: dict[str, Any]) -> str | None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "BOOKMARK":
            return resource_version(obj) or None
        if kind not in (ADDED, MODIFIED, DELETED):
            return None
        obj = self._stamp(obj)
        key = object_key(obj)
        old = self.store.get(key)
        if kind != DELETED and old is not None and resource_version(old) == resource_version(obj):
            return resource_version(obj) or None  # seen already (a replayed event): not a change
        if kind == DELETED:
            self.store.remove(key, resource_version(obj))
        else:
            self.store.put(key, obj)
        # The stream's ADDED for an object already known (a resumed watch) is a modification.
        type_ = MODIFIED if kind == ADDED and old is not None else kind
        self._report(WatchEvent(type_, self.target.resource, obj, old if kind != DELETED else None))
        return resource_version(obj) or None

    def _forget_all(self) -> None:
        """The kind is gone: every object once known is deleted."""
        known = self.store.snapshot()
        self.store.replace_all({}, served=False)
        for key in sorted(known):
            self._report(WatchEvent(DELETED, self.target.resource, known[key], relisted=True))

    def _report(self, event: WatchEvent) -> None:
        if not self._stopping.is_set():
            self._emit(event)

    # --- HTTP ----------------------------------------------------------------------------------------

    def _query(self) -> list[tuple[str, str]]:
        query = []
        if self.target.label_selector:
            query.append(("labelSelector", self.target.label_selector))
        if self.target.field_selector:
            query.append(("fieldSelector", self.target.field_selector))
        return query

    def _get(self, query: list[tuple[str, str]], read_timeout: float = LIST_READ_TIMEOUT) -> Collection:
        """GET the collection; its open answer on success."""
        try:
            stream = get_collection(
                self._api_client, self.target.resource, self.target.namespace, query, read_timeout
            )
        except ApiError as err:
            if err.failure is Failure.ABSENT or err.expired:
                self._failing = None  # the server answers: whatever failed before is over
            raise
        self._failing = None
        return stream

    def _stamp(self, obj: Wire) -> Wire:
        """List items come without apiVersion/kind; put them back so every object stands alone. The
        ``managedFields`` are dropped, as client-go informers' usual transform does: no pass reads them,
        and they are often the larger part of an object kept in memory for every service. So are a
        CRD's schemas (:func:`without_schemas`)."""
        resource = self.target.resource
        meta = obj.get("metadata") or {}
        if "managedFields" in meta:
            obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
        if resource == kube.CRD:
            obj = without_schemas(obj)
        if obj.get("apiVersion") == resource.api_version and obj.get("kind") == resource.kind:
            return obj
        return {**obj, "apiVersion": resource.api_version, "kind": resource.kind}


def without_schemas(crd: Wire) -> Wire:
    """A CustomResourceDefinition without its versions' ``schema``: a pass and the trigger rules read its
    group, names, versions served and conditions, never the OpenAPI schema, which is most of the object:
    the cache holds every CRD of the cluster, and KServe's two LLMInferenceService CRDs alone decode to
    11 MiB in each process that caches them, 20 KiB without their schemas."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return crd
    versions = spec.get("versions")
    if not isinstance(versions, list) or not any(isinstance(v, dict) and "schema" in v for v in versions):
        return crd
    kept = [
        {k: v for k, v in version.items() if k != "schema"} if isinstance(version, dict) else version
        for version in versions
    ]
    return {**crd, "spec": {**spec, "versions": kept}}


def _describe(err: Exception) -> str:
    if isinstance(err, ApiError):
        return f"HTTP {err.status}: {err.message}" if err.status else err.message
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
