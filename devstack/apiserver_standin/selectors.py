"""Label and field selectors, parsed from the query string and matched against stored objects.

Label selectors follow the Kubernetes grammar (``=``, ``==``, ``!=``, ``in``, ``notin``, ``key``,
``!key``, ``>``/``<``); field selectors support ``metadata.name`` and ``metadata.namespace``, the two
fields every resource (custom ones included) can be selected by, and the extra labels Events have
(``involvedObject.*``, ``type``, ``reason``, ...: see :mod:`apiserver_standin.event_versions`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from apiserver_standin import event_versions
from apiserver_standin.errors import bad_request

Predicate = Callable[[dict[str, Any]], bool]

_SET_RE = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\((.*)\)\s*$")
_OP_RE = re.compile(r"^\s*([^\s!=<>]+)\s*(==|!=|=|>|<)\s*(.*?)\s*$")
_KEY_RE = re.compile(r"^\s*(!?)\s*([^\s!=<>(),]+)\s*$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # one of: =, !=, in, notin, exists, !, gt, lt
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == "=":
            return value == self.values[0]
        if self.op == "!=":
            return value != self.values[0]
        if self.op == "in":
            return present and value in self.values
        if self.op == "notin":
            return value not in self.values
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        return _compare(value, self.op, self.values[0])


def _compare(value: str | None, op: str, bound: str) -> bool:
    try:
        number, limit = int(value or ""), int(bound)
    except ValueError:
        return False
    return number > limit if op == "gt" else number < limit


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside ``( ... )``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def _parse_requirement(text: str) -> Requirement:
    if match := _SET_RE.match(text):
        values = tuple(v.strip() for v in match.group(3).split(",") if v.strip())
        return Requirement(match.group(1), match.group(2), values)
    if match := _OP_RE.match(text):
        op = {"==": "=", ">": "gt", "<": "lt"}.get(match.group(2), match.group(2))
        return Requirement(match.group(1), op, (match.group(3),))
    if match := _KEY_RE.match(text):
        return Requirement(match.group(2), "!" if match.group(1) else "exists")
    raise bad_request(f"unable to parse requirement: {text!r}")


def parse_label_selector(text: str | None) -> list[Requirement]:
    if not text:
        return []
    return [_parse_requirement(part) for part in _split_top_level(text)]


def label_predicate(text: str | None) -> Predicate | None:
    requirements = parse_label_selector(text)
    if not requirements:
        return None

    def predicate(obj: dict[str, Any]) -> bool:
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(r.matches(labels) for r in requirements)

    return predicate


_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace"}


def field_predicate(text: str | None, group: str = "", plural: str = "") -> Predicate | None:
    """``text`` as a predicate on stored objects of ``group``/``plural`` (Events have more labels)."""
    if not text:
        return None
    labels = event_versions.field_labels(group, plural)
    checks: list[tuple[Callable[[dict[str, Any]], str], bool, str]] = []
    for part in _split_top_level(text):
        match = _OP_RE.match(part)
        if not match or match.group(2) not in ("=", "==", "!="):
            raise bad_request(f"invalid field selector: {part!r}")
        key = match.group(1)
        if key in _FIELDS:
            getter = _metadata_getter(_FIELDS[key])
        elif key in labels:
            getter = labels[key]
        else:
            raise bad_request(f'field label not supported: "{key}"')
        checks.append((getter, match.group(2) != "!=", match.group(3)))

    def predicate(obj: dict[str, Any]) -> bool:
        return all((getter(obj) == value) == equal for getter, equal, value in checks)

    return predicate


def _metadata_getter(attr: str) -> Callable[[dict[str, Any]], str]:
    return lambda obj: str(obj.get("metadata", {}).get(attr) or "")


def combine(*predicates: Predicate | None) -> Predicate | None:
    active = [p for p in predicates if p is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]
    return lambda obj: all(p(obj) for p in active)
