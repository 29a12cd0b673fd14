"""Merging the status a pass computed into the latest stored status, without taking other writers' fields.

The router owns the routing fields of the status and its own conditions (plus ``Ready``, which it keeps
in step as knative does). Conditions of other controllers, such as ``WorkloadsReady``, keep the value
they have in the cluster at the time of the write, even if it changed while the pass ran.
"""

from __future__ import annotations

from typing import Any

from router_core import conditions

OWNED_CONDITIONS = frozenset({conditions.READY, conditions.ROUTER_READY, *conditions.ROUTER_SUBCONDITIONS})
OWNED_FIELDS = ("url", "address", "addresses", "router", "observedGeneration")


def merge_status(stored: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any]:
    """The status to write: ``stored`` with the router's fields and conditions taken from ``planned``."""
    merged = {k: v for k, v in stored.items() if k not in OWNED_FIELDS and k != "conditions"}
    merged.update({k: planned[k] for k in OWNED_FIELDS if k in planned})
    foreign = [c for c in stored.get("conditions") or [] if c.get("type") not in OWNED_CONDITIONS]
    present = {c.get("type") for c in foreign}
    # Conditions the pass initialised for others (e.g. WorkloadsReady=Unknown) fill gaps only.
    initialised = [
        c for c in planned.get("conditions") or [] if c.get("type") not in OWNED_CONDITIONS | present
    ]
    owned = [c for c in planned.get("conditions") or [] if c.get("type") in OWNED_CONDITIONS]
    combined = sorted([*foreign, *initialised, *owned], key=lambda c: str(c.get("type")))
    if combined:
        merged["conditions"] = combined
    return merged
