"""The InferencePool API-group migration of the managed HTTPRoute (spec R-EXP-7, R-EXP-9, R-EXP-10).

A brand-new route points its default pool backendRefs at ``inference.networking.x-k8s.io`` (v1alpha2). It
moves to ``inference.networking.k8s.io`` (v1) once the gateway shows it understands v1 or rejects v1alpha2,
and the move is recorded on the route with the annotation ``serving.kserve.io/inference-pool-migrated:
"v1"`` so that later passes never move back while the route exists (quirk Q13: deleting the route loses
the lock).
"""

from __future__ import annotations

from llmisvc_core.models.gateway_api import HTTPRoute, RouteParentStatus
from llmisvc_core.models.kube import POOL_V1_GROUP, POOL_V1ALPHA2_GROUP, find_condition
from llmisvc_core.models.llmisvc import (
    POOL_KIND,
    POOL_MIGRATED_ANNOTATION,
    LLMInferenceService,
    is_default_pool_backend_ref,
)
from llmisvc_core.world.conditions import FALSE, TRUE, UNKNOWN

MIGRATED_VALUE = "v1"
RESOLVED_REFS = "ResolvedRefs"
INVALID_KIND = "InvalidKind"


def support_status(route: HTTPRoute | None, group: str) -> str:
    """Whether the route's gateways accept pool backends of ``group``: "True", "False" or "Unknown" (R-EXP-9).

    Only a ``ResolvedRefs=False/InvalidKind`` answer counts as a refusal; any other ResolvedRefs answer
    (even ``False/BackendNotFound``) means the kind is understood. The answer does not depend on which
    backend a refusal was about (quirk Q18).
    """
    if route is None or not _uses_pool_group(route, group):
        return UNKNOWN
    rejected = False
    parents = route.status.parents if route.status is not None else None
    for parent in parents or []:
        resolved = find_condition(parent.conditions, RESOLVED_REFS)
        if resolved is None or not _is_spec_parent(route, parent):
            continue
        if resolved.status == FALSE and resolved.reason == INVALID_KIND:
            rejected = True
            continue
        return TRUE
    return FALSE if rejected else UNKNOWN


def _uses_pool_group(route: HTTPRoute, group: str) -> bool:
    """Some backendRef explicitly names an InferencePool of ``group`` (unset group/kind do not count)."""
    return any(
        ref.group == group and ref.kind == POOL_KIND
        for rule in route.spec.rules or []
        for ref in rule.backend_refs or []
    )


def _is_spec_parent(route: HTTPRoute, parent: RouteParentStatus) -> bool:
    """The status entry is about one of the route's spec parents; with no spec parents, every entry is."""
    spec_parents = route.spec.parent_refs or []
    if not spec_parents:
        return True
    return any(ref.is_same_parent(parent.parent_ref, route.namespace) for ref in spec_parents)


def should_use_v1(current_route: HTTPRoute | None, installed_groups: frozenset[str] | None = None) -> bool:
    """The R-EXP-7 decision: the live route is locked on v1, or its gateways accept v1 or refuse v1alpha2.

    Without a live route the answer is v1alpha2, so a new route starts there. P3 extended: when only one
    InferencePool version is served (``installed_groups``), that one is used, as the other cannot exist.
    """
    if installed_groups is not None and len(installed_groups) == 1:
        return POOL_V1_GROUP in installed_groups
    if current_route is None:
        return False
    annotations = current_route.metadata.annotations or {}
    return (
        annotations.get(POOL_MIGRATED_ANNOTATION) == MIGRATED_VALUE
        or support_status(current_route, POOL_V1_GROUP) == TRUE
        or support_status(current_route, POOL_V1ALPHA2_GROUP) == FALSE
    )


def apply_pool_group(route: HTTPRoute, svc: LLMInferenceService, use_v1: bool) -> HTTPRoute:
    """A copy of ``route`` whose default pool backendRefs use the chosen API group (R-EXP-7 steps 3/4).

    On v1 the migration annotation is added; on v1alpha2 nothing is removed (the expected route simply
    carries no annotation, and extra live annotations are ignored by the equality rule).
    """
    result = route.model_copy(deep=True)
    group = POOL_V1_GROUP if use_v1 else POOL_V1ALPHA2_GROUP
    for rule in result.spec.rules or []:
        for ref in rule.backend_refs or []:
            if is_default_pool_backend_ref(ref, svc):
                ref.group = group
    if use_v1:
        result.metadata.annotations = {
            **(result.metadata.annotations or {}),
            POOL_MIGRATED_ANNOTATION: MIGRATED_VALUE,
        }
    return result
