"""Server-side apply (``application/apply-patch+yaml``): create-or-merge with field ownership.

Each apply manager's set of owned fields is kept in ``metadata.managedFields`` (``FieldsV1`` format);
a field the manager applied before but omits now is removed, unless another apply manager owns it.
Lists are owned atomically. Applying a different value to a field another manager owns -- another
applier, or a plain write's ``Update`` entry (:mod:`apiserver_standin.managed_fields`) -- is a 409
conflict worded as the real server words it, unless ``force=true``, which takes the field over.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from apiserver_standin.errors import ApiError, bad_request

Path = tuple[str, ...]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# Fields the server sets; applying them is meaningless and they are never "owned".
SERVER_SET_METADATA = frozenset(
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
            if prefix == ("metadata",) and key in SERVER_SET_METADATA:
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


def _value(obj: Any, path: Path) -> Any:
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def _field(path: Path) -> str:
    return "".join(f".{key}" for key in path)


def manager_label(entry: dict[str, Any]) -> str:
    """A managedFields entry as conflict messages name it: ``"m"``, ``"m" using apps/v1`` for an
    ``Update`` (the manager identifier the real server compares carries no time)."""
    label = f'"{entry.get("manager", "")}"'
    if entry.get("subresource"):
        label += f' with subresource "{entry["subresource"]}"'
    if entry.get("operation") == "Update":
        label += f" using {entry.get('apiVersion', '')}"
    return label


def conflict_error(conflicts: list[tuple[str, Path]]) -> ApiError:
    """409 for apply conflicts: (manager label, path) pairs, as the real field manager reports them."""
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {manager}: {_field(path)}"
    else:
        lines: list[str] = []
        for name in sorted({m for m, _ in conflicts}):
            lines.append(f"conflicts with {name}:")
            lines += [f"- {_field(p)}" for m, p in conflicts if m == name]
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {m}", "field": _field(p)}
        for m, p in conflicts
    ]
    return ApiError(409, message, "Conflict", {"causes": causes})


def _take_over(
    entries: list[dict[str, Any]],
    mine: dict[str, Any] | None,
    live: dict[str, Any] | None,
    config: dict[str, Any],
    force: bool,
    defaulted: dict[str, Any],
    allowed: frozenset[Path] | set[Path] = frozenset(),
) -> list[dict[str, Any]]:
    """``entries`` with the fields ``config`` sets to a new value taken from the other managers.

    Without ``force`` such a field is a conflict (409), unless every conflict is on an ``allowed``
    path (then the apply is forced); a field set to the value it has is shared.
    """
    wanted = owned_paths(config)
    conflicts: list[tuple[str, Path]] = []
    result: list[dict[str, Any]] = []
    for entry in entries:
        if entry is mine or entry.get("subresource"):
            result.append(entry)  # a subresource's fields (status) are not the main resource's
            continue
        theirs = from_fields_v1(entry.get("fieldsV1") or {})
        contested = sorted(p for p in wanted & theirs if _value(live, p) != _value(defaulted, p))
        conflicts += [(manager_label(entry), p) for p in contested]
        if contested and force:
            kept = theirs - set(contested)
            if kept:  # an entry left with no fields is dropped, as the real server drops it
                result.append({**entry, "fieldsV1": to_fields_v1(kept)})
        else:
            result.append(entry)
    if conflicts and not force:
        remaining = [c for c in conflicts if c[1] not in allowed]
        if remaining:
            raise conflict_error(remaining)
        return _take_over(entries, mine, live, config, True, defaulted)
    return result


def _last_applied_paths(live: dict[str, Any] | None, manager: str) -> set[Path]:
    """The conflicts the real server forgives to kubectl's first server-side apply after client-side
    ones: those on fields of the live object's ``last-applied-configuration`` (only for manager
    ``kubectl``, so an apply with another ``--field-manager`` still conflicts)."""
    annotations = ((live or {}).get("metadata") or {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED)
    if manager != "kubectl" or not isinstance(text, str):
        return set()
    try:
        last = json.loads(text)
    except ValueError:
        return set()
    return owned_paths(last) if isinstance(last, dict) else set()


def server_side_apply(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    manager: str,
    now: str,
    force: bool = False,
    defaults: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The object after ``manager`` applies ``config`` to ``live`` (``None``: the object is new).

    ``defaults`` gives ``config`` as the server would store it (the schema's defaults applied): a
    conflict is a field whose stored value the apply would change.
    """
    if not manager:
        raise bad_request("PATCH requests of type application/apply-patch+yaml must supply a fieldManager")
    if not isinstance(config, dict):
        raise bad_request("an apply configuration must be an object")
    entries = _entries(live or {})
    mine = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"), None)
    defaulted = defaults(config) if defaults is not None else config
    allowed = _last_applied_paths(live, manager)
    entries = _take_over(entries, mine, live, config, force, defaulted, allowed)
    others: set[Path] = set()
    for entry in entries:
        if entry is not mine:  # a field another manager (applier or updater) owns stays
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
