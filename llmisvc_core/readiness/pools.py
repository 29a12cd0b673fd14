"""The scheduler side of readiness: InferencePoolReady (spec 3.8.1) and ``status.router.scheduler``
(R-POOL-9).

A pool is judged only by the parents that stand for the Gateways the service uses now (``keys``, as
``(namespace, name)``): a gateway controller may leave entries behind for Gateways the service no longer
uses, and those must neither block nor grant readiness. A ``None`` pool was not found (or its kind is not
installed, P3); transient read errors never reach this module.
"""

from __future__ import annotations

from llmisvc_core.gocompat import gofmt
from llmisvc_core.models.inference_pool import InferencePool, InferencePoolV1Alpha2, PoolParentStatus
from llmisvc_core.models.kube import POOL_V1, POOL_V1_GROUP, Condition, find_condition, not_found
from llmisvc_core.models.llmisvc import LLMInferenceService, ObjectReference, SchedulerStatus
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions

GatewayKey = tuple[str, str]
AnyPool = InferencePool | InferencePoolV1Alpha2

ACCEPTED = "Accepted"
WAITING_FOR_GATEWAY = "WaitingForGateway"
POOL_NOT_READY = "InferencePoolNotReady"
POOL_FETCH_ERROR = "InferencePoolFetchError"

#: A verdict: None when ready, else the (reason, message) of the False condition.
Verdict = tuple[str, str] | None


# --- pool readiness predicates ---------------------------------------------------------------------


def is_pool_ready_for_gateways(pool: AnyPool, keys: list[tuple[str, str]]) -> bool:
    """R-POOL-5: every key has a parent entry and every relevant entry is currently accepted."""
    return bool(keys) and _judge_pool(pool, keys, pool_id="") is None


def is_pool_ready(pool: AnyPool) -> bool:
    """R-POOL-10, unscoped: at least one parent and every parent currently accepted."""
    parents = pool.parents()
    return bool(parents) and all(_is_accepted(parent, pool.metadata.generation) for parent in parents)


# --- InferencePoolReady ----------------------------------------------------------------------------


def evaluate_pools(
    conds: Conditions,
    svc: LLMInferenceService,
    keys: list[tuple[str, str]],
    *,
    external_pool: InferencePool | None = None,
    v1_pool: InferencePool | None = None,
    v1alpha2_pool: InferencePoolV1Alpha2 | None = None,
) -> str | None:
    """R-POOL-1..4 in one call; returns the pass's error text for a missing external pool (X14)."""
    if svc.is_stopped():
        conditions.mark_stopped(conds, conditions.INFERENCE_POOL_READY)
        return None
    if svc.spec.router is None or svc.scheduler() is None:
        conds.unset(conditions.INFERENCE_POOL_READY)
        if svc.status.router is not None:
            svc.status.router.scheduler = None  # KServe #5798: cleared when the scheduler goes
        return None
    if svc.pool_has_ref():
        return evaluate_external_pool(conds, svc, external_pool, keys)
    evaluate_managed_pools(conds, svc, v1_pool, v1alpha2_pool, keys)
    return None


def evaluate_external_pool(
    conds: Conditions, svc: LLMInferenceService, pool: InferencePool | None, keys: list[tuple[str, str]]
) -> str | None:
    """R-POOL-3: judge the user's v1 pool (v1alpha2 is never consulted); a missing one fails the pass."""
    name = _pool_ref_name(svc)
    if pool is None:
        message = (
            f"failed to fetch referenced Inference Pool {svc.namespace}/{name}: {not_found(POOL_V1, name)}"
        )
        conds.mark_false(conditions.INFERENCE_POOL_READY, POOL_FETCH_ERROR, message)
        return message
    # Q3: the EPP Service named is the derived default even though the user's pool may use another.
    set_scheduler_status(svc, name, svc.epp_service_name())
    _apply(conds, _judge_pool(pool, keys, f"{pool.namespace}/{pool.name}"))
    return None


def evaluate_managed_pools(
    conds: Conditions,
    svc: LLMInferenceService,
    v1_pool: InferencePool | None,
    v1alpha2_pool: InferencePoolV1Alpha2 | None,
    keys: list[tuple[str, str]],
) -> None:
    """R-POOL-4: during the v1alpha2 → v1 migration either version being ready is enough."""
    name = svc.managed_pool_name()
    set_scheduler_status(svc, name, svc.epp_service_name())
    v1_ready = v1_pool is not None and is_pool_ready_for_gateways(v1_pool, keys)
    v1alpha2_ready = v1alpha2_pool is not None and is_pool_ready_for_gateways(v1alpha2_pool, keys)
    if v1_ready or v1alpha2_ready:
        conds.mark_true(conditions.INFERENCE_POOL_READY)
    elif v1_pool is not None:
        # v1 is the migration's target, so its state is the one reported.
        _apply(conds, _judge_pool(v1_pool, keys, f"{v1_pool.namespace}/{v1_pool.name}"))
    elif v1alpha2_pool is not None:
        # R-POOL-7 names the expected pool rather than the object read (the same name and namespace).
        _apply(conds, _judge_pool(v1alpha2_pool, keys, f"{svc.namespace}/{name}"))
    else:
        message = f"Inference Pool {svc.namespace}/{name} not found (checked v1 and v1alpha2)"
        conds.mark_false(conditions.INFERENCE_POOL_READY, POOL_FETCH_ERROR, message)


def set_scheduler_status(svc: LLMInferenceService, pool_name: str, service_name: str) -> None:
    """R-POOL-9 (mutates ``svc.status``): record the pool and EPP Service, only once routing status exists."""
    router = svc.status.router
    if router is None:
        return
    router.scheduler = SchedulerStatus(
        inference_pool=ObjectReference(group=POOL_V1_GROUP, kind=POOL_V1.kind, name=pool_name),
        service=ObjectReference(group="", kind="Service", name=service_name),
    )


# --- helpers ---------------------------------------------------------------------------------------


def _judge_pool(pool: AnyPool, keys: list[GatewayKey], pool_id: str) -> Verdict:
    """R-POOL-6 (v1) and R-POOL-7 (v1alpha2): the first reason, in rule order, the pool is not ready."""
    relevant = _relevant_parents(pool, keys)
    if not relevant:
        return (
            WAITING_FOR_GATEWAY,
            f"Inference Pool {pool_id} exists but no Gateway controller has accepted it yet",
        )
    claimed = {_parent_key(parent, pool.namespace) for parent in relevant}
    for namespace, name in keys:
        if (namespace, name) not in claimed:
            return (
                WAITING_FOR_GATEWAY,
                f"Inference Pool {pool_id} is not yet accepted by gateway {namespace}/{name}",
            )
    generation = pool.metadata.generation
    if all(_is_accepted(parent, generation) for parent in relevant):
        return None
    rejection = _first_rejection(relevant, generation)
    if rejection is None:
        # Only missing Accepted conditions: nothing more specific to say.
        return POOL_NOT_READY, f"The inference pool {pool_id} is not ready"
    return POOL_NOT_READY, (
        f"{pool_id}: {rejection.type}={gofmt.status_value(rejection.status)} "
        f"(reason {gofmt.quote(rejection.reason or '')}, message {gofmt.quote(rejection.message or '')})"
    )


def _apply(conds: Conditions, verdict: Verdict) -> None:
    if verdict is None:
        conds.mark_true(conditions.INFERENCE_POOL_READY)
    else:
        conds.mark_false(conditions.INFERENCE_POOL_READY, *verdict)


def _relevant_parents(pool: AnyPool, keys: list[GatewayKey]) -> list[PoolParentStatus]:
    wanted = set(keys)
    return [parent for parent in pool.parents() if _parent_key(parent, pool.namespace) in wanted]


def _parent_key(parent: PoolParentStatus, pool_namespace: str) -> GatewayKey:
    """Parent identity: namespace (empty or absent means the pool's) and name; group and kind are ignored."""
    return parent.parent_ref.namespace or pool_namespace, parent.parent_ref.name


def _is_accepted(parent: PoolParentStatus, generation: int | None) -> bool:
    accepted = find_condition(parent.conditions, ACCEPTED)
    return accepted is not None and accepted.status == conditions.TRUE and not accepted.is_stale(generation)


def _first_rejection(parents: list[PoolParentStatus], generation: int | None) -> Condition | None:
    """The first Accepted condition that is not True or is stale (parents without one are passed over)."""
    for parent in parents:
        accepted = find_condition(parent.conditions, ACCEPTED)
        if accepted is not None and not _is_accepted(parent, generation):
            return accepted
    return None


def _pool_ref_name(svc: LLMInferenceService) -> str:
    scheduler = svc.scheduler()
    if scheduler is None or scheduler.pool is None or scheduler.pool.ref is None:
        return ""
    return scheduler.pool.ref.name
