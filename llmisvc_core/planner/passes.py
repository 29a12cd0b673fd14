"""One router pass: from a snapshot of the cluster to a plan (spec section 2, decisions of section 7).

``plan_pass`` is the single entry point that ``llmisvc-router plan``, the Temporal activities and the tests
share. It follows KServe's step order and short-circuits: preconditions, reference validation, the
scheduler, routes and routing status, then the InferencePool, Gateway and HTTPRoute conditions; the
RouterReady rollup runs whatever happened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from llmisvc_core.checks import preconditions, references
from llmisvc_core.errors import StepFailedError
from llmisvc_core.httproute import lora_routing
from llmisvc_core.merge import config_merge, presets, rendered_validation, spec_validation
from llmisvc_core.merge.rendered_validation import Verdict
from llmisvc_core.models.core_objects import ConfigMap
from llmisvc_core.models.kube import CONFIGMAP, KNOWN_TYPES, ObjectKey
from llmisvc_core.models.llmisvc import LLMInferenceService, LLMInferenceServiceSpec
from llmisvc_core.planner import evaluation, route_step
from llmisvc_core.planner.plan import ObjectRef, Outcome, PassPlan
from llmisvc_core.pools import scheduler
from llmisvc_core.readiness import gateways_and_routes
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions
from llmisvc_core.world.config import (
    CONFIGMAP_NAME,
    ConfigError,
    Environment,
    RouterConfig,
    load_router_config,
)
from llmisvc_core.world.snapshot import PassWorld, Reader

T = TypeVar("T")


class _PassEndedError(Exception):
    def __init__(self, outcome: Outcome, message: str | None = None) -> None:
        super().__init__(message or outcome.value)
        self.outcome = outcome
        self.message = message


class _AwaitingVerdictError(Exception):
    """The merged spec has no verdict of the API server yet: the pass stops before it decides anything."""

    def __init__(self, dry_run: dict[str, Any]) -> None:
        super().__init__("awaiting the API server's verdict on the merged spec")
        self.dry_run = dry_run


def plan_pass(
    stored: LLMInferenceService,
    reader: Reader,
    env: Environment,
    now: str,
    rejected: Mapping[ObjectRef, str] | None = None,
    verdicts: Mapping[str, Verdict] | None = None,
) -> PassPlan:
    """Run one pass for ``stored`` (the service as read) over ``reader``; ``now`` stamps changed conditions.

    ``rejected`` names writes the API server refused (with its error text) when an earlier plan from the
    same snapshot was carried out; the pass then stops where KServe's would and reports that error.

    ``verdicts`` are the API server's answers on merged specs, by digest (KServe #5918,
    :mod:`llmisvc_core.merge.rendered_validation`); None where there is no API server to ask (``plan``,
    shadow mode): the check is skipped. When the merged spec has no verdict, the plan only carries
    ``dry_run``, the object to ask about, and decides nothing else.
    """
    svc = stored.model_copy(deep=True)
    if svc.metadata.deletion_timestamp:
        return PassPlan(status=stored.status.to_wire())  # 1.1 step 1: never route an object being deleted
    before = [c.model_copy() for c in svc.status.conditions or []]
    conds = Conditions(svc.status, now)
    conditions.initialize(conds, svc.metadata.generation, svc.status.observed_generation)
    world = PassWorld(reader, {ref.key(): error for ref, error in (rejected or {}).items()})
    outcome, message = Outcome.RECONCILED, None
    try:
        config = _load_config(reader, env)
        svc.spec = _merged_spec(conds, svc, reader, env, config, verdicts)
        _run_router(conds, world, svc, config, env)
    except _AwaitingVerdictError as awaiting:
        return PassPlan(status=stored.status.to_wire(), dry_run=awaiting.dry_run)
    except _PassEndedError as failed:
        outcome, message = failed.outcome, failed.message
    conditions.finalize(svc.status, before, svc.metadata.generation)
    return PassPlan(
        apply=[world.applied[k] for k in sorted(world.applied, key=_sort_key)],
        delete=[ObjectRef.of(k) for k in sorted(world.deleted, key=_sort_key)],
        status=svc.status.to_wire(),
        outcome=outcome,
        message=message if outcome is Outcome.FAILED else None,
        events=list(world.events),
    )


def _load_config(reader: Reader, env: Environment) -> RouterConfig:
    raw = reader.get(CONFIGMAP, env.kserve_namespace, CONFIGMAP_NAME)
    data = ConfigMap.model_validate(raw).data or {} if raw is not None else None
    try:
        return load_router_config(data, env)
    except ConfigError as err:
        raise _PassEndedError(Outcome.FAILED, f"failed to load ingress config: {err}") from err


def _merged_spec(
    conds: Conditions,
    svc: LLMInferenceService,
    reader: Reader,
    env: Environment,
    config: RouterConfig,
    verdicts: Mapping[str, Verdict] | None,
) -> LLMInferenceServiceSpec:
    """Step 4 of 1.1: the spec merged with its configs and validated, with ``PresetsCombined`` and
    ``status.appliedConfigs`` as KServe writes them. A failure ends the pass before the router runs, except
    for a stopped service, which is cleaned up with its spec as written (R-STOP-4)."""
    try:
        combined = config_merge.combine(svc, reader, env, config)
        merged = presets.adjust(svc, combined.spec).spec
        spec_validation.validate(svc.name, merged.to_wire())
    except (config_merge.CombineError, spec_validation.SpecInvalidError) as err:
        if svc.is_stopped():
            conds.mark_false(
                conditions.PRESETS_COMBINED, "Stopped", f"Service is stopped with warning: {err}"
            )
            return svc.spec
        svc.status.applied_configs = None
        if isinstance(err, config_merge.ConfigNotFoundError):
            # Not retried: the watch on LLMInferenceServiceConfigs re-runs the pass when it appears.
            conds.mark_false(conditions.PRESETS_COMBINED, "ConfigNotFound", str(err))
            raise _PassEndedError(Outcome.INVALID_REFERENCES) from err
        conds.mark_false(conditions.PRESETS_COMBINED, "CombineBaseError", str(err))
        raise _PassEndedError(Outcome.FAILED, f"failed to combine base-configurations: {err}") from err
    if not _rendered_spec_accepted(conds, svc, combined.applied, merged.to_wire(), verdicts):
        return svc.spec
    svc.status.applied_configs = [applied.to_wire() for applied in combined.applied] or None
    built_ins = combined.built_ins()
    if built_ins:
        # A product decision: say that KServe's shipped copies stood in for configs the cluster lacks.
        message = (
            f"built-in copies of KServe's configs used (not found in the cluster): {', '.join(built_ins)}"
        )
        conds.mark_true(conditions.PRESETS_COMBINED, BUILT_IN_REASON, message)
    else:
        conds.mark_true(conditions.PRESETS_COMBINED)
    return merged


BUILT_IN_REASON = "BuiltInConfigs"


def _rendered_spec_accepted(
    conds: Conditions,
    svc: LLMInferenceService,
    applied: list[config_merge.AppliedConfig],
    merged: dict[str, Any],
    verdicts: Mapping[str, Verdict] | None,
) -> bool:
    """KServe #5918: the merged spec as the API server judged it. False: a stopped service goes on with
    its own spec; a refusal otherwise ends the pass, with ``status.appliedConfigs`` kept to say what was
    merged. A rejection waits for the spec or a config to change; a check that got no answer is
    ``Unknown``, since the service may still be serving, and is asked again at the re-check."""
    if verdicts is None:
        return True
    dry_run = rendered_validation.dry_run_object(svc.name, svc.namespace, merged)
    verdict = verdicts.get(rendered_validation.digest_of(dry_run))
    if verdict is None:
        raise _AwaitingVerdictError(dry_run)
    if verdict.outcome is rendered_validation.Outcome.ACCEPTED:
        return True
    if svc.is_stopped():
        conds.mark_false(
            conditions.PRESETS_COMBINED, "Stopped", f"Service is stopped with warning: {verdict.error}"
        )
        return False
    svc.status.applied_configs = [a.to_wire() for a in applied] or None
    message = rendered_validation.condition_message(applied, verdict.detail)
    if verdict.outcome is rendered_validation.Outcome.REJECTED:
        conds.mark_false(conditions.PRESETS_COMBINED, rendered_validation.INVALID_REASON, message)
        raise _PassEndedError(Outcome.FAILED, f"rendered config rejected: {verdict.error}")
    conds.mark_unknown(conditions.PRESETS_COMBINED, rendered_validation.UNAVAILABLE_REASON, message)
    raise _PassEndedError(Outcome.FAILED, f"failed to dry-run validate rendered config: {verdict.error}")


def _run_router(
    conds: Conditions, world: PassWorld, svc: LLMInferenceService, config: RouterConfig, env: Environment
) -> None:
    """Section 2, steps 1-8, with the rollup (step 0) run on every exit."""
    try:
        _check_preconditions(conds, world, svc)
        # P6: a stop is carried out even when references are invalid.
        if not svc.is_stopped() and references.apply_validation(conds, world, svc) is not None:
            raise _PassEndedError(Outcome.INVALID_REFERENCES)
        _step(conds, _SCHEDULER_STEP, lambda: scheduler.reconcile_scheduler(conds, world, svc))
        resolved = _step(
            conds, _ROUTES_STEP, lambda: route_step.reconcile_http_routes(conds, world, svc, config, env)
        )
        try:
            evaluation.evaluate_pools(conds, world, svc, resolved)
        except evaluation.EvaluationError as err:
            raise _PassEndedError(Outcome.FAILED, str(err)) from err
        gateways_and_routes.evaluate_gateways(conds, svc, [r.gateway for r in resolved])
        evaluation.evaluate_routes(conds, world, svc)
    finally:
        conditions.determine_router_readiness(conds)


def _check_preconditions(conds: Conditions, world: PassWorld, svc: LLMInferenceService) -> None:
    installed = frozenset(t for t in KNOWN_TYPES.values() if world.is_installed(t))
    missing = preconditions.missing_requirements(svc, installed)
    if missing:
        conds.mark_false(
            conditions.HTTPROUTES_READY, preconditions.REASON, preconditions.not_met_message(missing)
        )
        raise _PassEndedError(Outcome.PRECONDITION_NOT_MET)


#: KServe #6174: a LoRA strategy that cannot be applied is not a reconcile error that a retry could fix.
LORA_PRECONDITION_REASON = "RoutingPreconditionNotMet"


@dataclass(frozen=True)
class _Step:
    """How a failing step is reported: the condition it marks, its reason and message/error prefixes."""

    condition: str
    reason: str
    message_prefix: str
    error_prefix: str


_SCHEDULER_STEP = _Step(
    conditions.SCHEDULER_WORKLOAD_READY,
    "SchedulerReconcileError",
    "Failed to reconcile scheduler",
    "failed to reconcile scheduler",
)
_ROUTES_STEP = _Step(
    conditions.HTTPROUTES_READY,
    "HTTPRouteReconcileError",
    "Failed to reconcile HTTPRoute",
    "failed to reconcile HTTP routes",
)


def _step(conds: Conditions, step: _Step, run: Callable[[], T]) -> T:
    """Run a step; when it fails (:class:`~llmisvc_core.errors.StepFailedError`) mark its condition with
    KServe's reason and end the pass (X11, X12)."""
    try:
        return run()
    except StepFailedError as err:
        reason = (
            LORA_PRECONDITION_REASON
            if isinstance(err, lora_routing.LoRARoutingPreconditionError)
            else step.reason
        )
        conds.mark_false(step.condition, reason, f"{step.message_prefix}: {err}")
        raise _PassEndedError(Outcome.FAILED, f"{step.error_prefix}: {err}") from err


def _sort_key(key: ObjectKey) -> tuple[str, str, str]:
    return (key.type.kind, key.namespace, key.name)
