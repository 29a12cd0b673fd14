"""The router's activities. Each reads the process's cluster cache or writes the API, and asks the pure
core what to do.

A pass runs as: ``fetch_gateways`` (wait until the cache has caught up with what the triggers saw, read
the service, its gateways, routes, pools, Services, the scheduler Deployment and the config from the
cache, and plan: the writes by phase and the status), then, only when there is something to do, the
writes by phase (``reconcile_scheduler``, ``reconcile_routes``, ``attempt_v1_migration``) and
``evaluate_conditions`` (the status after the writes). A pass with nothing to write and an unchanged
status is that one activity, and reads nothing from the API. The reads never write: every status write
and the Events of a changed status go through ``evaluate_conditions``, stamped with the workflow's time
(a spec the router cannot read too: ``fetch_gateways`` hands over the status that says so).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from temporalio import activity

from activities import (
    errors,
    heartbeats,
    invalid_spec,
    payload_guard,
    phase_writes,
    service_status,
    shadow,
    write_guard,
)
from activities.cached_reader import CachedReader
from activities.cluster_view import ClusterView
from activities.errors import ErrorType
from activities.events import EventRecorder, EventSpec
from activities.management import Management
from activities.models import (
    DIGEST_LIMIT,
    ApplyInput,
    ApplyResult,
    ConditionState,
    EvaluateInput,
    EvaluateResult,
    FetchInput,
    Gone,
    HandedOff,
    InvalidSpec,
    PassReport,
    PassResult,
    PhaseWrites,
    Planned,
    ServiceKey,
    StopInput,
)
from activities.rendered_check import plan_checked
from llmisvc_cache.model import SeenVersion
from llmisvc_core import limits
from llmisvc_core.models.kube import LLMISVC, ResourceType
from llmisvc_core.models.llmisvc import STOP_ANNOTATION, LLMInferenceService
from llmisvc_core.planner import passes, phases
from llmisvc_core.planner.plan import PassPlan
from llmisvc_core.world.config import Environment
from llmisvc_core.world.status_merge import merge_status, router_basis
from llmisvc_kube.api import ApiError, ClusterApi, Failure, Wire

log = logging.getLogger(__name__)

#: How long a pass waits for the cache's first lists, and for it to catch up with a trigger's versions
#: (then it reads those objects from the API instead).
SYNC_TIMEOUT = 20.0
FRESHNESS_TIMEOUT = 5.0
STATUS_CONFLICT_RETRIES = 3


def _parsed(raw: dict[str, object]) -> LLMInferenceService | str:
    """The service read from ``raw``, or why it cannot be read."""
    # Nested past the bound, the recursive readers (validation, serialization, the merge) would fail on it.
    message = limits.depth_problem(raw)
    if message is not None:
        return message
    try:
        return LLMInferenceService.model_validate(raw)
    except ValidationError as err:
        problem = err.errors()[0]
        return f"field {'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}"


def _service(raw: dict[str, object], key: ServiceKey) -> LLMInferenceService:
    svc = _parsed(raw)
    if isinstance(svc, LLMInferenceService):
        return svc
    # The user's to fix: benign, no traceback in the worker's log.
    raise errors.permanent(ErrorType.INVALID_OBJECT, f"LLMInferenceService {key}: {svc}", benign=True)


def _status_body(raw: Wire, status: dict[str, Any]) -> Wire:
    """A status update of ``raw``: its kind, identity and resourceVersion, and ``status``."""
    meta = raw.get("metadata") or {}
    identity = {k: meta[k] for k in ("namespace", "name", "uid", "resourceVersion") if k in meta}
    return {
        "apiVersion": raw.get("apiVersion"),
        "kind": raw.get("kind"),
        "metadata": identity,
        "status": status,
    }


def _spec_changed(raw: Wire, request: EvaluateInput) -> bool:
    """A planned status whose spec has changed since: an attempt retried after a workflow task timeout
    runs with the input of the pass that planned it, possibly after a rename landed, and would write
    the old name's status over the new one's."""
    if request.status is None or request.generation is None:
        return False
    return (raw.get("metadata") or {}).get("generation") != request.generation


def _conditions(status: dict[str, Any]) -> dict[str, ConditionState]:
    return {
        str(c.get("type", "")): ConditionState(
            status=str(c.get("status", "")), reason=c.get("reason") or None
        )
        for c in status.get("conditions") or []
    }


class RouterActivities:
    """Activities bound to one cluster connection, the process's cache and the process settings."""

    def __init__(
        self, api: ClusterApi, view: ClusterView, env: Environment, management: Management | None = None
    ) -> None:
        self.api = api
        self.view = view
        self.env = env
        self.events = EventRecorder(api)
        self.management = management or Management()

    # --- reading and planning ------------------------------------------------------------------------

    @activity.defn(name="fetch_gateways")
    def fetch_gateways(self, request: FetchInput) -> PassResult:
        """Read the world from the cache and plan the pass. It writes nothing (a spec it cannot read is
        answered by the status it hands to the status writer)."""
        self._wait_fresh(request.wait_for)
        reader = CachedReader(self.view, self.api)
        with errors.translated():
            raw = self._read_service(reader, request.key)
            if raw is None:
                return PassResult(Gone(live_reads=reader.live_reads))
            handoff = self.management.handoff_reason(raw)
            if handoff is not None:
                return PassResult(HandedOff(reason=handoff, live_reads=reader.live_reads))
            svc = _parsed(raw)
            if not isinstance(svc, LLMInferenceService):
                return PassResult(self._invalid(raw, request, svc, reader.live_reads))
            plan, verdict = plan_checked(
                self.api,
                lambda verdicts: passes.plan_pass(svc, reader, self.env, request.now, verdicts=verdicts),
                request.verdict,
                checked=not self.management.shadow,
            )
            split = phases.split_into_phases(plan, reader)
        stored = raw.get("status") or {}
        report = self._report(svc, plan, reader)
        if self.management.shadow:
            return PassResult(shadow.shadowed(report, split, reader, stored, plan.status))
        planned = Planned(
            **dict(report),
            phases=[
                PhaseWrites(
                    phase=phase,
                    writes=ops,
                    targets=write_guard.planned_targets(ops, self.view, reader.versions),
                )
                for phase, ops in split.items()
            ],
            status=plan.status if merge_status(stored, plan.status) != stored else None,
            status_basis=router_basis(stored),
            verdict=verdict,
            events=plan.events,
        )
        return PassResult(payload_guard.fit_plan(planned, raw, request.now))  # bounded, whatever the spec

    def _invalid(self, raw: Wire, request: FetchInput, problem: str, live_reads: int) -> InvalidSpec:
        """A spec the router cannot read: the status that says so (none in shadow mode, which tells
        nobody), stamped with the workflow's time."""
        stored, meta = raw.get("status") or {}, raw.get("metadata") or {}
        merged = invalid_spec.invalid_spec_status(
            stored, problem, invalid_spec.parse_time(request.now), generation=meta.get("generation")
        )
        status = invalid_spec.router_part(stored, merged)
        return InvalidSpec(
            uid=meta.get("uid"),
            message=payload_guard.clip(
                f"{ErrorType.INVALID_OBJECT}: LLMInferenceService {request.key}: {problem}"
            ),
            status=None if self.management.shadow or merge_status(stored, status) == stored else status,
            live_reads=live_reads,
        )

    def _report(self, svc: LLMInferenceService, plan: PassPlan, reader: CachedReader) -> PassReport:
        digest = reader.digest()
        return PassReport(
            uid=svc.metadata.uid,
            generation=svc.metadata.generation,
            outcome=plan.outcome,
            message=plan.message,
            conditions=_conditions(plan.status),
            url=plan.status.get("url"),
            reads=list(digest[:DIGEST_LIMIT]),
            reads_left_out=max(0, len(digest) - DIGEST_LIMIT),
            live_reads=reader.live_reads,
        )

    def _wait_fresh(self, seen: list[SeenVersion]) -> None:
        """A cold cache never plans: wait for its first lists, then for the versions the triggers saw."""
        if not self.view.wait_synced(SYNC_TIMEOUT):
            raise errors.transient(
                ErrorType.CACHE_NOT_SYNCED,
                f"the cluster cache has not listed {', '.join(self.view.unsynced())} yet",
            )
        with errors.translated():
            behind = self.view.wait_for(seen, FRESHNESS_TIMEOUT)
            if behind:
                log.warning(
                    "the cache is %.0fs behind on %s: reading them from the API",
                    FRESHNESS_TIMEOUT,
                    ", ".join(f"{s.type.kind} {s.namespace}/{s.name}@{s.resource_version}" for s in behind),
                )
            for late in behind:
                # The watch is slow: read what the trigger saw from the API instead of planning on less.
                self._read_live(late.type, late.namespace, late.name)

    def _read_service(self, reader: CachedReader, key: ServiceKey) -> Wire | None:
        raw = reader.get(LLMISVC, key.namespace, key.name)
        if raw is None:
            # Absent from the cache: make sure from the API before the workflow ends for good.
            reader.live_reads += 1
            raw = self._read_live(LLMISVC, key.namespace, key.name)
        return raw

    def _read_live(self, type_: ResourceType, namespace: str, name: str) -> Wire | None:
        return phase_writes.read_live(self.api, self.view, type_, namespace, name)

    # --- writes --------------------------------------------------------------------------------------

    @activity.defn(name="reconcile_scheduler")
    def reconcile_scheduler(self, request: ApplyInput) -> ApplyResult:
        return self._apply(request)

    @activity.defn(name="reconcile_routes")
    def reconcile_routes(self, request: ApplyInput) -> ApplyResult:
        return self._apply(request)

    @activity.defn(name="attempt_v1_migration")
    def attempt_v1_migration(self, request: ApplyInput) -> ApplyResult:
        return self._apply(request)

    def _apply(self, request: ApplyInput) -> ApplyResult:
        return phase_writes.PhaseWriter(self.api, self.view, self.events).apply(request)

    # --- status --------------------------------------------------------------------------------------

    @activity.defn(name="evaluate_conditions")
    def evaluate_conditions(self, request: EvaluateInput) -> EvaluateResult:
        """Write the router's part of the status if it changed, then record the plan's Events on the
        service. The status is planned again first after a refused write, when the spec changed since it
        was planned, or when the router's part of the stored status is no longer the one it was planned
        from (a newer pass wrote it while this attempt, retried after a workflow task timeout, waited)."""
        reader = CachedReader(self.view, self.api)
        replanned: list[PassPlan] = []

        def replan(raw: Wire) -> dict[str, Any] | None:
            rejected = {request.rejected.ref: request.rejected.error} if request.rejected else {}
            svc = _service(raw, request.key)
            plan, _ = plan_checked(
                self.api,
                lambda verdicts: passes.plan_pass(svc, reader, self.env, request.now, rejected, verdicts),
                request.verdict,
                checked=not self.management.shadow,
            )
            replanned.append(plan)
            return plan.status

        with errors.translated():
            raw = self._read_service(reader, request.key)
            if raw is None or (raw.get("metadata") or {}).get("uid") != request.uid:
                return EvaluateResult(written=False)  # gone or replaced: nothing of ours to write
            status = request.status
            basis = request.status_basis
            if request.rejected is not None or _spec_changed(raw, request):
                status, basis = replan(raw), None
            written, status = self._write_status(raw, status, basis, replan)
            # A newer pass moved the status and recorded its own Events: this attempt's are an older word.
            overtaken = basis is not None and len(replanned) > 0
            for event in [] if overtaken else request.events:
                self.events.record(raw, EventSpec(event.type, event.reason, event.note))
        plan = replanned[-1] if replanned else None
        return EvaluateResult(
            written=written,
            outcome=plan.outcome if plan is not None else None,
            message=payload_guard.clip(plan.message) if plan is not None and plan.message else None,
            conditions=_conditions(status or {}),
            url=(status or {}).get("url"),
        )

    def _write_status(
        self,
        raw: Wire,
        planned: dict[str, Any] | None,
        basis: str | None,
        replan: Callable[[Wire], dict[str, Any] | None],
    ) -> tuple[bool, dict[str, Any] | None]:
        """Merge the router's part into the stored status and write it if it changed; with the status
        written (or planned again). A conflict (someone wrote the service since it was read) is answered
        as client-go's RetryOnConflict does: read the latest object, merge again, write again; only a
        conflict that keeps coming is left to Temporal. Before each merge, a stored router's part other
        than ``basis`` (what the status was planned from) is planned again from ``replan``, once.

        The body is the status and the object's identity, guarded by its uid and resourceVersion, never the
        spec: the API server keeps everything but the status of a status update, and a spec the router
        cannot read may be nested too deep to serialize."""
        for attempt in range(STATUS_CONFLICT_RETRIES + 1):
            stored = raw.get("status") or {}
            if basis is not None and router_basis(stored) != basis:
                planned, basis = replan(raw), None
            if planned is None:
                return False, planned
            merged = merge_status(stored, planned)
            if merged == stored:
                return False, planned
            try:
                written = self.api.replace_status(LLMISVC, _status_body(raw, merged))
            except ApiError as err:
                meta = raw.get("metadata") or {}
                if err.failure is not Failure.CONFLICT or attempt == STATUS_CONFLICT_RETRIES:
                    raise
                latest = self._read_live(LLMISVC, meta.get("namespace") or "", meta.get("name") or "")
                if latest is None or (latest.get("metadata") or {}).get("uid") != meta.get("uid"):
                    return False, planned  # gone or replaced meanwhile: nothing of ours to write
                raw = latest
                continue
            self.view.observe(LLMISVC, written)
            service_status.record_status_change(self.events, raw, merged)
            return True, planned
        return False, planned

    # --- stop and resume -----------------------------------------------------------------------------

    @activity.defn(name="set_stop_annotation")
    def set_stop_annotation(self, request: StopInput) -> bool:
        """Record a stop/resume on the object itself, so the decision lives in Kubernetes."""
        if self.management.shadow:
            log.warning("shadow mode: %s of %s not written", STOP_ANNOTATION, request.key)
            return False
        with heartbeats.heartbeating(), errors.translated():
            raw = self.api.get(LLMISVC, request.key.namespace, request.key.name)
            if raw is None:
                return False
            if _service(raw, request.key).is_stopped() == request.stopped:
                return False
            value = "true" if request.stopped else None
            patch = {"metadata": {"annotations": {STOP_ANNOTATION: value}}}
            patched = self.api.patch_merge(LLMISVC, request.key.namespace, request.key.name, patch)
            self.view.observe(LLMISVC, patched)
        return True

    def all(self) -> list[Callable[..., Any]]:
        """Every activity, for worker registration."""
        return [
            self.fetch_gateways,
            self.reconcile_scheduler,
            self.reconcile_routes,
            self.attempt_v1_migration,
            self.evaluate_conditions,
            self.set_stop_annotation,
        ]
