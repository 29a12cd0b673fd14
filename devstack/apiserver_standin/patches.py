"""Patch documents: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

All functions are pure: they return a new document and never modify their inputs, because the store
shares object dicts between readers (stored objects are immutable).

Strategic merge is treated as a merge patch with two refinements that keep ``kubectl apply`` of
built-in kinds from losing data: ``$``-directives are honoured or dropped, and lists whose items all
carry a ``name`` (containers, env, ports, volumes) are merged by name instead of replaced.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver_standin.errors import ApiError, bad_request

JSON = Any


def merge_patch(target: JSON, patch: JSON) -> JSON:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --- JSON patch ---------------------------------------------------------------------------------


def _unprocessable(message: str) -> ApiError:
    return ApiError(422, message, "Invalid")


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _unprocessable(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[Any], token: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit():
        raise _unprocessable(f"invalid array index {token!r}")
    index = int(token)
    if index > len(container) or (index == len(container) and not allow_end):
        raise _unprocessable(f"array index {index} out of range")
    return index


def _parent(doc: JSON, tokens: list[str]) -> JSON:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, allow_end=False)]
        else:
            raise _unprocessable(f"doc is missing path: /{'/'.join(tokens)}")
    return node


def _get(doc: JSON, path: str) -> JSON:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, allow_end=False)]
    raise _unprocessable(f"doc is missing path: {path}")


def _remove(doc: JSON, path: str) -> JSON:
    tokens = _pointer(path)
    if not tokens:
        raise _unprocessable("cannot remove the whole document")
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, allow_end=False))
    raise _unprocessable(f"unable to remove nonexistent key: {last}: missing value")


def _add(doc: JSON, path: str, value: JSON) -> JSON:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True), value)
    else:
        raise _unprocessable(f"doc is missing path: {path}")
    return doc


def _apply_op(doc: JSON, op: dict[str, Any]) -> JSON:
    kind, path = op.get("op"), op.get("path")
    if not isinstance(path, str):
        raise bad_request(f"JSON patch operation without a path: {op}")
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op.get("value")))
    if kind == "remove":
        _remove(doc, path)
        return doc
    if kind == "replace":
        if _pointer(path):
            _remove(doc, path)  # replace requires the target to exist
        return _add(doc, path, copy.deepcopy(op.get("value")))
    if kind in ("move", "copy"):
        source = op.get("from")
        if not isinstance(source, str):
            raise bad_request(f"JSON patch {kind} without 'from': {op}")
        value = _remove(doc, source) if kind == "move" else copy.deepcopy(_get(doc, source))
        return _add(doc, path, value)
    if kind == "test":
        if _get(doc, path) != op.get("value"):
            raise _unprocessable(f"testing value {path} failed: test failed")
        return doc
    raise bad_request(f"unknown JSON patch operation {kind!r}")


def json_patch(target: JSON, operations: JSON) -> JSON:
    """RFC 6902. A failed ``test`` or a missing path is 422, as on a real server."""
    if not isinstance(operations, list) or not all(isinstance(o, dict) for o in operations):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    doc = copy.deepcopy(target)
    for operation in operations:
        doc = _apply_op(doc, operation)
    return doc


# --- strategic merge ----------------------------------------------------------------------------


def _named_items(items: JSON) -> bool:
    return isinstance(items, list) and all(isinstance(i, dict) and "name" in i for i in items)


def _merge_named_lists(live: list[dict[str, Any]], patch: list[dict[str, Any]]) -> list[Any]:
    by_name = {item["name"]: item for item in live}
    order = [item["name"] for item in live]
    for item in patch:
        name = item["name"]
        if item.get("$patch") == "delete":
            by_name.pop(name, None)
            continue
        by_name[name] = strategic_merge(by_name.get(name, {}), item)
        if name not in order:
            order.append(name)
    return [by_name[n] for n in order if n in by_name]


def strategic_merge(target: JSON, patch: JSON) -> JSON:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            # $setElementOrder/..., $retainKeys, $deleteFromPrimitiveList/...: ordering hints only here.
            continue
        if value is None:
            result.pop(key, None)
        elif _named_items(value) and _named_items(result.get(key)) and value:
            result[key] = _merge_named_lists(result[key], value)
        elif isinstance(value, list):
            result[key] = [strategic_merge({}, v) if isinstance(v, dict) else v for v in value]
        else:
            result[key] = strategic_merge(result.get(key), value)
    return result
