"""Routing-group peers: which members of a group a change of one member affects. Pure: no I/O.

KServe (``router_group_handler.go``, #5812/#5943) re-reconciles the other members of a member's group when
the member is created or deleted with a group, or when a change touches what its peers route by
(``trafficFieldsChanged``): being deleted, the stop, ``spec.router``, ``spec.model``, ``spec.baseRefs``,
its routability (RouterReady and ready replicas) or the model names its status advertises. A member that
switches or leaves a group also affects the members of the group it left.

Members are found through the cache's index of what services use (the group of a service is its stored
``spec.router.route.group``, as KServe's field index has it, :mod:`llmisvc_core.triggers.uses`), so a
change costs the size of the group, not of the cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pydantic import ValidationError

from llmisvc_core.httproute.routing_group import is_member_routable, resolved_model_names, stored_group
from llmisvc_core.models.llmisvc import STOP_ANNOTATION, LLMInferenceService
from llmisvc_core.triggers.change import ADDED, DELETED, MODIFIED, Key, Wire


def affected_peers(
    event_type: str, key: Key, old: Wire | None, new: Wire, members: Callable[[str, str], list[Key]]
) -> list[Key]:
    """The other members of ``new``'s group (and of the group it left) that this change affects;
    ``members(namespace, group)`` finds a group's members."""
    new_group = stored_group(new)
    if event_type in (ADDED, DELETED) or old is None:
        groups: Iterable[str | None] = (new_group,)
    elif event_type == MODIFIED and traffic_fields_changed(old, new):
        old_group = stored_group(old)
        groups = (new_group, old_group if old_group != new_group else None)
    else:
        groups = ()
    peers = [m for g in groups if g is not None for m in members(key[0], g) if m != key]
    return list(dict.fromkeys(peers))


def traffic_fields_changed(old: Wire, new: Wire) -> bool:
    """Go ``trafficFieldsChanged``: a change a peer's route or group status may depend on."""
    if _deleting(old) != _deleting(new) or _stopped(old) != _stopped(new):
        return True
    old_spec, new_spec = _spec(old), _spec(new)
    if any(old_spec.get(k) != new_spec.get(k) for k in ("router", "model", "baseRefs")):
        return True
    before, after = _parsed(old), _parsed(new)
    if before is None or after is None:
        return True  # cannot tell: err on the side of signalling
    return is_member_routable(before) != is_member_routable(after) or resolved_model_names(
        before
    ) != resolved_model_names(after)


def _spec(svc: Wire) -> Wire:
    spec = svc.get("spec")
    return spec if isinstance(spec, dict) else {}


def _meta(svc: Wire) -> Wire:
    meta = svc.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _deleting(svc: Wire) -> bool:
    return bool(_meta(svc).get("deletionTimestamp"))


def _stopped(svc: Wire) -> bool:
    value = (_meta(svc).get("annotations") or {}).get(STOP_ANNOTATION)
    return isinstance(value, str) and value.lower() == "true"


def _parsed(svc: Wire) -> LLMInferenceService | None:
    try:
        return LLMInferenceService.model_validate(svc)
    except (ValidationError, RecursionError):
        return None
