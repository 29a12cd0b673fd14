"""Create / update / delete decisions for managed objects (spec 3.5, Go: ``Reconcile`` and ``Delete``).

An update is decided the way KServe decides it: the desired object, completed with the server's defaults
(here applied locally instead of a dry-run request, R-CRUD-4), is compared with the live object by
DeepDerivative on spec, labels and annotations. Only a semantic difference produces a write, so extra
labels, annotations and fields that other controllers add never cause a fight.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from llmisvc_core.errors import StepFailedError
from llmisvc_core.models.kube import (
    DEPLOYMENT,
    HTTPROUTE,
    POOL_V1,
    POOL_V1ALPHA2,
    SERVICE,
    KubeObject,
    ObjectKey,
    ResourceType,
)
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world import derivative
from llmisvc_core.world.snapshot import PassWorld, Wire

#: Go type names used in KServe's messages (spec 3.5).
TYPE_TOKENS = {
    HTTPROUTE: "v1.HTTPRoute",
    POOL_V1: "v1.InferencePool",
    POOL_V1ALPHA2: "v1alpha2pool.InferencePool",
    SERVICE: "v1.Service",
    DEPLOYMENT: "v1.Deployment",
}
OWNER_TOKEN = "v1alpha2.LLMInferenceService"
#: Metadata the server owns: a dry-run response carries the live object's values.
SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")


class WriteError(StepFailedError):
    """A create/update/delete the rules refuse (e.g. the object belongs to someone else)."""


def reconcile(
    world: PassWorld,
    svc: LLMInferenceService,
    type_: ResourceType,
    expected: KubeObject,
    defaults: Callable[[Wire], Wire] | None = None,
    equal: Callable[[Wire, Wire], bool] = derivative.semantically_equal,
) -> Wire:
    """Create or update ``expected``; returns the object as the API server would return it (R-CRUD-1/2).

    ``equal`` decides whether the live object already is what is wanted (default: R-CRUD-3)."""
    namespace, name = expected.namespace, expected.name
    key = ObjectKey(type_, namespace, name)
    desired = expected.to_wire()
    if defaults is not None:
        desired = defaults(desired)
    current = world.get(type_, namespace, name)
    if current is None:
        _raise_if_rejected(world, key, "create")
        stored = copy.deepcopy(desired)
        stored["metadata"]["generation"] = 1
        world.record_apply(key, desired, stored)
        return stored
    if not is_controlled_by(current, svc):
        raise WriteError(
            f"failed to update {TYPE_TOKENS[type_]} {namespace}/{name}: it is not controlled by "
            f"{OWNER_TOKEN} {svc.namespace}/{svc.name}"
        )
    dry_run = _as_server_returns(desired, current)
    if equal(dry_run, current):
        return dry_run
    _raise_if_rejected(world, key, "update")
    manifest = copy.deepcopy(desired)
    if "resourceVersion" in current.get("metadata", {}):
        manifest["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    if dry_run.get("spec") != current.get("spec"):
        dry_run["metadata"]["generation"] = (current["metadata"].get("generation") or 0) + 1
    world.record_apply(key, manifest, dry_run)
    return dry_run


def delete(
    world: PassWorld, svc: LLMInferenceService, type_: ResourceType, namespace: str, name: str
) -> None:
    """Delete a managed object if it exists and is ours (R-CRUD-5..8); absent kinds are a no-op (P2)."""
    if not world.is_installed(type_):
        return
    current = world.get(type_, namespace, name)
    if current is None or current.get("metadata", {}).get("deletionTimestamp"):
        return
    if type_.namespaced and not is_controlled_by(current, svc):
        raise WriteError(
            f"cannot delete {TYPE_TOKENS[type_]} {namespace}/{name}: not owned by "
            f"{OWNER_TOKEN} {svc.namespace}/{svc.name}"
        )
    key = ObjectKey(type_, namespace if type_.namespaced else "", name)
    _raise_if_rejected(world, key, "delete")
    world.record_delete(key)


def _raise_if_rejected(world: PassWorld, key: ObjectKey, verb: str) -> None:
    error = world.rejected.get(key)
    if error is not None:
        raise WriteError(f"failed to {verb} {TYPE_TOKENS[key.type]} {key}: {error}")


def is_controlled_by(obj: Wire, svc: LLMInferenceService) -> bool:
    """The object's controller owner reference carries the service's UID (Go: metav1.IsControlledBy)."""
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return bool(ref.get("uid", "") == (svc.metadata.uid or ""))
    return False


def _as_server_returns(desired: Wire, current: Wire) -> Wire:
    """What a dry-run full update returns: the desired object with the live server-side fields and status."""
    result = copy.deepcopy(desired)
    live_meta = current.get("metadata", {})
    for field in SERVER_METADATA:
        if field in live_meta:
            result["metadata"][field] = (
                copy.deepcopy(live_meta[field]) if field == "managedFields" else live_meta[field]
            )
    if "status" in current:
        result["status"] = copy.deepcopy(current["status"])
    return result
