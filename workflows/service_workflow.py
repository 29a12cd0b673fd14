"""``LLMInferenceServiceWorkflow``: one long-running workflow per LLMInferenceService.

It waits for a trigger (a ``reconcile`` signal from the watcher, a stop/resume, an update) or the resync
timer, runs one pass made of activities, and repeats. Triggers that arrive during a pass are coalesced
into the next one. A pass that ends without reconciling (a missing CRD, invalid references, an API that
refuses a write) is not retried in a loop: its status is written and the next pass waits for a trigger
or a capped backoff re-check. The workflow ends when the object is gone. Under Worker Versioning each
run is pinned to its build and moves to the new current version by continuing-as-new
(``workflows.versioning``).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from activities import errors
from activities.errors import ErrorType
from activities.models import (
    FetchInput,
    Gone,
    HandedOff,
    InvalidSpec,
    PassReport,
    Planned,
    ServiceKey,
    Shadowed,
    StopInput,
)
from llmisvc_cache.model import SeenVersion
from llmisvc_core.planner.plan import Outcome
from workflows import (
    activity_options,
    descriptions,
    drift_report,
    handler_payloads,
    pass_log,
    pass_telemetry,
    pass_writes,
    search_attributes,
    summaries,
    versioning,
)
from workflows.activity_options import ACTIVITY_RETRY, FETCH_GATEWAYS
from workflows.drift_report import DriftReport
from workflows.models import (
    MAX_SEEN,
    WORKFLOW_NAME,
    PassSummary,
    ReconcileSignal,
    ServiceWorkflowInput,
    ServiceWorkflowResult,
    WorkflowState,
)

RECHECK_FIRST = timedelta(seconds=10)
RECHECK_CAP = timedelta(minutes=5)
MAX_RESTARTS = 6  # a pass whose writes keep losing races is re-planned this often, then re-checked later


@workflow.defn(name=WORKFLOW_NAME)
class LLMInferenceServiceWorkflow:
    @workflow.init
    def __init__(self, request: ServiceWorkflowInput) -> None:
        self._request = request
        self._key = ServiceKey(namespace=request.namespace, name=request.name)
        self._state = request.state or WorkflowState(pending_reasons=["started"])
        # Only one pass at a time: the main loop and the reconcile_now update both run passes.
        self._lock = asyncio.Lock()
        self._telemetry = pass_telemetry.PassTelemetry(self._key)

    @workflow.run
    async def run(self, request: ServiceWorkflowInput) -> ServiceWorkflowResult:
        while not self._state.ended:
            await self._wait_for_trigger()
            if versioning.target_changed() and not self._state.ended:  # the pending pass runs there
                await versioning.continue_on_target(request.model_copy(update={"state": self._state}))
            if not self._state.ended:  # a pass of the reconcile_now update may have found it gone
                await self._reconcile()
            if workflow.info().is_continue_as_new_suggested() and not self._state.ended:
                # Let signal and update handlers finish so nothing they started is lost.
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(request.model_copy(update={"state": self._state}))
        await workflow.wait_condition(workflow.all_handlers_finished)
        reason = self._state.handed_off or "the LLMInferenceService is gone"
        return ServiceWorkflowResult(passes=self._state.pass_count, reason=reason)

    # Every handler takes ``*extra`` and reads its payload loosely (``workflows.handler_payloads``): no
    # payload, however wrong, may fail a workflow task.
    @workflow.signal(description=descriptions.RECONCILE)
    def reconcile(self, signal: object = None, *extra: object) -> None:
        try:
            self._note_trigger(handler_payloads.reconcile_signal("reconcile", signal, extra))
        except handler_payloads.BadPayloadError as err:
            workflow.logger.warning("%s: dropped a reconcile signal: %s", self._key, err)

    @workflow.signal(description=descriptions.STOP)
    def stop(self, *extra: object) -> None:
        self._warn_ignored("stop", extra)
        self._state.desired_stop = True
        self._state.add_reason("stop requested")
        self._telemetry.note_trigger()

    @workflow.signal(description=descriptions.RESUME)
    def resume(self, *extra: object) -> None:
        self._warn_ignored("resume", extra)
        self._state.desired_stop = False
        self._state.add_reason("resume requested")
        self._telemetry.note_trigger()

    @workflow.query(description=descriptions.STATE)
    def state(self, *extra: object) -> WorkflowState:
        return self._state

    @workflow.query(description=descriptions.DRIFT)
    def drift(self, *extra: object) -> DriftReport:
        return self._state.drift or drift_report.no_report(self._key)

    @descriptions.update(descriptions.RECONCILE_NOW)
    async def reconcile_now(self, signal: object = None, *extra: object) -> PassSummary:
        # The validator accepted this payload, so it reads the same way here (validators do not run on
        # replay, which only replays accepted updates).
        self._note_trigger(handler_payloads.reconcile_signal("reconcile_now", signal, extra))
        return await self._reconcile()

    def _warn_ignored(self, handler: str, extra: tuple[object, ...]) -> None:
        if handler_payloads.ignored(extra):
            workflow.logger.warning("%s: %s takes no argument; ignored the one sent", self._key, handler)

    def _note_trigger(self, signal: ReconcileSignal) -> None:
        self._state.add_reason(signal.reason)
        if signal.seen:
            newest = {(s.resource, s.namespace, s.name): s for s in [*self._state.pending_seen, *signal.seen]}
            self._state.pending_seen = list(newest.values())[-MAX_SEEN:]
        self._telemetry.note_trigger()

    @reconcile_now.validator
    def _validate_reconcile_now(self, signal: object = None, *extra: object) -> None:
        handler_payloads.reconcile_signal("reconcile_now", signal, extra)  # BadPayloadError rejects it
        if self._state.ended:
            raise ValueError(
                f"LLMInferenceService {self._key} is gone; nothing to reconcile"
                if self._state.gone
                else f"{self._state.handed_off}: handed off; nothing to reconcile"
            )

    async def _wait_for_trigger(self) -> None:
        try:
            timeout = self._next_check()
            await workflow.wait_condition(
                lambda: bool(self._state.pending_reasons) or self._state.ended or versioning.target_changed(),
                timeout=timeout,
                timeout_summary=descriptions.wait_summary(timeout, self._state.recheck_attempt),
            )
        except TimeoutError:
            self._state.add_reason("resync" if self._state.recheck_attempt == 0 else "re-check")

    def _next_check(self) -> timedelta:
        """The resync period after a reconciled pass; a capped, growing backoff after one that was not."""
        resync = timedelta(seconds=self._request.resync_seconds)
        if self._state.recheck_attempt == 0:
            return resync
        backoff = RECHECK_FIRST * (1 << min(self._state.recheck_attempt - 1, 16))
        return min(backoff, RECHECK_CAP, resync)

    async def _reconcile(self) -> PassSummary:
        async with self._lock:
            reasons = self._state.take_reasons()
            seen, self._state.pending_seen = self._state.pending_seen, []
            before, started = self._state.last, workflow.now()
            with self._telemetry.observe(reasons) as observed:
                try:
                    summary = await self._run_pass(reasons, seen)
                except (ActivityError, ApplicationError) as err:
                    # An ApplicationError here is the pass giving up on conflicting writes: like a failed
                    # activity it ends this pass and is re-checked later, instead of failing the workflow.
                    summary = summaries.failed_pass(err, workflow.now())
                except workflow.NondeterminismError:
                    raise  # a changed workflow: the task must fail until the code that wrote it is back
                except Exception as err:
                    # A fault of this code, not of the cluster: failing the workflow task would retry it
                    # for ever with nothing answering. End the pass instead, marked LlmisvcPassFailing,
                    # re-checked with the capped backoff like any pass that could not complete.
                    workflow.logger.exception("%s: the pass failed inside the workflow", self._key)
                    summary = summaries.internal_error(err, workflow.now())
                self._state.last_error = summary.message if summary.outcome is Outcome.ERROR else None
                observed.finished(summary)
                # In the pass's span, so that its lines carry the pass's trace id (llmisvc_runtime.logs).
                pass_log.log_pass(self._key, reasons, before, summary, workflow.now() - started)
            summary.build_id = versioning.build_id()
            self._state.pass_count += 1
            self._state.last = summary
            self._state.recheck_attempt = 0 if summary.outcome.settled else self._state.recheck_attempt + 1
            workflow.set_current_details(summaries.details_markdown(self._key, self._state))
            search_attributes.publish(self._request, self._state, summary)
            return summary

    async def _run_pass(self, reasons: list[str], seen: list[SeenVersion]) -> PassSummary:
        if self._state.desired_stop is not None:
            stopped = self._state.desired_stop
            await activity_options.SET_STOP_ANNOTATION(
                StopInput(key=self._key, stopped=stopped),
                f"{'set' if stopped else 'remove'} serving.kserve.io/stop on {self._key}",
            )
            self._state.desired_stop = None
        for attempt in range(MAX_RESTARTS + 1):
            try:
                return await self._pass(seen)
            except pass_writes.PassRestartError as restart:
                seen = []  # the restart reads what the lost race left behind, already in the cache
                if restart.at_once:
                    continue
                delay = min(timedelta(seconds=2**attempt), ACTIVITY_RETRY.maximum_interval or RECHECK_CAP)
                await workflow.sleep(delay, summary=descriptions.restart_summary(delay))
        raise errors.transient(
            ErrorType.KEPT_CONFLICTING, f"the writes of {self._key} kept conflicting with other writers"
        )

    async def _pass(self, seen: list[SeenVersion]) -> PassSummary:
        """``fetch_gateways``; then what its result asks for: the writes and the status, only if any."""
        now = workflow.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        result = await FETCH_GATEWAYS(
            FetchInput(key=self._key, now=now, wait_for=seen, verdict=self._state.rendered),
            f"read and plan the pass of {self._key}",
        )
        match result.root:
            case Gone() | HandedOff() as ended:
                return self._end(ended)
            case InvalidSpec() as invalid:
                return await pass_writes.report_invalid(self._key, invalid, now)
            case Shadowed() as shadowed:  # nothing is written: the drift is the result
                self._note_service(shadowed)
                self._state.drift = drift_report.shadow_pass(self._key, shadowed.drift, workflow.now())
                summary = summaries.pass_summary(shadowed, 0, False, workflow.now())
                return summary.model_copy(update={"drift": self._state.drift.drift})
            case Planned() as planned:
                self._note_service(planned)
                return await pass_writes.apply(self._key, self._state, planned, now)

    def _end(self, ended: Gone | HandedOff) -> PassSummary:
        """The service is gone, or left this deployment's selection (a hand-off: nothing is changed)."""
        if self._state.drift is not None:
            drift_report.record_gauge(self._key, 0)
        if isinstance(ended, HandedOff):
            self._state.handed_off = ended.reason
            return PassSummary(outcome=Outcome.HANDED_OFF, message=ended.reason, finished_at=workflow.now())
        self._state.gone = True
        return PassSummary(outcome=Outcome.GONE, finished_at=workflow.now())

    def _note_service(self, report: PassReport) -> None:
        pass_telemetry.note_generation(report.generation)
        if self._state.uid is not None and report.uid != self._state.uid:
            workflow.logger.info("%s was deleted and created again (uid %s)", self._key, report.uid)
        self._state.uid = report.uid
