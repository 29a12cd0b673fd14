"""Services that claim the same model name: which of them a change of one service affects. Pure: no I/O.

A service's pass warns when another service of its namespace serves one of its model names
(``ModelNameCollision``, ``llmisvc_core.httproute.collisions``). KServe checks only when the service itself
is reconciled, so its warning waits for that service's next event or resync; here, as a product decision,
a change of what another service is compared by (created or deleted, being deleted, its routing group,
the model names it advertises or, before it has an address, those of its spec) signals the services that
claim one of the names it was compared by before the change or is compared by after it: the warning
appears, changes its list or stops as soon as the cause changes.

Services are found through the cache's index of what services use (:mod:`llmisvc_core.triggers.uses`), so
a change costs the number of services sharing a name, not the size of the namespace. A service is indexed
under its spec's names and the names its status advertises (its own pass compares by its merged spec,
which the status shows once it has run), erring on the side of signalling.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ValidationError

from llmisvc_core.httproute.collisions import advertised_names, routing_names
from llmisvc_core.httproute.routing_group import stored_group
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.triggers.change import ADDED, DELETED, MODIFIED, Key, Wire


def affected_claimants(
    event_type: str,
    key: Key,
    old: Wire | None,
    new: Wire,
    claimants: Callable[[str, frozenset[str]], list[Key]],
) -> list[Key]:
    """The other services that claim a name ``new`` is (or ``old`` was) compared by, when this change
    may change their warning; ``claimants(namespace, names)`` finds the services claiming any of them."""
    if event_type in (ADDED, DELETED) or old is None:
        names = compared_names(new)
    elif event_type == MODIFIED and collision_fields_changed(old, new):
        names = compared_names(old) | compared_names(new)
    else:
        return []
    return [k for k in claimants(key[0], names) if k != key]


def collision_fields_changed(old: Wire, new: Wire) -> bool:
    """What another service's collision check reads of this one: being deleted, the group, the names."""
    deleting = [bool((svc.get("metadata") or {}).get("deletionTimestamp")) for svc in (old, new)]
    return (
        deleting[0] != deleting[1]
        or stored_group(old) != stored_group(new)
        or compared_names(old) != compared_names(new)
    )


def compared_names(svc: Wire) -> frozenset[str]:
    """The names other services compare ``svc`` by (none for a service that cannot be read)."""
    parsed = _parsed(svc)
    return advertised_names(parsed) if parsed is not None else frozenset()


def claimed_names(svc: LLMInferenceService) -> frozenset[str]:
    """The names ``svc`` is found under: its spec's and its status's."""
    return routing_names(svc) | advertised_names(svc)


def _parsed(svc: Wire) -> LLMInferenceService | None:
    try:
        return LLMInferenceService.model_validate(svc)
    except (ValidationError, RecursionError):
        return None
