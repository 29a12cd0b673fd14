"""Merging the status a pass computed into the latest stored status, without taking other writers' fields.

The router owns the routing fields of the status, ``appliedConfigs`` and its own conditions (with
``PresetsCombined``, which the configuration merge sets). Conditions of other controllers, such as
``WorkloadsReady``, keep the value they have in the cluster at the time of the write, even if it changed
while the pass ran. ``Ready`` summarises ``PresetsCombined``, ``WorkloadsReady`` and ``RouterReady``
(knative's living condition set; KServe #5918), so once they come from different writers it is made
consistent with all three.

:func:`is_router_write` is the same rule read backwards: it tells whoever watches the services (the
watcher) that a status change is one this merge could have produced, i.e. the echo of a pass, so the two
never disagree on what the router may write.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from llmisvc_core.world import conditions

OWNED_CONDITIONS = frozenset(
    {
        conditions.READY,
        conditions.ROUTER_READY,
        conditions.PRESETS_COMBINED,
        conditions.GROUP_READY,
        conditions.GROUP_DEGRADED,
        *conditions.ROUTER_SUBCONDITIONS,
    }
)
OWNED_FIELDS = ("url", "address", "addresses", "router", "observedGeneration", "appliedConfigs")
Wire = dict[str, Any]
#: Conditions of other controllers a pass adds when absent (``conditions.initialize``), never changes.
INITIALISED_CONDITIONS = frozenset(set(conditions.TERMINAL) - OWNED_CONDITIONS)


def merge_status(stored: Wire, planned: Wire) -> Wire:
    """The status to write: ``stored`` with the router's fields and conditions taken from ``planned``."""
    merged = {k: v for k, v in stored.items() if k not in OWNED_FIELDS and k != "conditions"}
    merged.update({k: planned[k] for k in OWNED_FIELDS if k in planned})
    # Another writer's entry that is not an object is theirs too: kept as it is, never read.
    foreign = [c for c in conditions_of(stored) if type_of(c) not in OWNED_CONDITIONS]
    present = {type_of(c) for c in foreign}
    # Conditions the pass initialised for others (WorkloadsReady=Unknown) fill gaps only; any other foreign
    # condition in ``planned`` is a stale copy of what the pass read, and its owner's latest word stands.
    initialised = [c for c in conditions_of(planned) if type_of(c) in INITIALISED_CONDITIONS - present]
    owned = [c for c in conditions_of(planned) if type_of(c) in OWNED_CONDITIONS]
    combined = sorted([*foreign, *initialised, *owned], key=lambda c: str(type_of(c)))
    if combined:
        merged["conditions"] = _consistent_ready(combined)
    return merged


def conditions_of(status: Wire) -> list[Any]:
    """``status.conditions`` as stored: a list whose entries may be anything another writer put there."""
    found = status.get("conditions") if isinstance(status, dict) else None
    return list(found) if isinstance(found, list) else []


def type_of(condition: object) -> object:
    """A condition's ``type``; None for an entry that is not an object."""
    return condition.get("type") if isinstance(condition, dict) else None


def _consistent_ready(conds: list[Any]) -> list[Any]:
    """``Ready`` as knative derives it from the terminal conditions: False if one is False (that one's
    reason and message, the newest first), else Unknown if one is Unknown or missing, else True. The
    pass's own ``Ready`` is kept when it already agrees (it may carry e.g. ``NewObservedGenFailure``)."""
    by_type = {c.get("type"): c for c in conds if isinstance(c, dict)}
    ready = by_type.get(conditions.READY)
    if ready is None:
        return conds
    terminals = [by_type.get(t) for t in conditions.TERMINAL]
    present = sorted(
        (c for c in terminals if c is not None),
        key=lambda c: str(c.get("lastTransitionTime") or ""),
        reverse=True,
    )
    decisive = next((c for c in present if c.get("status") == conditions.FALSE), None)
    if decisive is None:
        decisive = next((c for c in present if c.get("status") != conditions.TRUE), None)
    wanted = decisive.get("status") if decisive is not None else conditions.TRUE
    if len(present) < len(terminals) and decisive is None:
        wanted = conditions.UNKNOWN
    if ready.get("status") == wanted:
        return conds
    fixed: Wire = {"type": conditions.READY, "status": wanted}
    source = decisive if decisive is not None else ready
    for key in ("lastTransitionTime", "reason", "message"):
        if source.get(key) is not None and (decisive is not None or key == "lastTransitionTime"):
            fixed[key] = source[key]
    return [fixed if type_of(c) == conditions.READY else c for c in conds]


def router_basis(status: Wire) -> str:
    """A fingerprint of the router's part of a stored status (its fields and conditions but ``Ready``,
    which other writers' conditions move too). A pass's plan records the one it was made from; the
    status writer finds another there when a newer pass (or another worker) wrote meanwhile, and plans
    again instead of writing an older word over it."""
    part: Wire = {k: status[k] for k in OWNED_FIELDS if k in status}
    part["conditions"] = sorted(
        (c for c in conditions_of(status) if type_of(c) in OWNED_CONDITIONS - {conditions.READY}),
        key=lambda c: str(type_of(c)),
    )
    encoded = json.dumps(part, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(encoded.encode()).hexdigest()[:16]


def is_router_write(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """``after`` is a status the router could have written over ``before``: it differs only in the router's
    fields and conditions and in initialised conditions that were missing (a router's first write adds
    ``WorkloadsReady=Unknown``, which is not another controller's change). A condition that appeared with
    any other value (``WorkloadsReady=True``) is its owner's first word, and it changes ``Ready``."""
    present = {type_of(c) for c in conditions_of(before)}
    added = [c for c in conditions_of(after) if type_of(c) in INITIALISED_CONDITIONS - present]
    if any(c.get("status") != conditions.UNKNOWN or c.get("reason") or c.get("message") for c in added):
        return False
    return _by_type(merge_status(before, after)) == _by_type(after)


def _by_type(status: dict[str, Any]) -> dict[str, Any]:
    """The conditions in type order: their order carries no meaning."""
    if not status.get("conditions"):
        return {k: v for k, v in status.items() if k != "conditions"}
    if not isinstance(status["conditions"], list):
        return status
    return {**status, "conditions": sorted(status["conditions"], key=lambda c: str(type_of(c)))}
