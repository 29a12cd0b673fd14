"""Server-side printing: ``meta.k8s.io/v1`` Table answers for clients that ask (``kubectl get``).

Columns are NAME and AGE, or NAME and the CRD's ``additionalPrinterColumns`` (simple ``.a.b[0].c``
JSON paths only), which is what a real server prints for a resource without a dedicated printer.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from apiserver_standin.api import Response
from apiserver_standin.objects import meta
from apiserver_standin.registry import ResourceInfo

_PATH_TOKEN = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


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
    node = obj
    for match in _PATH_TOKEN.finditer(path):
        key, index = match.group(1), match.group(2)
        if key is not None and isinstance(node, dict):
            node = node.get(key)
        elif index is not None and isinstance(node, list) and int(index) < len(node):
            node = node[int(index)]
        else:
            return None
    return node


def _columns(info: ResourceInfo) -> list[dict[str, Any]]:
    name = {"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0}
    extra = [
        {
            "name": c.get("name", ""),
            "type": c.get("type", "string"),
            "format": "",
            "description": c.get("description", ""),
            "priority": c.get("priority", 0),
        }
        for c in info.printer_columns
    ]
    if extra:  # a CRD's own columns replace the default AGE column, as on a real server
        return [name, *extra]
    return [name, {"name": "Age", "type": "date", "format": "", "description": "Age", "priority": 0}]


def _row(info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
    m = meta(obj)
    cells: list[Any] = [m.get("name", "")]
    for column in info.printer_columns:
        value = json_path(obj, str(column.get("jsonPath", "")))
        cells.append(age(value) if column.get("type") == "date" else value)
    if not info.printer_columns:
        cells.append(age(m.get("creationTimestamp")))
    partial = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": m}
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
