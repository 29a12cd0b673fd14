"""Kubernetes strategic merge of two LLMInferenceService specs, as KServe's config merge applies it.

KServe merges a config's spec (the base) with the next one (the override) by building a two-way
strategic merge patch from an empty spec to the override and applying it to the base. What that does is
decided by the patch strategy and merge key of each list in the Go types; this module carries those for
the schema paths of ``LLMInferenceServiceSpec`` that have them (every PodSpec and Container list with a
``patchMergeKey``) in :data:`SCHEMA`, and treats every other list as atomic (the override replaces it).

The rules, as ``k8s.io/apimachinery``'s ``strategicpatch`` applies them to such a patch:

* an override field that Go would omit (``null``, an empty list) changes nothing: the base keeps it;
* objects merge key by key, recursively; scalars and lists without a merge key are replaced;
* lists with a merge key merge item by item: an override item whose key matches a base item is merged
  into it, the others are added. Order: the override's items in its order, with the base-only items
  kept in their relative order and placed before the first override item that the base lists after
  them (``$setElementOrder`` of a two-way patch) — so new items come first;
* ``volumes`` also retain keys: a merged volume keeps only the fields the override's item names, so a
  volume source replaces the base's instead of piling up next to it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from llmisvc_core.errors import InvalidInputError

Wire = dict[str, Any]


@dataclass(frozen=True)
class ListStrategy:
    """A list merged item by item on ``key``; ``retain_keys`` drops base fields the override omits."""

    key: str
    item: str | None = None  # the schema type of the items, for nested merge keys
    retain_keys: bool = False


@dataclass(frozen=True)
class SchemaType:
    """A named type: its object-valued fields (by schema type) and its lists with a merge key."""

    fields: dict[str, str] = field(default_factory=dict)
    lists: dict[str, ListStrategy] = field(default_factory=dict)


_CONTAINER = SchemaType(
    lists={
        "ports": ListStrategy("containerPort"),
        "env": ListStrategy("name"),
        "volumeMounts": ListStrategy("mountPath"),
        "volumeDevices": ListStrategy("devicePath"),
    }
)
_POD_SPEC = SchemaType(
    lists={
        "containers": ListStrategy("name", "Container"),
        "initContainers": ListStrategy("name", "Container"),
        "ephemeralContainers": ListStrategy("name", "Container"),
        "volumes": ListStrategy("name", retain_keys=True),
        "imagePullSecrets": ListStrategy("name"),
        "hostAliases": ListStrategy("ip"),
        "topologySpreadConstraints": ListStrategy("topologyKey"),
        "resourceClaims": ListStrategy("name", retain_keys=True),
        "schedulingGates": ListStrategy("name"),
    }
)
_WORKLOAD_FIELDS = {"template": "PodSpec", "worker": "PodSpec"}

#: The Go types of ``LLMInferenceServiceSpec`` down to the lists that carry a patch merge key.
SCHEMA: dict[str, SchemaType] = {
    "LLMInferenceServiceSpec": SchemaType(
        fields={**_WORKLOAD_FIELDS, "prefill": "WorkloadSpec", "router": "RouterSpec"}
    ),
    "WorkloadSpec": SchemaType(fields=dict(_WORKLOAD_FIELDS)),
    "RouterSpec": SchemaType(fields={"scheduler": "SchedulerSpec"}),
    "SchedulerSpec": SchemaType(fields={"template": "PodSpec", "tokenizer": "TokenizerSpec"}),
    "TokenizerSpec": SchemaType(fields={"template": "PodSpec"}),
    "PodSpec": _POD_SPEC,
    "Container": _CONTAINER,
}
ROOT = "LLMInferenceServiceSpec"


class MergeError(InvalidInputError):
    """The specs cannot be merged (an item of a keyed list lacks its merge key, or is not an object)."""


def merge_specs(*specs: Wire) -> Wire:
    """``specs`` merged left to right: each one is the override of everything before it."""
    if not specs:
        return {}
    out = copy.deepcopy(specs[0])
    for override in specs[1:]:
        out = merge(out, override)
    return out


def merge(base: Wire, override: Wire, type_name: str = ROOT) -> Wire:
    """``override`` strategically merged into ``base`` (neither is modified)."""
    return _merge_object(copy.deepcopy(base), _pruned(override), SCHEMA.get(type_name), type_name)


def _pruned(value: Any) -> Any:
    """The override as Go serialises it: nulls and empty lists are omitted (``omitempty``)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if not _omitted(v)}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _omitted(value: Any) -> bool:
    return value is None or (isinstance(value, list) and not value)


def _merge_object(base: Wire, patch: Wire, schema: SchemaType | None, path: str) -> Wire:
    for key, value in patch.items():
        here = f"{path}.{key}"
        current = base.get(key)
        strategy = schema.lists.get(key) if schema is not None else None
        if strategy is not None and isinstance(value, list) and isinstance(current, list):
            base[key] = _merge_list(current, value, strategy, here)
        elif isinstance(value, dict) and isinstance(current, dict):
            child = SCHEMA.get(schema.fields.get(key, "")) if schema is not None else None
            base[key] = _merge_object(current, value, child, here)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _merge_list(base: list[Any], patch: list[Any], strategy: ListStrategy, path: str) -> list[Any]:
    item_schema = SCHEMA.get(strategy.item or "")
    base_keys = [_key(item, strategy.key, path) for item in base]
    patch_keys = [_key(item, strategy.key, path) for item in patch]
    merged: list[Any] = []
    for item, key in zip(patch, patch_keys, strict=True):
        if key in base_keys:
            old = base[base_keys.index(key)]
            if strategy.retain_keys:
                old = {k: v for k, v in old.items() if k in item}
            merged.append(_merge_object(old, item, item_schema, path))
        else:
            merged.append(copy.deepcopy(item))
    base_only = [(item, key) for item, key in zip(base, base_keys, strict=True) if key not in patch_keys]
    return _interleave(base_only, list(zip(merged, patch_keys, strict=True)), base_keys)


def _interleave(
    base_only: list[tuple[Any, Any]], patched: list[tuple[Any, Any]], base_order: list[Any]
) -> list[Any]:
    """Merge two ordered lists; a base-only item goes first only when the base lists it before the next
    patched item (a patched item the base does not have always wins the tie)."""
    out: list[Any] = []
    i = j = 0
    while i < len(base_only) or j < len(patched):
        if j >= len(patched):
            out.append(base_only[i][0])
            i += 1
        elif i >= len(base_only):
            out.append(patched[j][0])
            j += 1
        elif patched[j][1] in base_order and base_order.index(base_only[i][1]) < base_order.index(
            patched[j][1]
        ):
            out.append(base_only[i][0])
            i += 1
        else:
            out.append(patched[j][0])
            j += 1
    return out


def _key(item: Any, key: str, path: str) -> Any:
    if not isinstance(item, dict):
        raise MergeError(f"{path}: an item of a list merged by {key!r} is not an object")
    if key not in item:
        raise MergeError(f"{path}: an item lacks the merge key {key!r}")
    return item[key]
