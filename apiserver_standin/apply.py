"""Server-side apply (``application/apply-patch+yaml``): create-or-merge with field ownership.

Each apply manager's set of owned fields is kept in ``metadata.managedFields`` (``FieldsV1`` format);
a field the manager applied before but omits now is removed, unless another apply manager owns it.
Lists are owned atomically. Conflicts between managers are not detected (``force`` is accepted and
ignored): the stand-in tracks ownership only for ``Apply`` operations, not for plain updates.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver_standin.errors import bad_request

Path = tuple[str, ...]

# Fields the server sets; applying them is meaningless and they are never "owned".
_SYSTEM_METADATA = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)


def owned_paths(config: dict[str, Any]) -> set[Path]:
    """Leaf paths set by an apply configuration (a dict is a node, anything else a leaf)."""
    paths: set[Path] = set()

    def walk(node: dict[str, Any], prefix: Path) -> None:
        for key, value in node.items():
            if not prefix and key in ("apiVersion", "kind"):
                continue
            if prefix == ("metadata",) and key in _SYSTEM_METADATA:
                continue
            if isinstance(value, dict) and value:
                walk(value, (*prefix, key))
            else:
                paths.add((*prefix, key))

    walk(config, ())
    return paths


def to_fields_v1(paths: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for key in path:
            node = node.setdefault(f"f:{key}", {})
    return tree


def from_fields_v1(tree: dict[str, Any], prefix: Path = ()) -> set[Path]:
    paths: set[Path] = set()
    for key, child in tree.items():
        if not key.startswith("f:"):
            continue
        path = (*prefix, key[2:])
        paths |= from_fields_v1(child, path) if child else {path}
    return paths


def _merge(live: Any, config: Any) -> Any:
    if not isinstance(config, dict) or not isinstance(live, dict):
        return copy.deepcopy(config)
    result = dict(live)
    for key, value in config.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge(result.get(key), value)
    return result


def _remove_path(obj: dict[str, Any], path: Path) -> None:
    parents: list[dict[str, Any]] = [obj]
    for key in path[:-1]:
        child = parents[-1].get(key)
        if not isinstance(child, dict):
            return
        child = dict(child)  # copy-on-write: the live object is shared
        parents[-1][key] = child
        parents.append(child)
    parents[-1].pop(path[-1], None)


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal apart from managedFields."""

    def strip(obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in obj.get("metadata", {}).items() if k != "managedFields"}
        return {**obj, "metadata": meta}

    return strip(a) == strip(b)


def _entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list(obj.get("metadata", {}).get("managedFields") or [])


def server_side_apply(
    live: dict[str, Any] | None, config: dict[str, Any], manager: str, now: str
) -> dict[str, Any]:
    """The object after ``manager`` applies ``config`` to ``live`` (``None``: the object is new)."""
    if not manager:
        raise bad_request("PATCH requests of type application/apply-patch+yaml must supply a fieldManager")
    if not isinstance(config, dict):
        raise bad_request("an apply configuration must be an object")
    entries = _entries(live or {})
    mine = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"), None)
    others: set[Path] = set()
    for entry in entries:
        if entry is not mine and entry.get("operation") == "Apply":
            others |= from_fields_v1(entry.get("fieldsV1") or {})
    before = from_fields_v1(mine.get("fieldsV1") or {}) if mine else set()
    now_owned = owned_paths(config)
    result: dict[str, Any] = _merge(live or {}, config)
    for path in sorted(before - now_owned - others, key=len, reverse=True):
        _remove_path(result, path)
    fields = to_fields_v1(now_owned)
    if live is not None and mine is not None and mine.get("fieldsV1") == fields and _same(result, live):
        return live  # a no-op apply keeps the old entry (and time), so nothing is written
    new_entry = {
        "manager": manager,
        "operation": "Apply",
        "apiVersion": config.get("apiVersion", ""),
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    kept = [e for e in entries if e is not mine]
    result["metadata"] = {**result.get("metadata", {}), "managedFields": [*kept, new_entry]}
    return result
