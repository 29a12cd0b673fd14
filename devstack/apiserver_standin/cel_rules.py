"""``x-kubernetes-validations``: the CEL rules of a CRD schema, evaluated with ``common-expression-language``.

Each rule is evaluated with ``self`` bound to the value at its schema node (after pruning and
defaulting), and, for transition rules (those naming ``oldSelf``), ``oldSelf`` bound to the stored
value on an update -- correlated through object keys and ``x-kubernetes-list-type: map`` keys, as
the API server correlates them; a transition rule without an old value is skipped unless
``optionalOldSelf`` is set. A failed rule is reported at its node's path (plus ``fieldPath``) as
``Invalid value: "<type>": <message>``, or with the rule's ``reason`` (Forbidden, Required,
Duplicate); a rule that cannot be evaluated (a missing key) reports ``<error> evaluating rule: <rule>``.

The library (Rust's ``cel`` behind Python bindings; ``cel-python`` was fifty times slower, which
made every HTTPRoute write take a tenth of a second) provides the standard functions the vendored
CRDs use (has, size, all, exists, exists_one, filter, matches, startsWith, contains, duration,
``in``); ``split``, ``join``, ``lowerAscii`` and ``upperAscii`` of Kubernetes' strings library are
added here. Other Kubernetes CEL extensions (``isURL``, ``quantity``, ``ip``, ``cidr``...) are not,
and a rule using one reports an evaluation error (no vendored CRD uses them).
"""

from __future__ import annotations

import functools
from typing import Any

import cel

from apiserver_standin.schema import Errors, Schema, child, type_name

MISSING = object()
_REASON_WORDS = {
    "FieldValueForbidden": "Forbidden",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
}


def _split(text: str, sep: str, limit: int | None = None) -> list[str]:
    return text.split(sep) if limit is None else text.split(sep, limit - 1)


def _join(items: list[Any], sep: str = "") -> str:
    return sep.join(str(i) for i in items)


_K8S_FUNCTIONS: dict[str, Any] = {
    "split": _split,
    "join": _join,
    "lowerAscii": lambda s: str(s).lower(),
    "upperAscii": lambda s: str(s).upper(),
}


@functools.cache
def _program(rule: str) -> Any:
    return cel.compile(rule)


def check(value: Any, old: Any, schema: Schema, path: str, errors: Errors) -> None:
    """Append the failed ``x-kubernetes-validations`` rules under ``value`` to ``errors``.

    A value an update leaves as it was is not checked again: Kubernetes' validation ratcheting
    (GA in 1.33) lets unchanged values stand, and it spares status writes the spec's rules.
    """
    if old is not MISSING and value == old:
        return
    rules = schema.get("x-kubernetes-validations")
    if rules:
        _check_rules(value, old, schema, rules, path, errors)
    if isinstance(value, dict):
        props: dict[str, Schema] = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        olds = old if isinstance(old, dict) else {}
        for key, item in value.items():
            sub = props.get(key) or (extra if isinstance(extra, dict) else None)
            if sub is not None:
                where = child(path, key) if key in props else f"{path}[{key}]"
                check(item, olds.get(key, MISSING), sub, where, errors)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        old_items = _correlate(value, old, schema)
        for index, item in enumerate(value):
            check(item, old_items[index], schema["items"], f"{path}[{index}]", errors)


def _correlate(value: list[Any], old: Any, schema: Schema) -> list[Any]:
    """Each new item's old counterpart: only ``x-kubernetes-list-type: map`` lists correlate."""
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if schema.get("x-kubernetes-list-type") != "map" or not isinstance(old, list) or not keys:
        return [MISSING] * len(value)

    def identity(item: Any) -> Any:
        return tuple(str(item.get(k)) for k in keys) if isinstance(item, dict) else None

    by_key = {identity(item): item for item in old}
    return [by_key.get(identity(item), MISSING) for item in value]


def _check_rules(
    value: Any, old: Any, schema: Schema, rules: list[dict[str, Any]], path: str, errors: Errors
) -> None:
    activation: dict[str, Any] = {"self": value}
    for rule in rules:
        text = str(rule.get("rule", ""))
        if "oldSelf" in text:
            if old is MISSING and not rule.get("optionalOldSelf"):
                continue
            activation["oldSelf"] = None if old is MISSING else old
        where = path + str(rule.get("fieldPath") or "")
        outcome = _evaluate(text, activation)
        if outcome is True:
            continue
        if isinstance(outcome, str):
            errors.append((where, f"Invalid value: {_quoted(schema, value)}: {outcome}"))
            continue
        message = str(rule.get("message") or f"failed rule: {_one_line(text)}")
        words = _REASON_WORDS.get(str(rule.get("reason") or ""))
        shown = f"{words}: {message}" if words else f"Invalid value: {_quoted(schema, value)}: {message}"
        errors.append((where, shown))


def _evaluate(rule: str, activation: dict[str, Any]) -> bool | str:
    """True when the rule holds, False when it does not, or the evaluation error's message."""
    try:
        context = cel.Context(variables=activation, functions=_K8S_FUNCTIONS)
        return _program(rule).execute(context) is True
    except KeyError as exc:  # a missing field, in the Kubernetes CEL wording
        return f"no such key: {exc.args[0] if exc.args else exc} evaluating rule: {_one_line(rule)}"
    except (ValueError, RuntimeError, TypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"{first} evaluating rule: {_one_line(rule)}"


def _one_line(rule: str) -> str:
    return " ".join(rule.split())


def _quoted(schema: Schema, value: Any) -> str:
    # The real server shows the schema's type, not the value, for a failed rule.
    return f'"{schema.get("type") or type_name(value)}"'
