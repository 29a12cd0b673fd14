"""Events are one resource seen through two APIs: core ``v1`` and ``events.k8s.io/v1``.

A real API server stores Events once (in the core form) and converts on the way in and out, so an
Event the router writes through ``events.k8s.io/v1`` is what ``kubectl describe`` lists through core
``v1``. This module is that conversion (the field renames of Kubernetes' own events conversion) and
the field labels each API lets a ``fieldSelector`` use. Objects are stored in the core form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
EVENTS_GROUP = "events.k8s.io"

# events.k8s.io/v1 field -> core v1 field; every other known field has the same name in both.
_RENAMED = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)
_SAME = (
    "apiVersion", "kind", "metadata", "eventTime", "series", "reportingInstance", "action", "reason",
    "related", "type",
)  # fmt: skip


def is_events_api(group: str, plural: str) -> bool:
    return group == EVENTS_GROUP and plural == "events"


def _convert(obj: Obj, renames: list[tuple[str, str]]) -> Obj:
    # Only the fields the target version declares survive, as when a real server decodes a body.
    out = {key: obj[key] for key in _SAME if key in obj}
    out.update({new: obj[old] for old, new in renames if old in obj})
    return out


def to_storage(group: str, plural: str, body: Any) -> Any:
    """A body written through ``group``/``plural`` in the stored (core v1) form."""
    if not is_events_api(group, plural) or not isinstance(body, dict):
        return body
    return _convert(body, list(_RENAMED))


def from_storage(group: str, plural: str, obj: Obj) -> Obj:
    """A stored Event as ``group``/``plural`` serves it (the caller sets ``apiVersion``)."""
    if not is_events_api(group, plural):
        return obj
    return _convert(obj, [(core, events) for events, core in _RENAMED])


def _path(*keys: str) -> Callable[[Obj], str]:
    def get(obj: Obj) -> str:
        value: Any = obj
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        return "" if value is None else str(value)

    return get


_REFERENCE_FIELDS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")

# The field labels of core v1 Events, read from the stored (core) form.
CORE_FIELDS: dict[str, Callable[[Obj], str]] = {
    **{f"involvedObject.{f}": _path("involvedObject", f) for f in _REFERENCE_FIELDS},
    "reason": _path("reason"),
    "reportingComponent": _path("reportingComponent"),
    "source": _path("source", "component"),
    "type": _path("type"),
}

# events.k8s.io/v1 names the same selectable fields after its own field names.
EVENTS_FIELDS: dict[str, Callable[[Obj], str]] = {
    **{f"regarding.{f}": CORE_FIELDS[f"involvedObject.{f}"] for f in _REFERENCE_FIELDS},
    "reason": CORE_FIELDS["reason"],
    "reportingController": CORE_FIELDS["reportingComponent"],
    "type": CORE_FIELDS["type"],
}


def field_labels(group: str, plural: str) -> dict[str, Callable[[Obj], str]]:
    """The resource-specific field labels (beyond ``metadata.name`` and ``metadata.namespace``)."""
    if plural != "events":
        return {}
    if group == "":
        return CORE_FIELDS
    return EVENTS_FIELDS if group == EVENTS_GROUP else {}
