"""Kubernetes label selectors (``team=a,tier in (gold,silver),!legacy``): parsed once, matched against an
object's labels. Pure.

The deployment hands the same text to the API server (the watch of LLMInferenceServices) and to this
module (each pass checks that its service is still selected), so the grammar is the API server's:
``key``, ``!key``, ``key=value``, ``key==value``, ``key!=value``, ``key in (a,b)``, ``key notin (a,b)``,
joined by commas, with label keys and values validated as the API server validates them. Text it would
refuse is refused here with the same kind of message, before anything starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from llmisvc_core.errors import InvalidInputError

_SET = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\((.*)\)\s*$")
_OP = re.compile(r"^\s*([^\s!=]+)\s*(==|!=|=)\s*(.*?)\s*$")
_KEY = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*$")
_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class SelectorError(InvalidInputError):
    """A selector the API server would refuse; the message says which requirement and why."""


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # =, !=, in, notin, exists, !
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        value = labels.get(self.key)
        if self.op == "=":
            return value == self.values[0]
        if self.op == "!=":
            return value != self.values[0]
        if self.op == "in":
            return value in self.values
        if self.op == "notin":
            return value not in self.values
        if self.op == "exists":
            return self.key in labels
        return self.key not in labels  # "!"


@dataclass(frozen=True)
class LabelSelector:
    text: str
    requirements: tuple[Requirement, ...]

    def matches(self, obj: dict[str, Any]) -> bool:
        """Whether ``obj``'s labels satisfy every requirement (an empty selector selects everything)."""
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches(labels) for r in self.requirements)


def parse(text: str) -> LabelSelector:
    """``text`` as a selector; raises :class:`SelectorError` naming the requirement at fault."""
    parts = _split(text)
    return LabelSelector(text.strip(), tuple(_requirement(part.strip()) for part in parts))


def _split(text: str) -> list[str]:
    """Split on the commas outside ``( … )``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += 1 if ch == "(" else -1 if ch == ")" else 0
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if len(parts) > 1 and any(not p.strip() for p in parts):
        raise SelectorError(f"unable to parse requirement: empty requirement in {text.strip()!r}")
    return [p for p in parts if p.strip()]


def _requirement(part: str) -> Requirement:
    if match := _SET.match(part):
        values = tuple(v.strip() for v in match.group(3).split(","))
        if not any(values):
            raise SelectorError(f"unable to parse requirement: {part!r}: {match.group(2)} needs values")
        return Requirement(_key(match.group(1), part), match.group(2), tuple(_value(v, part) for v in values))
    if match := _OP.match(part):
        op = "=" if match.group(2) == "==" else match.group(2)
        return Requirement(_key(match.group(1), part), op, (_value(match.group(3), part),))
    if match := _KEY.match(part):
        return Requirement(_key(match.group(2), part), "!" if match.group(1) else "exists")
    raise SelectorError(f"unable to parse requirement: {part!r}")


def _key(key: str, part: str) -> str:
    """A qualified name: an optional DNS subdomain prefix and ``/``, then a name of at most 63 characters."""
    prefix, slash, name = key.rpartition("/")
    valid = bool(_NAME.match(name)) and len(name) <= 63
    if slash:
        valid = valid and bool(_DNS_SUBDOMAIN.match(prefix)) and len(prefix) <= 253
    if not valid:
        raise SelectorError(
            f"invalid label key {key!r} in {part!r}: a name of at most 63 characters "
            "(letters, digits, '-', '_', '.'), optionally prefixed by a DNS subdomain and '/'"
        )
    return key


def _value(value: str, part: str) -> str:
    if value and (len(value) > 63 or not _NAME.match(value)):
        raise SelectorError(
            f"invalid label value {value!r} in {part!r}: at most 63 characters "
            "(letters, digits, '-', '_', '.'), beginning and ending with a letter or digit"
        )
    return value
