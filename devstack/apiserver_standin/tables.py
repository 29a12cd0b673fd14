"""Server-side printing: ``meta.k8s.io/v1`` Table answers for clients that ask (``kubectl get``).

Columns are NAME and AGE, or NAME and the CRD's ``additionalPrinterColumns`` evaluated with
Kubernetes' JSONPath dialect (filters such as ``[?(@.type=='Ready')]``, ``[*]``); as the real
server's CRD table convertor, a column shows its path's first match, a ``string`` column prints a
list or map as JSON, and a ``date`` column is turned into an age. Namespaces add STATUS, as
kubectl shows it; Events print the real event columns (:mod:`apiserver_standin.event_table`).
Columns with ``priority`` > 0 are sent too; ``kubectl -o wide`` shows them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from apiserver_standin import event_table, jsonpath
from apiserver_standin.api import Response
from apiserver_standin.objects import meta
from apiserver_standin.registry import ResourceInfo

_NAMESPACE_COLUMNS = ({"name": "Status", "type": "string", "jsonPath": ".status.phase"},)


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def age(timestamp: str | None) -> str:
    if not timestamp:
        return "<unknown>"
    try:
        created = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return "<invalid>"
    seconds = max(0, int((datetime.now(UTC) - created).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def json_path(obj: Any, path: str) -> Any:
    """The first value ``path`` selects in ``obj`` (None when nothing matches or the path is bad)."""
    try:
        return jsonpath.first(obj, path)
    except jsonpath.JSONPathError:
        return None


def cell(column: dict[str, Any], obj: dict[str, Any]) -> Any:
    value = json_path(obj, str(column.get("jsonPath", "")))
    kind = column.get("type", "string")
    if value is None:
        return None
    if kind == "date":
        return age(value if isinstance(value, str) else None)
    if kind == "string":
        return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return value


def printer_columns(info: ResourceInfo) -> tuple[dict[str, Any], ...]:
    if info.group_resource == ("", "namespaces"):
        return (
            *_NAMESPACE_COLUMNS,
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        )
    return info.printer_columns


def _columns(info: ResourceInfo) -> list[dict[str, Any]]:
    if event_table.is_event(info.group, info.plural):
        return event_table.columns()
    name = {"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0}
    extra = [
        {
            "name": c.get("name", ""),
            "type": c.get("type", "string"),
            "format": "",
            "description": c.get("description", ""),
            "priority": c.get("priority", 0),
        }
        for c in printer_columns(info)
    ]
    if extra:  # a CRD's own columns replace the default AGE column, as on a real server
        return [name, *extra]
    return [name, {"name": "Age", "type": "date", "format": "", "description": "Age", "priority": 0}]


def _row(info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
    m = meta(obj)
    partial = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": m}
    if event_table.is_event(info.group, info.plural):
        return {"cells": event_table.row_cells(info.group, info.plural, obj), "object": partial}
    cells: list[Any] = [m.get("name", "")]
    columns = printer_columns(info)
    cells.extend(cell(column, obj) for column in columns)
    if not columns:
        cells.append(age(m.get("creationTimestamp")))
    return {"cells": cells, "object": partial}


def maybe_table(accept: str, info: ResourceInfo, response: Response) -> Response:
    """Turn a successful get/list answer into a Table when the client asked for one."""
    body = response.body
    if not wants_table(accept) or response.code != 200 or not isinstance(body, dict):
        return response
    if body.get("kind") == info.list_kind:
        items, list_meta = body.get("items") or [], body.get("metadata") or {}
    elif body.get("kind") == info.kind:
        items, list_meta = [body], {"resourceVersion": meta(body).get("resourceVersion", "")}
    else:
        return response
    table = {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": _columns(info),
        "rows": [_row(info, obj) for obj in items],
    }
    return Response(200, table, response.headers)
