"""Kubernetes Events on the LLMInferenceService (``events.k8s.io/v1``), so that ``kubectl describe`` shows
the history a Go controller would leave: what a pass wrote, when the router became or stopped being
ready, a spec the router cannot read, a write the API server refused.

Events are deduplicated as client-go's event recorder does it: an event like one recorded in the last
:data:`SERIES_WINDOW` (same object, type, reason, action and note) is not created again; the existing
Event's ``series`` is bumped instead (``count``, ``lastObservedTime``). Callers emit on changes only
(a status that changed, a write that was made), never once per pass for an unchanged state. Recording
is best effort, as in client-go: a failure is logged and never fails the pass.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from llmisvc_core.models.kube import ResourceType
from llmisvc_kube.api import ApiError, ClusterApi, Failure, Wire

EVENT = ResourceType("events.k8s.io", "v1", "Event", "events")
CONTROLLER = "llmisvc-router"
SERIES_WINDOW = timedelta(minutes=30)
NOTE_LIMIT = 1024  # the API server refuses longer notes
NORMAL, WARNING = "Normal", "Warning"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EventSpec:
    """One thing worth telling about the object: ``reason`` in CamelCase, ``note`` in words."""

    type: str
    reason: str
    note: str
    action: str = "Reconcile"


@dataclass
class _Series:
    name: str
    count: int
    last: datetime


def _micro_time(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def regarding(obj: Wire) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    ref = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "resourceVersion": meta.get("resourceVersion"),
    }
    return {key: value for key, value in ref.items() if value}


class EventRecorder:
    """Records Events through a :class:`~llmisvc_kube.api.ClusterApi`; safe across activity threads."""

    def __init__(self, api: ClusterApi, instance: str | None = None) -> None:
        self.api = api
        self.instance = instance or os.environ.get("POD_NAME") or socket.gethostname()
        self._series: dict[tuple[str, ...], _Series] = {}
        self._last_stamp = 0
        self._lock = threading.Lock()

    def record(self, obj: Wire, event: EventSpec, now: datetime | None = None) -> None:
        when = now or datetime.now(UTC)
        target = regarding(obj)
        key = (target.get("uid", ""), target.get("namespace", ""), target.get("name", ""), event.type,
               event.reason, event.action, event.note)  # fmt: skip
        with self._lock:
            self._forget_older_than(when - SERIES_WINDOW)
            series = self._series.get(key)
            try:
                if series is None:
                    self._series[key] = _Series(self._create(target, event, when), 1, when)
                else:
                    series.count, series.last = series.count + 1, when
                    self._bump(target, event, series)
            except ApiError as err:
                log.debug("event %s on %s/%s not recorded: %s", event.reason, target.get("namespace"),
                          target.get("name"), err.message)  # fmt: skip

    def _create(self, target: dict[str, Any], event: EventSpec, when: datetime) -> str:
        # client-go's naming: the object's name and the time in nanoseconds. Python's clock has
        # microseconds, so two Events of one moment (several condition changes of one status write) would
        # share a name and kube-apiserver would refuse the second (409): the stamp never repeats.
        self._last_stamp = max(int(when.timestamp() * 1e6) * 1000, self._last_stamp + 1)
        name = f"{target.get('name', 'object')}.{self._last_stamp:x}"
        body = {
            "apiVersion": EVENT.api_version,
            "kind": EVENT.kind,
            "metadata": {"name": name, "namespace": target.get("namespace", "default")},
            "eventTime": _micro_time(when),
            "reportingController": CONTROLLER,
            "reportingInstance": self.instance,
            "action": event.action,
            "reason": event.reason,
            "regarding": target,
            "note": event.note[:NOTE_LIMIT],
            "type": event.type,
        }
        self.api.create(EVENT, body)
        return name

    def _bump(self, target: dict[str, Any], event: EventSpec, series: _Series) -> None:
        patch = {"series": {"count": series.count, "lastObservedTime": _micro_time(series.last)}}
        try:
            self.api.patch_merge(EVENT, target.get("namespace", ""), series.name, patch)
        except ApiError as err:
            if err.failure is not Failure.ABSENT:
                raise
            # Expired (the API server keeps Events for an hour) or deleted: start a new one.
            series.name, series.count = self._create(target, event, series.last), 1

    def _forget_older_than(self, cutoff: datetime) -> None:
        for key in [k for k, s in self._series.items() if s.last < cutoff]:
            del self._series[key]
