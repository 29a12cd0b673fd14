"""The body of the write activities (``reconcile_scheduler``, ``reconcile_routes``,
``attempt_v1_migration``): one phase's writes, in order, each checked first (``activities.write_guard``).

The attempt heartbeats while it runs (``activities.heartbeats``) and starts no request it could not
finish before its timeout (``activities.attempts``). A write that loses a race (409) restarts the pass
after a short back-off; a write whose plan is stale (the service replaced, the target not the object
planned, a DELETE precondition refused) restarts it at once; a transient failure is retried by Temporal,
whose retry re-checks the targets against the API; a refused write (other 4xx) stops the phase and is
reported, not raised.
"""

from __future__ import annotations

import contextlib

from activities import attempts, errors, heartbeats, payload_guard, service_status, write_guard
from activities.cluster_view import ClusterView
from activities.events import EventRecorder
from activities.models import ApplyInput, ApplyResult, PlannedTarget, RejectedWrite
from llmisvc_core.models.kube import ResourceType
from llmisvc_core.planner.plan import WriteOp
from llmisvc_kube.api import REQUEST_BUDGET, ApiError, ClusterApi, Failure, Wire


def read_live(
    api: ClusterApi, view: ClusterView, type_: ResourceType, namespace: str, name: str
) -> Wire | None:
    """Read an object from the API and record the answer in the cache (found, or deleted)."""
    found = api.get(type_, namespace, name)
    if found is None:
        view.observe_deleted(type_, namespace, name)
    else:
        view.observe(type_, found)
    return found


class PhaseWriter:
    def __init__(self, api: ClusterApi, view: ClusterView, events: EventRecorder) -> None:
        self.api = api
        self.view = view
        self.events = events

    def apply(self, request: ApplyInput) -> ApplyResult:
        with heartbeats.heartbeating():
            attempt = attempts.Attempt(REQUEST_BUDGET)
            try:
                return self._apply_checked(request, attempt)
            except write_guard.StalePlanError as stale:
                raise errors.stale_plan(str(stale)) from stale

    def _apply_checked(self, request: ApplyInput, attempt: attempts.Attempt) -> ApplyResult:
        try:
            attempt.before_request()
            current = write_guard.check_owner(self.api, self.view, request.key, request.uid, attempt.is_retry)
        except ApiError as err:
            raise errors.as_activity_error(err) from err
        planned = {target.ref: target for target in request.targets}
        done = 0
        told = service_status.WriteEvents(
            self.api, self.events, request.key.namespace, request.key.name, current
        )
        for op in request.writes:
            attempt.before_request()
            try:
                wrote = self._write(op, planned.get(op.ref()), request.uid, attempt)
            except ApiError as err:
                if err.failure is Failure.CONFLICT:
                    self._refresh(op)
                    if op.delete is not None:  # a precondition failed: the object is not the one planned
                        raise write_guard.StalePlanError(f"{op.describe()}: {err.message}") from err
                    raise errors.stale_write(err) from err
                if err.failure is Failure.TRANSIENT:
                    raise errors.as_activity_error(err) from err
                told.refused(op, err.message)
                return ApplyResult(
                    written=done, rejected=RejectedWrite(ref=op.ref(), error=payload_guard.clip(err.message))
                )
            if wrote:
                told.wrote(op)
            done += 1
        return ApplyResult(written=done)

    def _write(
        self, op: WriteOp, planned: PlannedTarget | None, owner_uid: str | None, attempt: attempts.Attempt
    ) -> bool:
        """One write, after checking its target; False when a delete found the object gone already."""
        write_guard.check_manifest_owner(op, owner_uid)
        key = op.key()
        live: Wire | None = None
        if attempt.is_retry or (op.delete is not None and planned is None):
            # A retry replays an old intent: compare it with the object as it is now, not as planned.
            found = read_live(self.api, self.view, key.type, key.namespace, key.name)
            live = write_guard.check_target(op, planned, found, owner_uid)
            if op.delete is not None and live is None:
                return False
            attempt.before_request()
        if op.delete is not None:
            uid, version = write_guard.delete_preconditions(planned, live)
            self.api.delete(key.type, key.namespace, key.name, uid=uid, resource_version=version)
            self.view.observe_deleted(key.type, key.namespace, key.name)
            return True
        assert op.apply is not None
        if op.apply.get("metadata", {}).get("resourceVersion"):
            written = self.api.replace(key.type, op.apply)
        else:
            written = self.api.create(key.type, op.apply)
        self.view.observe(key.type, written)
        return True

    def _refresh(self, op: WriteOp) -> None:
        """After a lost race, put the live object in the cache so the re-plan starts from it."""
        key = op.key()
        with contextlib.suppress(ApiError):  # unanswered: the re-plan waits for the watch instead
            read_live(self.api, self.view, key.type, key.namespace, key.name)
