"""Kubernetes' JSONPath dialect, as ``additionalPrinterColumns`` and ``kubectl -o jsonpath`` use it.

Supported: ``.field`` and ``['field']``, ``[n]`` (negative from the end), ``[start:end]``, ``[*]`` and
``.*``, ``..field`` (recursive descent), filters ``[?(@.a.b == 'x')]`` with ``==``, ``!=``, ``<``,
``<=``, ``>``, ``>=`` against string or number literals, or ``[?(@.a)]`` for presence, and an
optional surrounding ``{...}``. :func:`find` returns every match in document order, as the
Kubernetes evaluator's ``FindResults`` does; a missing field is simply no match.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

Step = Callable[[Any], Iterator[Any]]

_TOKEN = re.compile(
    r"""\.\.(?P<deep>[A-Za-z0-9_\-/]+|\*)
      | \.(?P<field>[A-Za-z0-9_\-/]+|\*)
      | \[\s*\?\(\s*(?P<filter>.*?)\s*\)\s*\]
      | \[\s*['"](?P<quoted>[^'"]*)['"]\s*\]
      | \[(?P<index>[^\]]*)\]""",
    re.VERBOSE,
)
_CONDITION = re.compile(r"^@(?P<path>[^=!<>\s]*)\s*(?:(?P<op>==|!=|<=|>=|<|>)\s*(?P<literal>.+))?$")
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


class JSONPathError(ValueError):
    """An expression outside the supported dialect."""


def find(obj: Any, expression: str) -> list[Any]:
    """Every value ``expression`` selects in ``obj``, in document order."""
    values = [obj]
    for step in compile_path(expression):
        values = [found for value in values for found in step(value)]
    return values


def first(obj: Any, expression: str) -> Any:
    """The first match, or None (what a printer column shows)."""
    found = find(obj, expression)
    return found[0] if found else None


@functools.cache
def compile_path(expression: str) -> tuple[Step, ...]:
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    steps: list[Step] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise JSONPathError(f"unrecognized JSONPath at {text[position:]!r} in {expression!r}")
        steps.append(_step(match))
        position = match.end()
    return tuple(steps)


def _step(match: re.Match[str]) -> Step:
    if match.group("deep") is not None:
        return _descendants(match.group("deep"))
    if match.group("field") is not None:
        return _field(match.group("field"))
    if match.group("quoted") is not None:
        return _field(match.group("quoted"))
    if match.group("filter") is not None:
        return _filter(match.group("filter"))
    return _index(match.group("index").strip())


def _field(name: str) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if name == "*":
            yield from _children(value)
        elif isinstance(value, dict) and name in value:
            yield value[name]

    return step


def _children(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from value.values()
    elif isinstance(value, list):
        yield from value


def _descendants(name: str) -> Step:
    direct = _field(name)

    def step(value: Any) -> Iterator[Any]:
        yield from direct(value)
        for item in _children(value):
            yield from step(item)

    return step


def _index(spec: str) -> Step:
    if spec == "*":
        return _children
    try:
        if ":" in spec:
            parts = [int(p) if p.strip() else None for p in spec.split(":")[:2]]
            start, end = parts[0], parts[1] if len(parts) > 1 else None
            return lambda value: iter(value[start:end] if isinstance(value, list) else [])
        index = int(spec)
    except ValueError as exc:
        raise JSONPathError(f"invalid array index [{spec}]") from exc

    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, list) and -len(value) <= index < len(value):
            yield value[index]

    return step


def _filter(condition: str) -> Step:
    match = _CONDITION.match(condition)
    if match is None:
        raise JSONPathError(f"unsupported filter ?({condition})")
    path, op, literal = match.group("path"), match.group("op"), match.group("literal")
    expected = _literal(literal) if literal is not None else None

    def keep(item: Any) -> bool:
        found = find(item, path) if path else [item]
        if op is None:
            return bool(found)
        try:
            return any(_OPS[op](value, expected) for value in found)
        except TypeError:
            return False

    def step(value: Any) -> Iterator[Any]:
        yield from (item for item in _children(value) if keep(item))

    return step


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError as exc:
            raise JSONPathError(f"unsupported literal {text}") from exc
