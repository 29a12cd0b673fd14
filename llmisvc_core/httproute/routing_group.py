"""Traffic splitting: a routing group's weighted backends on the managed route, and its status.

KServe (``router_group.go``, ``router_group_routing.go``, ``router_group_status.go`` at ``aaac4e294``; PRs
#5727, #5798, #5812, #5820, #5847, #5943) lets services of one namespace share traffic: each names a group
in ``spec.router.route.group`` and a share in ``weight``. Every member's managed route then sends its
shared rules to the backends of all members, weighted. A member sees its peers as they are stored (spec
and status), never merged: the members are read from the pass's world, which holds the
LLMInferenceServices of the namespace (the cache of the live router, the state file of ``plan``).

Peers take part when they are routable (``RouterReady=True`` and ready replicas on every workload) or
stopped (kept in the status, left out of the backends); members being deleted are left out. Members whose
model names differ from this service's are reported, not routed (``GroupDegraded``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from llmisvc_core import naming
from llmisvc_core.models.gateway_api import HTTPBackendRef, HTTPRoute, HTTPRouteRule
from llmisvc_core.models.kube import LLMISVC, POOL_V1ALPHA2_GROUP, KubeModel
from llmisvc_core.models.llmisvc import (
    POOL_KIND,
    GroupMemberStatus,
    GroupStatus,
    LLMInferenceService,
    RouterStatus,
    is_default_pool_backend_ref,
)
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions
from llmisvc_core.world.snapshot import PassWorld, Wire

#: The port of a member's backend, whatever its kind (KServe hard-codes it).
MEMBER_PORT = 8000
MEMBER_DIVERGENCE = "MemberDivergence"


@dataclass(frozen=True)
class Member:
    """A member as the group routes it (Go: ``resolvedMember``)."""

    name: str
    model_names: tuple[str, ...]
    weight: int
    stopped: bool
    backend_ref: Wire


@dataclass(frozen=True)
class Membership:
    """The members this service routes to (``matching``) and those it reports (``divergent``)."""

    group: str
    matching: tuple[Member, ...]
    divergent: tuple[Member, ...]


# --- who is a member -----------------------------------------------------------------------------


def group_members(world: PassWorld, namespace: str, group: str) -> list[LLMInferenceService]:
    """The stored services of ``namespace`` whose own spec names ``group`` (Go: the field index on
    ``.spec.router.route.group``). A peer whose spec cannot be read is left out: KServe's typed cache
    could not hold it either."""
    found = []
    for raw in world.reader.list(LLMISVC, namespace, {}):
        if stored_group(raw) != group:
            continue
        try:
            found.append(LLMInferenceService.model_validate(raw))
        except ValidationError:
            continue
    return found


def stored_group(raw: Wire | None) -> str | None:
    """A stored service's ``spec.router.route.group``, read from the wire (the spec need not parse);
    None when absent or not a string. The watcher finds a member's peers by the same rule."""
    spec = raw.get("spec") if isinstance(raw, dict) else None
    router = spec.get("router") if isinstance(spec, dict) else None
    route = router.get("route") if isinstance(router, dict) else None
    group = route.get("group") if isinstance(route, dict) else None
    return group if isinstance(group, str) else None


class _Workload(KubeModel):
    ready_replicas: int | None = None


class _Workloads(KubeModel):
    """``status.workloads`` (the workload reconciler's): only the replica counts are read."""

    primary: _Workload | None = None
    prefill: _Workload | None = None
    scheduler: _Workload | None = None


def is_member_routable(member: LLMInferenceService) -> bool:
    """Go ``isMemberRoutable``: RouterReady True, a primary workload, and no workload without a ready
    replica."""
    ready = next((c for c in member.status.conditions or [] if c.type == conditions.ROUTER_READY), None)
    if ready is None or ready.status != conditions.TRUE:
        return False
    raw = (member.status.model_extra or {}).get("workloads")
    try:
        workloads = _Workloads.model_validate(raw) if isinstance(raw, dict) else None
    except ValidationError:
        return False
    if workloads is None or workloads.primary is None:
        return False
    present = (w for w in (workloads.primary, workloads.prefill, workloads.scheduler) if w is not None)
    return all(w.ready_replicas for w in present)


def eligible_members(members: list[LLMInferenceService], self_name: str) -> list[LLMInferenceService]:
    """Go ``filterEligibleMembers``: not being deleted, and self, stopped or routable."""
    return [
        m
        for m in members
        if not m.metadata.deletion_timestamp
        and (m.name == self_name or m.is_stopped() or is_member_routable(m))
    ]


# --- what a member serves and where --------------------------------------------------------------


def resolved_model_names(svc: LLMInferenceService) -> tuple[str, ...]:
    """Go ``resolvedModelNames``: the models of ``status.addresses`` when there are any, else the spec's
    model name (defaulted to the service's) and adapter names; sorted, without repeats."""
    names = [m.name for a in svc.status.addresses or [] for m in a.models or []]
    if not names:
        names = [svc.model_name(), *svc.lora_adapter_names()]
    return tuple(sorted(set(names)))


def member_backend_ref(member: LLMInferenceService) -> Wire:
    """Go ``resolveMemberBackendRef``: a pool ref (always the v1alpha2 group, as KServe writes it), else the
    pool of ``status.router.scheduler``, else the workload Service; port 8000."""
    scheduler = member.scheduler()
    if scheduler is not None and scheduler.pool is not None and scheduler.pool.has_ref():
        name = scheduler.pool.ref.name if scheduler.pool.ref is not None else ""
        return {"group": POOL_V1ALPHA2_GROUP, "kind": POOL_KIND, "name": name, "port": MEMBER_PORT}
    router = member.status.router
    pool = router.scheduler.inference_pool if router and router.scheduler else None
    if pool is not None:
        return {"group": pool.group, "kind": pool.kind, "name": pool.name, "port": MEMBER_PORT}
    return {"kind": "Service", "name": naming.workload_service_name(member.name), "port": MEMBER_PORT}


def resolve(members: list[LLMInferenceService]) -> list[Member]:
    """Go ``resolveGroupMembers``: each member's weight (0 when absent), stop and backend, by name."""
    resolved = [
        Member(
            name=m.name,
            model_names=resolved_model_names(m),
            weight=m.routing_weight(),
            stopped=m.is_stopped(),
            backend_ref=member_backend_ref(m),
        )
        for m in members
    ]
    return sorted(resolved, key=lambda m: m.name)


def membership(world: PassWorld, svc: LLMInferenceService, group: str) -> Membership:
    """Go ``injectGroupBackendRefs`` minus the rewrite: split the eligible members into those serving
    this service's models and the others. A stopped member has no addresses, so it matches when its
    spec names this service's (spec) model name."""
    members = resolve(eligible_members(group_members(world, svc.namespace, group), svc.name))
    own = resolved_model_names(svc)
    matching: list[Member] = []
    divergent: list[Member] = []
    for member in members:
        same = svc.model_name() in member.model_names if member.stopped else member.model_names == own
        (matching if same else divergent).append(member)
    return Membership(group, tuple(matching), tuple(divergent))


# --- the route -----------------------------------------------------------------------------------


def rewrite_rules(route: HTTPRoute, svc: LLMInferenceService, members: tuple[Member, ...]) -> None:
    """Go ``rewriteRulesForGroup``: every shared rule with a controller-managed backend routes to the
    weighted backends of the members not stopped (a weight 0 backend still leaks traffic on some
    gateways). Per-participant rules (``/<ns>/<name>``) and rules with only user backends are kept."""
    backends = [
        HTTPBackendRef.model_validate({**m.backend_ref, "weight": m.weight}) for m in members if not m.stopped
    ]
    prefix = f"/{svc.namespace}/{svc.name}"
    for rule in route.spec.rules or []:
        if is_per_participant_rule(rule, prefix) or not has_managed_backend(rule, svc):
            continue
        rule.backend_refs = [b.model_copy(deep=True) for b in backends]


def is_per_participant_rule(rule: HTTPRouteRule, prefix: str) -> bool:
    """A path match on ``prefix`` or below it (a segment boundary: ``/ns/a`` is not under ``/ns/ab``)."""
    for match in rule.matches or []:
        value = match.path.value if match.path is not None else None
        if value is not None and (value == prefix or value.startswith(prefix + "/")):
            return True
    return False


def has_managed_backend(rule: HTTPRouteRule, svc: LLMInferenceService) -> bool:
    return any(is_expected_backend_ref(ref, svc) for ref in rule.backend_refs or [])


def is_expected_backend_ref(ref: HTTPBackendRef, svc: LLMInferenceService) -> bool:
    """Go ``isExpectedBackendRef``: the managed pool, the workload Service or the ``pool.ref`` pool."""
    if is_default_pool_backend_ref(ref, svc):
        return True
    if (ref.kind or "Service") == "Service" and ref.name == naming.workload_service_name(svc.name):
        return True
    scheduler = svc.scheduler()
    pool_ref = scheduler.pool.ref if scheduler is not None and scheduler.pool is not None else None
    return svc.pool_has_ref() and ref.kind == POOL_KIND and pool_ref is not None and ref.name == pool_ref.name


# --- the status ----------------------------------------------------------------------------------


def apply_status(conds: Conditions, svc: LLMInferenceService, group: Membership) -> None:
    """Go ``applyGroupStatus``: ``status.router.group`` lists the matching members; ``GroupReady`` True;
    ``GroupDegraded`` True (MemberDivergence) when some members serve other models, else absent."""
    members = [
        GroupMemberStatus(
            name=m.name, weight=m.weight, stopped=True if m.stopped else None, backend_ref=dict(m.backend_ref)
        )
        for m in group.matching
    ]
    if svc.status.router is None:
        svc.status.router = RouterStatus()
    svc.status.router.group = GroupStatus(name=group.group, members=members or None)
    conds.mark_true(conditions.GROUP_READY)
    if group.divergent:
        conds.mark_true(conditions.GROUP_DEGRADED, MEMBER_DIVERGENCE, divergence_message(group.divergent))
    else:
        conds.unset(conditions.GROUP_DEGRADED)


def divergence_message(divergent: tuple[Member, ...]) -> str:
    sets = sorted({"+".join(m.model_names) for m in divergent})
    return "group has members with different model sets: " + ", ".join(sets)


def divergence_event_note(group: str) -> str:
    """The note of KServe's Warning Event ``MemberDivergence`` (Go ``%q``: a quoted group name)."""
    return f'Group "{group}" has members with divergent model.name or LoRA adapter sets'


def clear(conds: Conditions, svc: LLMInferenceService) -> None:
    """Go ``MarkGroupReadyUnset`` and ``Status.Router.Group = nil``: a service that is not grouped."""
    conds.unset(conditions.GROUP_READY)
    conds.unset(conditions.GROUP_DEGRADED)
    if svc.status.router is not None:
        svc.status.router.group = None
