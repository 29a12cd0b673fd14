"""Bounds on untrusted input, checked before anything recursive reads it. Pure.

An open-schema field of an LLMInferenceService (or a state file given to ``plan``) may nest as deep as
its author likes; a real API server stores 600 levels without complaint. The code that reads objects is
recursive (pydantic's serializer, the strategic merge, ``==`` on nested dicts, PyYAML's composer), and
fails past a few hundred levels with ``RecursionError`` or "maximum serialization depth exceeded". So
every reader of untrusted objects (the watcher, the activities, ``plan``) first asks :func:`too_deep`,
which walks the value without recursion, and treats an object nested deeper than :data:`MAX_DEPTH` as
unreadable: it is reported against that object alone, and never reaches the recursive code.
"""

from __future__ import annotations

from collections.abc import Iterator

#: Levels of nesting (objects and lists) an object may have. Kubernetes objects the router reads nest
#: about 15 deep (a pod template's env valueFrom is 12); 100 leaves room and stays far below Python's
#: recursion limit (1000 frames) whatever the recursive reader spends per level.
MAX_DEPTH = 100
#: How many path segments a message names before eliding the rest.
PATH_SHOWN = 6


def too_deep(value: object, limit: int = MAX_DEPTH) -> str | None:
    """The path (``spec.model.extra.a[0]…``) of the first place where ``value`` nests deeper than ``limit``
    levels, or None when it does not. Iterative: any depth is safe to ask about."""
    stack: list[tuple[object, int, tuple[str, ...]]] = [(value, 0, ())]
    while stack:
        item, depth, path = stack.pop()
        if not isinstance(item, dict | list):
            continue
        if depth >= limit:
            return describe_path(path)
        for segment, child in _children(item):
            stack.append((child, depth + 1, _extend(path, segment)))
    return None


def depth_problem(value: object, limit: int = MAX_DEPTH) -> str | None:
    """A one-line description of the nesting problem of ``value`` (None when there is none)."""
    where = too_deep(value, limit)
    if where is None:
        return None
    return f"field {where or '(the object)'}: nested deeper than {limit} levels"


def describe_path(path: tuple[str, ...]) -> str:
    text = ""
    for segment in path:
        text += segment if segment in ("…",) or segment.startswith("[") or not text else f".{segment}"
    return text


def _extend(path: tuple[str, ...], segment: str) -> tuple[str, ...]:
    """The path one level down, its first :data:`PATH_SHOWN` segments kept and the rest elided."""
    if len(path) < PATH_SHOWN:
        return (*path, segment)
    return path if path[-1] == "…" else (*path, "…")


def _children(item: dict[object, object] | list[object]) -> Iterator[tuple[str, object]]:
    if isinstance(item, dict):
        for key, child in item.items():
            yield str(key), child
    else:
        for index, child in enumerate(item):
            yield f"[{index}]", child
