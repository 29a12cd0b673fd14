"""Merging the status a pass computed into the latest stored status, without taking other writers' fields.

The router owns the routing fields of the status and its own conditions (plus ``Ready``, which it keeps
in step as knative does). Conditions of other controllers, such as ``WorkloadsReady``, keep the value
they have in the cluster at the time of the write, even if it changed while the pass ran; the only ones
a pass adds are those knative's initialisation fills in when they are missing.

:func:`is_router_write` is the same rule read backwards: it tells whoever watches the services (the
watcher) that a status change is one this merge could have produced, i.e. the echo of a pass, so the two
never disagree on what the router may write.
"""

from __future__ import annotations

from typing import Any

from router_core import conditions

OWNED_CONDITIONS = frozenset({conditions.READY, conditions.ROUTER_READY, *conditions.ROUTER_SUBCONDITIONS})
OWNED_FIELDS = ("url", "address", "addresses", "router", "observedGeneration")
#: Conditions of other controllers a pass adds when absent (``conditions.initialize``), never changes.
INITIALISED_CONDITIONS = frozenset(set(conditions.TERMINAL) - OWNED_CONDITIONS)


def merge_status(stored: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any]:
    """The status to write: ``stored`` with the router's fields and conditions taken from ``planned``."""
    merged = {k: v for k, v in stored.items() if k not in OWNED_FIELDS and k != "conditions"}
    merged.update({k: planned[k] for k in OWNED_FIELDS if k in planned})
    foreign = [c for c in stored.get("conditions") or [] if c.get("type") not in OWNED_CONDITIONS]
    present = {c.get("type") for c in foreign}
    # Conditions the pass initialised for others (WorkloadsReady=Unknown) fill gaps only; any other foreign
    # condition in ``planned`` is a stale copy of what the pass read, and its owner's latest word stands.
    initialised = [
        c for c in planned.get("conditions") or [] if c.get("type") in INITIALISED_CONDITIONS - present
    ]
    owned = [c for c in planned.get("conditions") or [] if c.get("type") in OWNED_CONDITIONS]
    combined = sorted([*foreign, *initialised, *owned], key=lambda c: str(c.get("type")))
    if combined:
        merged["conditions"] = combined
    return merged


def is_router_write(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """``after`` is a status the router could have written over ``before``: it differs only in the router's
    fields and conditions and in initialised conditions that were missing (a router's first write adds
    ``WorkloadsReady=Unknown``, which is not another controller's change). A condition that appeared with
    any other value (``WorkloadsReady=True``) is its owner's first word, and it changes ``Ready``."""
    present = {c.get("type") for c in before.get("conditions") or []}
    added = [c for c in after.get("conditions") or [] if c.get("type") in INITIALISED_CONDITIONS - present]
    if any(c.get("status") != conditions.UNKNOWN or c.get("reason") or c.get("message") for c in added):
        return False
    return _by_type(merge_status(before, after)) == _by_type(after)


def _by_type(status: dict[str, Any]) -> dict[str, Any]:
    """The conditions in type order: their order carries no meaning."""
    if not status.get("conditions"):
        return {k: v for k, v in status.items() if k != "conditions"}
    return {**status, "conditions": sorted(status["conditions"], key=lambda c: str(c.get("type")))}
