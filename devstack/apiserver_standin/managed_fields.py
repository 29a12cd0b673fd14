"""Field ownership of plain writes: the ``Update`` entries of ``metadata.managedFields``.

kube-apiserver records, for every create, update and (non-apply) patch, the fields the write set
or changed under the request's field manager with ``operation: Update``; the fields it changed
leave every other manager's set, and the fields it removed leave every set. Server-side apply
(:mod:`apiserver_standin.apply`) then conflicts with these owners as with other appliers.

The manager is the ``fieldManager`` query parameter or, without one, the user agent up to its
first ``/`` (``llmisvc-router/0.1`` -> ``llmisvc-router``), as the real server derives it. Writes
made inside the stand-in (its controllers) carry no manager and are not recorded.
"""

from __future__ import annotations

from typing import Any

from apiserver_standin.apply import SERVER_SET_METADATA, Path, from_fields_v1, owned_paths, to_fields_v1

Obj = dict[str, Any]
# The real server truncates a manager derived from the user agent to this many characters.
_MAX_MANAGER = 128


def manager_of(field_manager: str, user_agent: str) -> str:
    """The request's field manager: the query's, else the printable prefix of the user agent."""
    if field_manager:
        return field_manager
    prefix = user_agent.split("/", 1)[0]
    return "".join(ch for ch in prefix if ch.isprintable())[:_MAX_MANAGER]


def _leaves(obj: Any) -> set[Path]:
    return owned_paths(obj) if isinstance(obj, dict) else set()


def changed_paths(old: Obj, new: Obj) -> tuple[set[Path], set[Path]]:
    """(leaf paths ``new`` sets to a new value or adds, leaf paths of ``old`` that ``new`` drops)."""
    changed: set[Path] = set()
    removed: set[Path] = set()

    def walk(a: dict[str, Any], b: dict[str, Any], prefix: Path) -> None:
        for key in b.keys() | a.keys():
            path = (*prefix, key)
            if not prefix and key in ("apiVersion", "kind"):
                continue
            if prefix == ("metadata",) and key in SERVER_SET_METADATA:
                continue  # the server's own fields are nobody's
            if key not in b:
                removed.add(path)
            elif isinstance(b[key], dict) and b[key] and isinstance(a.get(key), dict):
                walk(a[key], b[key], path)
            elif key not in a or a[key] != b[key]:
                changed.update({(*path, *p) for p in _leaves(b[key])} or {path})

    walk(old, new, ())
    return changed, removed


def _overlaps(path: Path, others: set[Path]) -> bool:
    return any(path[: len(o)] == o or o[: len(path)] == path for o in others)


def record_update(old: Obj | None, new: Obj, manager: str, subresource: str, now: str) -> Obj:
    """``new`` with ``metadata.managedFields`` updated for ``manager``'s write over ``old``."""
    if not manager:
        return new
    entries: list[dict[str, Any]] = []
    changed: set[Path] = owned_paths(new)
    removed: set[Path] = set()
    if old is not None:
        # ``new`` carries the old entries, or those the write set itself (see the store's merge).
        entries = list(new.get("metadata", {}).get("managedFields") or [])
        changed, removed = changed_paths(old, new)
    if subresource != "status":
        # Apart from the status subresource, status is not the writer's (the server keeps the old).
        changed = {p for p in changed if p[0] != "status"}
    taken = changed | removed

    def is_mine(entry: dict[str, Any]) -> bool:
        return (
            entry.get("manager") == manager
            and entry.get("operation") == "Update"
            and (entry.get("subresource") or "") == subresource
        )

    result: list[dict[str, Any]] = []
    mine: set[Path] = set()
    for entry in entries:
        fields = from_fields_v1(entry.get("fieldsV1") or {})
        if is_mine(entry):
            mine = {p for p in fields if not _overlaps(p, removed)}
            continue
        kept = {p for p in fields if not _overlaps(p, taken)}
        if kept == fields:
            result.append(entry)
        elif kept:  # an entry left with no fields is dropped, as the real server drops it
            result.append({**entry, "fieldsV1": to_fields_v1(kept)})
    mine |= changed
    if mine:
        entry = {
            "manager": manager,
            "operation": "Update",
            "apiVersion": new.get("apiVersion", ""),
            "time": now,
            "fieldsType": "FieldsV1",
            "fieldsV1": to_fields_v1(mine),
        }
        if subresource:
            entry["subresource"] = subresource
        result.append(entry)
    metadata = {k: v for k, v in new.get("metadata", {}).items() if k != "managedFields"}
    if result:
        metadata["managedFields"] = result
    return {**new, "metadata": metadata}
