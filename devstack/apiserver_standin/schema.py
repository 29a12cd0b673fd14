"""Structural-schema handling of custom resources, as kube-apiserver does it on every write.

Order, as in apiextensions-apiserver: unknown fields are pruned (kept under
``x-kubernetes-preserve-unknown-fields``; ``apiVersion``/``kind``/``metadata`` of the root and of
``x-kubernetes-embedded-resource`` objects always), ``null`` is dropped where the schema is not
``nullable``, ``default`` values are applied, then the value is validated against the OpenAPI v3
keywords (type, required, enum, pattern, lengths, item and property counts, bounds, formats, list
types, ``x-kubernetes-int-or-string``, ``anyOf``/``oneOf``/``allOf``/``not``). ``x-kubernetes-
validations`` (CEL) are checked by :mod:`apiserver_standin.cel_rules` once this passes.

Errors are (field path, message) pairs worded as the real server words them, e.g.
``("spec.replicas", 'Invalid value: "string": spec.replicas in body must be of type integer: "string"')``.
"""

from __future__ import annotations

import copy
import functools
import ipaddress
import json
import re
from datetime import datetime
from typing import Any

from apiserver_standin.errors import Cause

Schema = dict[str, Any]
Errors = list[Cause]  # (field, message) or (field, message, reason)
_ROOT_KEYS = ("apiVersion", "kind", "metadata")


def child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def show(value: Any) -> str:
    """A bad value as Go's ``%v`` prints it in a field error: strings quoted, the rest as JSON."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


# --- pruning, nulls, defaults ------------------------------------------------------------------------


def normalize(value: Any, schema: Schema, root: bool = False) -> Any:
    """``value`` pruned of unknown fields and non-nullable nulls, with defaults applied (a new value)."""
    if isinstance(value, dict) and (schema.get("type") == "object" or "properties" in schema or root):
        return _normalize_object(value, schema, root)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [normalize(item, schema["items"]) for item in value if item is not None]
    return value


def _normalize_object(value: dict[str, Any], schema: Schema, root: bool) -> dict[str, Any]:
    props: dict[str, Schema] = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    keep_meta = root or schema.get("x-kubernetes-embedded-resource") is True
    out: dict[str, Any] = {}
    for key, item in value.items():
        if keep_meta and key in _ROOT_KEYS:
            out[key] = item  # ObjectMeta is the server's own type, not the CRD schema's
            continue
        sub = props.get(key)
        if sub is None and isinstance(extra, dict):
            sub = extra
        if item is None and not (sub or {}).get("nullable"):
            continue  # the API server prunes nulls of non-nullable fields before defaulting
        if sub is not None:
            out[key] = normalize(item, sub)
        elif preserve or extra is True or (keep_meta and key in _ROOT_KEYS):
            out[key] = item
    for key, sub in props.items():
        if key not in out and "default" in sub:
            out[key] = normalize(copy.deepcopy(sub["default"]), sub)
    return out


def unknown_fields(value: Any, schema: Schema, path: str = "", root: bool = False) -> list[str]:
    """The paths pruning would drop from ``value`` (what ``fieldValidation=Strict`` refuses)."""
    found: list[str] = []
    if isinstance(value, dict) and (schema.get("type") == "object" or "properties" in schema or root):
        props: dict[str, Schema] = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        open_ = schema.get("x-kubernetes-preserve-unknown-fields") is True or extra is True
        keep_meta = root or schema.get("x-kubernetes-embedded-resource") is True
        for key, item in value.items():
            sub = props.get(key) or (extra if isinstance(extra, dict) else None)
            if keep_meta and key in _ROOT_KEYS:
                continue
            if sub is not None:
                found += unknown_fields(item, sub, child(path, key) if key in props else f"{path}[{key}]")
            elif not open_ and item is not None:
                found.append(child(path, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            found += unknown_fields(item, schema["items"], f"{path}[{index}]")
    return found


# --- validation ----------------------------------------------------------------------------------------


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def validate(value: Any, schema: Schema, path: str, errors: Errors) -> None:
    """Append the OpenAPI v3 violations of ``value`` (already normalized) at ``path`` to ``errors``."""
    if not _check_type(value, schema, path, errors):
        return
    _check_scalar(value, schema, path, errors)
    if isinstance(value, dict):
        _check_object(value, schema, path, errors)
    elif isinstance(value, list):
        _check_array(value, schema, path, errors)
    _check_combinators(value, schema, path, errors)


def _check_type(value: Any, schema: Schema, path: str, errors: Errors) -> bool:
    actual = type_name(value)
    if schema.get("x-kubernetes-int-or-string"):
        wanted, ok = "integer,string", actual in ("integer", "string")
    else:
        wanted = str(schema.get("type") or "")
        ok = not wanted or actual == wanted or (wanted == "number" and actual == "integer")
        if value is None and schema.get("nullable"):
            return False  # null is allowed and has nothing more to check
    if not ok:
        detail = f"{path} in body must be of type {wanted}: {show(actual)}"
        errors.append((path, f"Invalid value: {show(actual)}: {detail}", "FieldValueTypeInvalid"))
    return ok


def _check_scalar(value: Any, schema: Schema, path: str, errors: Errors) -> None:
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(show(v) for v in schema["enum"])
        errors.append((path, f"Unsupported value: {show(value)}: supported values: {allowed}"))
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append((path, f"Too long: may not be more than {schema['maxLength']} bytes"))
        if "minLength" in schema and len(value) < schema["minLength"]:
            detail = f"{path} in body should be at least {schema['minLength']} chars long"
            errors.append((path, f"Invalid value: {show(value)}: {detail}"))
        if "pattern" in schema and not _regex(schema["pattern"]).search(value):
            detail = f"{path} in body should match '{schema['pattern']}'"
            errors.append((path, f"Invalid value: {show(value)}: {detail}"))
        if not _format_ok(value, str(schema.get("format") or "")):
            detail = f"{path} in body must be of type {schema['format']}: {show(value)}"
            errors.append((path, f"Invalid value: {show(value)}: {detail}"))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            detail = f"{path} in body should be greater than or equal to {schema['minimum']}"
            errors.append((path, f"Invalid value: {show(value)}: {detail}"))
        if "maximum" in schema and value > schema["maximum"]:
            detail = f"{path} in body should be less than or equal to {schema['maximum']}"
            errors.append((path, f"Invalid value: {show(value)}: {detail}"))


def _format_ok(value: str, fmt: str) -> bool:
    try:
        if fmt == "ipv4":
            ipaddress.IPv4Address(value)
        elif fmt == "ipv6":
            ipaddress.IPv6Address(value)
        elif fmt == "date-time":
            datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _check_object(value: dict[str, Any], schema: Schema, path: str, errors: Errors) -> None:
    for key in schema.get("required") or ():
        if key not in value:
            errors.append((child(path, key), "Required value"))
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        errors.append((path, f"Too many: {len(value)}: must have at most {schema['maxProperties']} items"))
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        detail = f"{path} in body should have at least {schema['minProperties']} properties"
        errors.append((path, f"Invalid value: {len(value)}: {detail}"))
    props: dict[str, Schema] = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    for key, item in value.items():
        if key in props:
            validate(item, props[key], child(path, key), errors)
        elif isinstance(extra, dict):
            validate(item, extra, f"{path}[{key}]", errors)


def _check_array(value: list[Any], schema: Schema, path: str, errors: Errors) -> None:
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append((path, f"Too many: {len(value)}: must have at most {schema['maxItems']} items"))
    if "minItems" in schema and len(value) < schema["minItems"]:
        detail = f"{path} in body should have at least {schema['minItems']} items"
        errors.append((path, f"Invalid value: {len(value)}: {detail}"))
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            validate(item, items, f"{path}[{index}]", errors)
    _check_list_type(value, schema, path, errors)


def _check_list_type(value: list[Any], schema: Schema, path: str, errors: Errors) -> None:
    list_type = schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys") or []
    seen: set[str] = set()
    for index, item in enumerate(value):
        if list_type == "map" and isinstance(item, dict):
            identity = show({k: item.get(k) for k in keys})
        elif list_type == "set" or schema.get("uniqueItems"):
            identity = show(item)
        else:
            return
        if identity in seen:
            errors.append((f"{path}[{index}]", f"Duplicate value: {identity}"))
        seen.add(identity)


def _check_combinators(value: Any, schema: Schema, path: str, errors: Errors) -> None:
    if schema.get("x-kubernetes-int-or-string"):
        return  # its anyOf only spells out "integer or string", already checked

    def passes(sub: Schema) -> bool:
        found: Errors = []
        validate(value, sub, path, found)
        return not found

    for sub in schema.get("allOf") or ():
        validate(value, sub, path, errors)
    if "anyOf" in schema and not any(passes(s) for s in schema["anyOf"]):
        errors.append((path, f"Invalid value: {show(value)}: {path} in body must match a schema in anyOf"))
    if "oneOf" in schema and sum(passes(s) for s in schema["oneOf"]) != 1:
        detail = f"{path} in body must validate one and only one schema (oneOf)"
        errors.append((path, f"Invalid value: {show(value)}: {detail}"))
    if "not" in schema and passes(schema["not"]):
        detail = f"{path} in body must not validate the schema (not)"
        errors.append((path, f"Invalid value: {show(value)}: {detail}"))
