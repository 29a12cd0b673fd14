"""Model names two services of one namespace both claim: the ``ModelNameCollision`` Warning.

A managed route matches a model by its publisher name, ``publishers/<namespace>/models/<name>``, on the
publisher paths and in the model-routing header; two services of a namespace that serve the same name give
the gateway two routes for one request, and it sends it to one of them. KServe (``router.go``
``reconcileHTTPRoutes`` and ``router_validation.go`` ``findModelNameCollisions`` at ``aaac4e294``; PR #5800)
warns about it with an Event on every pass of a service with a route spec; it changes nothing else.

This service's names come from its merged spec (model name, defaulted to the service's, and its LoRA
adapters); another service's from what its status advertises (``status.addresses[].models``), or, while it
has no addresses yet, from its stored spec. Services being deleted and members of this service's routing
group (which share a model name by design) are left out.

Every pass of a service with a route spec looks at every service of its namespace, so what the check
compares of another service (:class:`Claimant`: its name, whether it is being deleted, its group and names)
is read off the stored object (:func:`stored_claimant`); a model is built only for an object not in the
plain shape. Building every service that may collide made each pass O(N) model validations: half the
worker's CPU at 1,000 services of distinct names (py-spy, issue 21), and 40 % of it at 304 services that all
claim one name (issue 21's peer mix, where every service may collide), before it was read off the wire.
An object that is in the plain shape claims its names even when another of its fields is one this
project's model rejects: the API server admitted it against the CRD's schema, so KServe's typed cache holds
it and ``findModelNameCollisions`` counts it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError

from llmisvc_core import naming
from llmisvc_core.gocompat import gofmt
from llmisvc_core.models.kube import LLMISVC
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.events import PlannedEvent
from llmisvc_core.world.snapshot import PassWorld

MODEL_NAME_COLLISION = "ModelNameCollision"


def routing_names(svc: LLMInferenceService) -> frozenset[str]:
    """Go ``modelRoutingNames``: the publisher names of the spec's model and of its named adapters."""
    names = [svc.model_name(), *svc.lora_adapter_names()]
    return frozenset(naming.publisher_model(svc.namespace, name) for name in names)


def advertised_names(other: LLMInferenceService) -> frozenset[str]:
    """The names another service is compared by (Go ``otherModelNamesOverlap``): its addresses' models,
    or its spec's names while it has no address at all (an address without models names nothing)."""
    addresses = other.status.addresses or []
    if addresses:
        return frozenset(m.name for a in addresses for m in a.models or [])
    return routing_names(other)


@dataclass(frozen=True)
class Claimant:
    """What a service's check compares of another: its name, whether it is being deleted, its routing
    group and the names it is compared by (:func:`advertised_names`)."""

    name: str
    deleting: bool
    group: str | None
    names: frozenset[str]


def claimant(other: LLMInferenceService) -> Claimant:
    return Claimant(
        other.name, bool(other.metadata.deletion_timestamp), other.routing_group(), advertised_names(other)
    )


def colliding(svc: LLMInferenceService, others: Iterable[Claimant]) -> list[str]:
    """Go ``findModelNameCollisions``: the sorted names of the other services whose names meet ``svc``'s,
    over what was read of them: not ``svc`` itself, not being deleted, not of its routing group (Go
    ``sameRoutingGroup``: both name one, the same; an empty name is a name)."""
    own = routing_names(svc)
    group = svc.routing_group()
    return sorted(
        other.name
        for other in others
        if other.name != svc.name
        and not other.deleting
        and (group is None or other.group != group)
        and not own.isdisjoint(other.names)
    )


def stored_claimant(raw: dict[str, Any]) -> Claimant | None:
    """:func:`claimant` read off a stored object without building its model; None when a field it reads is
    not in the plain shape (the model then decides)."""
    metadata = raw.get("metadata")
    if not isinstance(metadata, dict):
        return None
    name, deleting = metadata.get("name"), metadata.get("deletionTimestamp")
    if not isinstance(name, str) or not isinstance(deleting, str | None):
        return None
    group = _stored_group(raw.get("spec"))
    names = stored_claims(raw)
    if group is _ODD or names is None:
        return None
    return Claimant(name, bool(deleting), cast("str | None", group), names)


_ODD = object()


def _stored_group(spec: object) -> object:
    """``spec.router.route.group`` of a stored spec, None when a level is absent, :data:`_ODD` when one is
    not of its type."""
    level: object = spec
    for key in ("router", "route", "group"):
        if level is None:
            return None
        if not isinstance(level, dict):
            return _ODD
        level = level.get(key)
    return level if level is None or isinstance(level, str) else _ODD


def stored_claims(raw: dict[str, Any]) -> frozenset[str] | None:
    """:func:`advertised_names` read off a stored object without building its model; None when the
    object is not in the plain shape (a field of an unexpected type), so that the model decides."""
    metadata = raw.get("metadata")
    status = raw.get("status") or {}
    if not isinstance(metadata, dict) or not isinstance(status, dict):
        return None
    if addresses := status.get("addresses"):
        return _address_models(addresses)
    spec = raw.get("spec") or {}
    model = (spec.get("model") or {}) if isinstance(spec, dict) else None
    lora = (model.get("lora") or {}) if isinstance(model, dict) else None
    adapters = (lora.get("adapters") or []) if isinstance(lora, dict) else None
    if not isinstance(model, dict) or not isinstance(adapters, list):
        return None
    name = model.get("name")
    names = [metadata.get("name", "") if name is None else name]
    for adapter in adapters:
        if not isinstance(adapter, dict):
            return None
        if adapter.get("name") is not None:
            names.append(adapter["name"])
    namespace = metadata.get("namespace", "")
    if not all(isinstance(n, str) for n in [namespace, *names]):
        return None
    return frozenset(naming.publisher_model(namespace, n) for n in names)


def _address_models(addresses: object) -> frozenset[str] | None:
    if not isinstance(addresses, list):
        return None
    names = set()
    for address in addresses:
        if not isinstance(address, dict):
            return None
        models = address.get("models")
        models = models if models is not None else []
        if not isinstance(models, list):
            return None
        for m in models:
            name = m.get("name", "") if isinstance(m, dict) else None
            if not isinstance(name, str):
                return None
            names.add(name)
    return frozenset(names)


def stored_collisions(world: PassWorld, svc: LLMInferenceService) -> list[str]:
    """:func:`colliding` over the stored services of ``svc``'s namespace, read off the wire; one not
    in the plain shape is built into its model, and left out when that fails, as KServe's typed cache could
    not hold it either."""
    others = []
    for raw in world.reader.list(LLMISVC, svc.namespace, {}):
        other = stored_claimant(raw)
        if other is None:
            try:
                other = claimant(LLMInferenceService.model_validate(raw))
            except (ValidationError, RecursionError):
                continue
        others.append(other)
    return colliding(svc, others)


def collision_event(svc: LLMInferenceService, collisions: list[str]) -> PlannedEvent:
    """The Warning, in this project's words: the model name, the services that share it, and where this
    service stays reachable whatever the gateway picks."""
    note = (
        f"model name {gofmt.quote(svc.model_name())} is also served by {', '.join(collisions)} in "
        f"namespace {svc.namespace}: the gateway sends the shared publisher paths and model-routing "
        "headers to only one of them; this service is still reached on its own path "
        f"/{svc.namespace}/{svc.name}. Expected when the overlap is meant for traffic splitting"
    )
    return PlannedEvent.warning(MODEL_NAME_COLLISION, note)


def check(world: PassWorld, svc: LLMInferenceService) -> list[str]:
    """Plan the Warning when other services of the namespace claim one of ``svc``'s model names; returns
    their names."""
    collisions = stored_collisions(world, svc)
    if collisions:
        world.record_event(collision_event(svc, collisions))
    return collisions
