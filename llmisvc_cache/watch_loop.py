"""List+watch loops over the Kubernetes API, one thread per collection: the informers behind the
cluster cache. With ``activities.kube_api``, the only module that imports the ``kubernetes`` client.

Each loop keeps the last state it knows of every object in a :class:`~llmisvc_cache.store.TargetStore`
(which the cache reads), so nothing is missed whatever happens to the stream: a watch that ends or
breaks is resumed from the last resourceVersion seen (bookmarks included); when the server answers 410
Gone the loop lists again and reports the difference from what it knew — additions, changes (another
resourceVersion) and deletions. A kind that is not served (its CRD is not installed: 404) reads as an
empty collection and is polled with backoff until it appears; a CRD event can
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

import contextlib
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import urllib3
from kubernetes import client as k8s
from kubernetes.watch.watch import iter_resp_lines

from llmisvc_cache.model import ADDED, DELETED, MODIFIED, LoopHealth, Tuning, WatchEvent, WatchTarget, Wire
from llmisvc_cache.store import TargetStore, object_key, resource_version
from llmisvc_core.models.kube import collection_path

log = logging.getLogger(__name__)

JSON = "application/json"
CONNECT_TIMEOUT = 5.0
LIST_READ_TIMEOUT = 60.0
QUICK_END_SECONDS = 1.0  # a watch that ends this fast with nothing in it is treated as a failure

Key = tuple[str, str]
Emit = Callable[[WatchEvent], None]
ApiClient = k8s.ApiClient  # so the other watcher modules can name the type without importing kubernetes


class KubernetesUnreachable(Exception):  # noqa: N818 - reads as the state it reports
    """The API server did not answer a plain version request."""


def check_reachable(api_client: ApiClient, timeout: float = 10.0) -> None:
    """Fail fast at start-up with one readable line when the API server cannot be reached."""
    host = api_client.configuration.host
    try:
        k8s.VersionApi(api_client).get_code(_request_timeout=(CONNECT_TIMEOUT, timeout))
    except k8s.ApiException as err:
        raise KubernetesUnreachable(
            f"the Kubernetes API at {host} answered {err.status} {err.reason}"
        ) from err
    except (urllib3.exceptions.HTTPError, OSError) as err:
        reason = str(getattr(err, "reason", None) or err)
        # urllib3 prefixes the connection's repr ("HTTPConnection(host=..., port=...): "); the URL says it.
        reason = reason.split("): ", 1)[-1]
        raise KubernetesUnreachable(f"cannot reach the Kubernetes API at {host}: {reason}") from err


class _Gone(Exception):  # noqa: N818 - a signal to relist, not an error
    """410: the server no longer has the events after our resourceVersion."""


class _NotServed(Exception):  # noqa: N818 - a state of the cluster, not an error
    """404: the kind is not installed (no CRD yet, or it was removed)."""


class _FailedError(Exception):
    """Any other answer that is not a success; retried with backoff."""


class _RetryAfter(Exception):  # noqa: N818 - the server's request for a pause, not an error
    """429 with ``Retry-After``: the server says when to ask again."""

    def __init__(self, message: str, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


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
        self._response: urllib3.HTTPResponse | None = None
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
            response = self._response
        if response is not None:
            # Already finished or released: nothing to interrupt.
            with contextlib.suppress(ValueError, RuntimeError, OSError):
                response.shutdown()

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

    def _failed(self, description: str) -> None:
        since = self._failing[0] if self._failing else time.monotonic()
        self._failing = (since, description)

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
            except _Gone:
                log.info("watch of %s expired (410 Gone): listing again", self.target)
                self._version = None
                continue
            except _RetryAfter as asked:
                self._failed(str(asked))
                log.debug("%s: %s; listing again in %.1fs", self.target, asked, asked.seconds)
                self._wait(min(asked.seconds, self._tuning.backoff_cap))
                continue
            except _NotServed:
                self._forget_all()
                self.synced.set()
                self._version = None
                failures += 1
                log.debug("%s is not served (yet): retrying", self.target)
            except Exception as err:  # any failure, known or not, must not end the loop
                failures += 1
                self._failed(_describe(err))
                log.warning("watch of %s failed (%s); retrying", self.target, _describe(err))
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
        response = self._get(self._query())
        try:
            body = json.loads(response.data or b"{}")
        finally:
            response.release_conn()
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
        response = self._get(query, read_timeout)
        with self._lock:
            self._response = response
        try:
            for event in _events(response):
                self._version = self._handle(event) or self._version
                progressed = True
        except (urllib3.exceptions.HTTPError, OSError):
            if not self._stopping.is_set():
                raise
        finally:
            with self._lock:
                self._response = None
            response.close()  # never hand a cut or half-read stream back to the pool
            response.release_conn()
        return progressed or time.monotonic() - started >= QUICK_END_SECONDS

    def _handle(self, event: dict[str, Any]) -> str | None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            code = obj.get("code")
            if code == 410:
                raise _Gone()
            raise _FailedError(f"watch error {code}: {obj.get('message')}")
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

    def _get(self, query: list[tuple[str, str]], read_timeout: float = LIST_READ_TIMEOUT) -> Any:
        """GET the collection; the raw urllib3 response (not yet read) on success."""
        path = collection_path(self.target.resource, self.target.namespace)
        _, url, headers, _, _ = self._api_client.param_serialize(
            "GET", path, query_params=query, header_params={"Accept": JSON}, auth_settings=["BearerToken"]
        )
        answer = self._api_client.call_api(
            "GET", url, headers, _request_timeout=(CONNECT_TIMEOUT, read_timeout)
        )
        response = answer.response
        if response.status in (200, 404, 410):
            self._failing = None  # the server answers: whatever failed before is over
        if response.status == 200:
            return response
        data = response.data
        response.release_conn()
        if response.status == 410:
            raise _Gone()
        if response.status == 404:
            raise _NotServed()
        message = f"GET {path}: HTTP {response.status}: {_message(data)}"
        pause = _retry_after(response) if response.status == 429 else None
        if pause is not None:
            raise _RetryAfter(message, pause)
        raise _FailedError(message)

    def _stamp(self, obj: Wire) -> Wire:
        """List items come without apiVersion/kind; put them back so every object stands alone. The
        ``managedFields`` are dropped, as client-go informers' usual transform does: no pass reads them,
        and they are often the larger part of an object kept in memory for every service."""
        resource = self.target.resource
        meta = obj.get("metadata") or {}
        if "managedFields" in meta:
            obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
        if obj.get("apiVersion") == resource.api_version and obj.get("kind") == resource.kind:
            return obj
        return {**obj, "apiVersion": resource.api_version, "kind": resource.kind}


def _events(response: Any) -> Iterator[dict[str, Any]]:
    for line in iter_resp_lines(response):  # type: ignore[no-untyped-call]
        if line.strip():
            yield json.loads(line)


def _retry_after(response: Any) -> float | None:
    """The seconds of a ``Retry-After`` header (kube-apiserver sends whole seconds), if any."""
    value = response.headers.get("Retry-After")
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None


def _message(data: bytes) -> str:
    try:
        decoded = json.loads(data)
    except ValueError:
        return data[:200].decode(errors="replace")
    return str(decoded.get("message")) if isinstance(decoded, dict) else str(decoded)[:200]


def _describe(err: Exception) -> str:
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
