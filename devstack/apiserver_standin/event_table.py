"""The Table ``kubectl get events`` prints: the real server's Event columns, for both Event APIs.

LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, and with ``-o wide`` SUBOBJECT, SOURCE, FIRST SEEN, COUNT,
NAME, computed as Kubernetes' event printer does: a series' last observation and count win over the
deprecated timestamps and count, a singleton counts 1, the source falls back to the reporting
controller and instance. Rows are computed from the stored (core) form, whichever API was asked.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from apiserver_standin import event_versions

Obj = dict[str, Any]

_COLUMNS = (
    ("Last Seen", 0, ""),
    ("Type", 0, ""),
    ("Reason", 0, ""),
    ("Object", 0, ""),
    ("Subobject", 1, ""),
    ("Source", 1, ""),
    ("Message", 0, ""),
    ("First Seen", 1, ""),
    ("Count", 1, ""),
    ("Name", 1, "name"),
)


def is_event(group: str, plural: str) -> bool:
    return plural == "events" and group in ("", event_versions.EVENTS_GROUP)


def columns() -> list[Obj]:
    return [
        {"name": name, "type": "string", "format": fmt, "description": name, "priority": priority}
        for name, priority, fmt in _COLUMNS
    ]


def since(timestamp: Any) -> str:
    """An age as the event printer shows one, from a Time or MicroTime; ``<unknown>`` if unset."""
    if not isinstance(timestamp, str) or not timestamp:
        return "<unknown>"
    try:
        when = datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return "<invalid>"
    seconds = max(0, int((datetime.now(UTC) - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def row_cells(group: str, plural: str, served: Obj) -> list[Any]:
    event = event_versions.to_storage(group, plural, served)
    involved = event.get("involvedObject") or {}
    source = event.get("source") or {}
    first = (
        since(event.get("firstTimestamp")) if event.get("firstTimestamp") else since(event.get("eventTime"))
    )
    last = since(event.get("lastTimestamp")) if event.get("lastTimestamp") else first
    count = int(event.get("count") or 0)
    series = event.get("series")
    if isinstance(series, dict):
        last, count = since(series.get("lastObservedTime")), int(series.get("count") or 0)
    elif count == 0:
        count = 1  # a singleton Event of the new API has no count
    kind, name = str(involved.get("kind") or "").lower(), str(involved.get("name") or "")
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    origin = "<unknown>" if not component else (f"{component}, {instance}" if instance else component)
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        f"{kind}/{name}" if name else kind,
        involved.get("fieldPath", ""),
        origin,
        str(event.get("message") or "").strip(),
        first,
        count,
        (event.get("metadata") or {}).get("name", ""),
    ]
