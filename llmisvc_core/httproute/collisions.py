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

Every pass of a service with a route spec looks at every service of its namespace, so the stored objects
are read for their names first (:func:`stored_claims`) and only those that may collide are built into
models: building all of them made each pass O(N) model validations, half the worker's CPU at 1,000
services in one namespace (py-spy, issue 21). KServe's typed cache holds decoded objects and pays nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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


def same_routing_group(a: LLMInferenceService, b: LLMInferenceService) -> bool:
    """Go ``sameRoutingGroup``: both name a group, the same one (an empty name is a name)."""
    group = a.routing_group()
    return group is not None and group == b.routing_group()


def find_collisions(svc: LLMInferenceService, others: Iterable[LLMInferenceService]) -> list[str]:
    """Go ``findModelNameCollisions``: the sorted names of the other services whose names meet ``svc``'s."""
    own = routing_names(svc)
    return sorted(
        other.name
        for other in others
        if other.name != svc.name
        and not other.metadata.deletion_timestamp
        and not same_routing_group(svc, other)
        and own & advertised_names(other)
    )


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


def may_collide(raw: dict[str, Any], own: frozenset[str]) -> bool:
    """Whether a stored service may claim one of ``own``: False only when its names are read off the
    object and none of them is one of ``own``, or it is being deleted."""
    metadata = raw.get("metadata")
    deleting = metadata.get("deletionTimestamp") if isinstance(metadata, dict) else None
    if isinstance(deleting, str) and deleting:
        return False
    claims = stored_claims(raw)
    return claims is None or not claims.isdisjoint(own)


def namespace_services(world: PassWorld, svc: LLMInferenceService) -> list[LLMInferenceService]:
    """The stored services of ``svc``'s namespace that may claim one of its names; one whose object cannot
    be read is left out, as KServe's typed cache could not hold it either."""
    own = routing_names(svc)
    found = []
    for raw in world.reader.list(LLMISVC, svc.namespace, {}):
        if not may_collide(raw, own):
            continue
        try:
            found.append(LLMInferenceService.model_validate(raw))
        except (ValidationError, RecursionError):
            continue
    return found


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
    collisions = find_collisions(svc, namespace_services(world, svc))
    if collisions:
        world.record_event(collision_event(svc, collisions))
    return collisions
