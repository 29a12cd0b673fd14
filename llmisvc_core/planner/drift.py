"""Drift: how the live cluster differs from what a pass would write (shadow mode's report). Pure.

A pass only plans a write for an object that differs (``writes.reconcile`` compares by DeepDerivative),
so the planned writes *are* the differing objects; this module says, for each, which fields differ, in
the same terms the planner decided by: for an update, every value the desired object sets in ``spec``,
``metadata.labels`` and ``metadata.annotations`` that the live object lacks or holds otherwise (fields
the desired object leaves unset are someone else's and never drift). Paths read like
``spec.rules[0].backendRefs[0].name: "a" -> "b"``; ``(absent)`` stands for a missing value.

The status is compared as it would be written: the router's part merged into the stored status
(``status_merge``); each condition that would change is one line, other status fields one line each.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from llmisvc_core.models.kube import KNOWN_TYPES
from llmisvc_core.planner.plan import WriteOp
from llmisvc_core.world.snapshot import Reader
from llmisvc_core.world.status_merge import merge_status

ABSENT = "(absent)"
#: At most this many differing fields are listed per object (the rest are counted), and a value is cut
#: to this many characters: the report lands in the workflow history and in the Temporal UI.
MAX_FIELDS = 20
MAX_VALUE = 80
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_SHARED_KINDS = frozenset(k for _, k in KNOWN_TYPES if sum(1 for _, other in KNOWN_TYPES if other == k) > 1)


class ObjectDrift(BaseModel):
    """One object whose live state differs from what the pass would write."""

    action: str  # create | update | delete
    api_version: str
    kind: str
    namespace: str | None = None
    name: str
    fields: list[str] = Field(default_factory=list)  # ``path: live -> desired``; empty for create/delete
    fields_left_out: int = 0

    def describe(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        # InferencePool comes in two API groups with the same names: say which one.
        kind = f"{self.kind}.{self.api_version}" if self.kind in _SHARED_KINDS else self.kind
        return f"{self.action} {kind} {where}"


class Drift(BaseModel):
    """The differing objects of one pass and the status lines that would change."""

    objects: list[ObjectDrift] = Field(default_factory=list)
    status: list[str] = Field(default_factory=list)

    @property
    def count(self) -> int:
        """Differing objects, the service's status counting as one (it is an object the pass writes)."""
        return len(self.objects) + (1 if self.status else 0)


def pass_drift(
    ops: list[WriteOp], live: Reader, stored_status: dict[str, Any], planned: dict[str, Any]
) -> Drift:
    """The drift of a planned pass: its writes against the objects ``live`` reads (the snapshot the pass
    planned from), its status against the stored one."""
    return Drift(objects=[object_drift(op, live) for op in ops], status=status_drift(stored_status, planned))


def object_drift(op: WriteOp, live: Reader) -> ObjectDrift:
    ref = op.ref()
    base = {"api_version": ref.api_version, "kind": ref.kind, "namespace": ref.namespace, "name": ref.name}
    if op.delete is not None:
        return ObjectDrift(action="delete", **base)
    key = op.key()
    current = live.get(key.type, key.namespace, key.name)
    if current is None:
        return ObjectDrift(action="create", **base)
    lines = managed_fields_diff(op.apply or {}, current)
    return ObjectDrift(
        action="update", fields=lines[:MAX_FIELDS], fields_left_out=max(0, len(lines) - MAX_FIELDS), **base
    )


def managed_fields_diff(desired: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """The fields the planner compares (spec, labels, annotations) that ``current`` does not derive."""
    desired_meta, current_meta = desired.get("metadata") or {}, current.get("metadata") or {}
    return [
        *field_diff(desired_meta.get("labels"), current_meta.get("labels"), "metadata.labels"),
        *field_diff(desired_meta.get("annotations"), current_meta.get("annotations"), "metadata.annotations"),
        *field_diff(desired.get("spec"), current.get("spec"), "spec"),
    ]


def field_diff(desired: Any, live: Any, path: str, exact: bool = False) -> list[str]:
    """``path: live -> desired`` for every value of ``desired`` that ``live`` lacks or holds otherwise.

    By default with DeepDerivative's rules (unset and empty desired values are ignored, a desired list
    is a prefix of the live one); ``exact`` compares both ways, reporting live values the desired lacks.
    """
    if not exact and _is_empty(desired):
        return []
    if isinstance(desired, dict) and isinstance(live, dict):
        return _dict_diff(desired, live, path, exact)
    if isinstance(desired, list) and isinstance(live, list):
        return _list_diff(desired, live, path, exact)
    if _same_scalar(desired, live):
        return []
    return [f"{path}: {render(live)} -> {render(desired)}"]


def _dict_diff(desired: dict[str, Any], live: dict[str, Any], path: str, exact: bool) -> list[str]:
    lines: list[str] = []
    keys = list(desired) + ([k for k in live if k not in desired] if exact else [])
    for key in keys:
        child = _child(path, key)
        if key not in live:
            # A map key must exist even with an empty string value; None, [] and {} are omitted (Go).
            if exact or not _is_omitted(desired[key]):
                lines.append(f"{child}: {ABSENT} -> {render(desired[key])}")
        elif key not in desired:
            lines.append(f"{child}: {render(live[key])} -> {ABSENT}")
        else:
            lines += field_diff(desired[key], live[key], child, exact)
    return lines


def _list_diff(desired: list[Any], live: list[Any], path: str, exact: bool) -> list[str]:
    lines: list[str] = []
    for index, value in enumerate(desired):
        child = f"{path}[{index}]"
        if index >= len(live):
            lines.append(f"{child}: {ABSENT} -> {render(value)}")
        else:
            lines += field_diff(value, live[index], child, exact)
    if exact:
        lines += [f"{path}[{i}]: {render(live[i])} -> {ABSENT}" for i in range(len(desired), len(live))]
    return lines


def status_drift(stored: dict[str, Any], planned: dict[str, Any]) -> list[str]:
    """What writing ``planned`` would change in ``stored``: one line per condition, one per field."""
    merged = merge_status(stored, planned)
    if merged == stored:
        return []
    old, new = _conditions(stored), _conditions(merged)
    lines = [
        f"condition {kind}: {old.get(kind, ABSENT)} -> {new.get(kind, ABSENT)}"
        for kind in sorted(set(old) | set(new))
        if old.get(kind) != new.get(kind)
    ]
    rest_old = {k: v for k, v in stored.items() if k != "conditions"}
    rest_new = {k: v for k, v in merged.items() if k != "conditions"}
    lines += field_diff(rest_new, rest_old, "status", exact=True)
    return lines or _condition_details(stored, merged)


def _condition_details(stored: dict[str, Any], merged: dict[str, Any]) -> list[str]:
    """What differs when every condition reads the same: a field such as ``lastTransitionTime``, or only
    their order (the router writes them sorted by type)."""
    old = sorted(stored.get("conditions") or [], key=lambda c: str(c.get("type")))
    new = sorted(merged.get("conditions") or [], key=lambda c: str(c.get("type")))
    if old == new:
        return ["status.conditions: the same conditions in another order -> sorted by type"]
    return field_diff(new, old, "status.conditions", exact=True)


def _conditions(status: dict[str, Any]) -> dict[str, str]:
    """``Type -> Status(Reason): message``: what a person compares (transition times follow these)."""
    found = {}
    for cond in status.get("conditions") or []:
        text = str(cond.get("status"))
        text += f"({cond['reason']})" if cond.get("reason") else ""
        text += f": {_cut(str(cond['message']))}" if cond.get("message") else ""
        found[str(cond.get("type"))] = text
    return found


def render(value: Any) -> str:
    """A value as compact JSON, cut to :data:`MAX_VALUE` characters."""
    return _cut(json.dumps(value, separators=(",", ":"), sort_keys=True))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if _PLAIN_KEY.match(key) else f"{path}[{json.dumps(key)}]"


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and len(value) == 0)


def _is_omitted(value: Any) -> bool:
    return value is None or (isinstance(value, list | dict) and len(value) == 0)


def _same_scalar(desired: Any, live: Any) -> bool:
    # bool is an int in Python; JSON keeps them apart (true != 1), as the planner's comparison does.
    if isinstance(desired, bool) or isinstance(live, bool):
        return type(desired) is type(live) and desired == live
    return bool(desired == live)
