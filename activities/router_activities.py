"""The router's activities. Each reads or writes the cluster and asks the pure core what to do.

A pass runs as: ``check_preconditions`` (the service and API discovery), ``fetch_gateways`` (every object
the pass reads: Gateways, GatewayClasses, HTTPRoutes, InferencePools, Services, the scheduler Deployment,
the config), ``plan_pass`` (the core's decisions and the new status, no I/O), then the writes by phase
(``reconcile_scheduler``, ``reconcile_routes``, ``attempt_v1_migration``) and ``write_status``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities import errors, service_status
from activities.cluster_api import ApiError, ClusterApi
from activities.events import EventRecorder
from activities.models import (
    ApplyInput,
    ApplyResult,
    ClusterSnapshot,
    FetchInput,
    PlanInput,
    PlanResult,
    PreconditionReport,
    RejectedWrite,
    ServiceKey,
    StatusInput,
    StatusResult,
    StopInput,
)
from activities.recording_reader import RecordingReader
from router_core import passes, phases, preconditions
from router_core.config import Environment
from router_core.kube import BUILTIN_TYPES, KNOWN_TYPES, LLMISVC, TYPES_BY_NAME
from router_core.llmisvc import STOP_ANNOTATION, LLMInferenceService
from router_core.phases import WriteOp
from router_core.state import snapshot_of
from router_core.status_merge import merge_status

INVALID_OBJECT = "InvalidLLMInferenceService"
#: The kinds discovery is asked about: every custom kind the router may need.
DISCOVERED_TYPES = [t for t in KNOWN_TYPES.values() if t not in BUILTIN_TYPES]
#: A time for the planning dry-run that only learns which objects a pass reads.
_DRY_RUN_TIME = "1970-01-01T00:00:00Z"


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except ApiError as err:
        raise errors.as_activity_error(err) from err


def _service(
    raw: dict[str, object], key: ServiceKey, on_invalid: Callable[[str], object] | None = None
) -> LLMInferenceService:
    try:
        return LLMInferenceService.model_validate(raw)
    except ValidationError as err:
        problem = err.errors()[0]
        field = ".".join(str(p) for p in problem["loc"])
        if on_invalid is not None:  # tell Kubernetes too: status and an Event (activities.service_status)
            on_invalid(f"field {field}: {problem['msg']}")
        raise ApplicationError(
            f"LLMInferenceService {key}: field {field}: {problem['msg']}",
            type=INVALID_OBJECT,
            non_retryable=True,
            category=ApplicationErrorCategory.BENIGN,  # the user's to fix: no traceback in the worker's log
        ) from err


class RouterActivities:
    """Activities bound to one cluster connection and the process settings."""

    def __init__(self, api: ClusterApi, env: Environment) -> None:
        self.api = api
        self.env = env
        self.events = EventRecorder(api)

    @activity.defn(name="check_preconditions")
    def check_preconditions(self, key: ServiceKey) -> PreconditionReport:
        with _translated():
            raw = self.api.get(LLMISVC, key.namespace, key.name)
            if raw is None:
                return PreconditionReport(exists=False)
            svc = _service(
                raw, key, lambda msg: service_status.report_invalid_spec(self.api, self.events, raw, msg)
            )
            installed = self.api.served(DISCOVERED_TYPES)
        return PreconditionReport(
            exists=True,
            uid=svc.metadata.uid,
            generation=svc.metadata.generation,
            stopped=svc.is_stopped(),
            missing=preconditions.missing_for_stored(svc, frozenset(installed | BUILTIN_TYPES)),
            installed=sorted(str(t) for t in installed),
        )

    @activity.defn(name="fetch_gateways")
    def fetch_gateways(self, request: FetchInput) -> ClusterSnapshot:
        installed = {TYPES_BY_NAME[name] for name in request.installed}
        reader = RecordingReader(self.api, installed)
        with _translated():
            raw = self.api.get(LLMISVC, request.key.namespace, request.key.name)
            if raw is None:
                return ClusterSnapshot(service=None, installed=request.installed, reads=1)
            # A dry run of the pass over the live cluster learns exactly which objects it reads.
            passes.plan_pass(_service(raw, request.key), reader, self.env, _DRY_RUN_TIME)
        return ClusterSnapshot(
            service=raw,
            objects=list(reader.objects.values()),
            installed=request.installed,
            reads=reader.reads + 1,
        )

    @activity.defn(name="plan_pass")
    def plan_pass(self, request: PlanInput) -> PlanResult:
        snapshot = request.snapshot
        assert snapshot.service is not None, "plan_pass needs a snapshot with the service"
        reader = snapshot_of(
            [snapshot.service, *snapshot.objects], {TYPES_BY_NAME[name] for name in snapshot.installed}
        )
        rejected = {r.ref: r.error for r in request.rejected}
        service = LLMInferenceService.model_validate(snapshot.service)
        plan = passes.plan_pass(service, reader, self.env, request.now, rejected)
        split = phases.split_into_phases(plan, reader)
        return PlanResult(plan=plan, phases={phase.value: ops for phase, ops in split.items()})

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
        """Carry out writes in order; a refused write (4xx) stops the phase and is reported, not raised."""
        done = 0
        told = service_status.WriteEvents(self.api, self.events, request.key.namespace, request.key.name)
        for op in request.writes:
            try:
                self._write(op)
            except ApiError as err:
                if err.status == 409:
                    raise errors.stale_write(err) from err
                if err.is_transient:
                    raise errors.as_activity_error(err) from err
                told.refused(op, err.message)
                return ApplyResult(written=done, rejected=RejectedWrite(ref=op.ref(), error=err.message))
            told.wrote(op)
            done += 1
        return ApplyResult(written=done)

    def _write(self, op: WriteOp) -> None:
        key = op.key()
        if op.delete is not None:
            self.api.delete(key.type, key.namespace, key.name)
            return
        assert op.apply is not None
        if op.apply.get("metadata", {}).get("resourceVersion"):
            self.api.replace(key.type, op.apply)
        else:
            self.api.create(key.type, op.apply)

    @activity.defn(name="write_status")
    def write_status(self, request: StatusInput) -> StatusResult:
        """Write the router's part of the status if it changed; a conflict re-reads on the next attempt."""
        with _translated():
            raw = self.api.get(LLMISVC, request.key.namespace, request.key.name)
            if raw is None or (raw.get("metadata") or {}).get("uid") != request.uid:
                return StatusResult(written=False)  # gone or replaced: nothing of ours to write
            stored = raw.get("status") or {}
            merged = merge_status(stored, request.status)
            if merged == stored:
                return StatusResult(written=False)
            self.api.replace_status(LLMISVC, {**raw, "status": merged})
            service_status.record_status_change(self.events, raw, merged)
        return StatusResult(written=True)

    @activity.defn(name="set_stop_annotation")
    def set_stop_annotation(self, request: StopInput) -> bool:
        """Record a stop/resume on the object itself, so the decision lives in Kubernetes."""
        with _translated():
            raw = self.api.get(LLMISVC, request.key.namespace, request.key.name)
            if raw is None:
                return False
            if _service(raw, request.key).is_stopped() == request.stopped:
                return False
            value = "true" if request.stopped else None
            patch = {"metadata": {"annotations": {STOP_ANNOTATION: value}}}
            self.api.patch_merge(LLMISVC, request.key.namespace, request.key.name, patch)
        return True

    def all(self) -> list[Callable[..., Any]]:
        """Every activity, for worker registration."""
        return [
            self.check_preconditions,
            self.fetch_gateways,
            self.plan_pass,
            self.reconcile_scheduler,
            self.reconcile_routes,
            self.attempt_v1_migration,
            self.write_status,
            self.set_stop_annotation,
        ]
