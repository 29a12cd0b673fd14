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
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeUpdate
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.types import MethodSyncSingleParam

from activities import errors
from activities.errors import ErrorType
from activities.models import (
    ApplyInput,
    ApplyResult,
    EvaluateInput,
    EvaluateResult,
    FetchInput,
    PassDecision,
    PassOutcome,
    RejectedWrite,
    ServiceKey,
    StopInput,
)
from activities.router_activities import RouterActivities
from llmisvc_cache.model import SeenVersion
from llmisvc_core.planner.plan import Phase
from workflows import (
    descriptions,
    drift_report,
    handler_payloads,
    pass_log,
    pass_telemetry,
    search_attributes,
    summaries,
    versioning,
)
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

#: A transient API failure (a 500, a cut connection) is retried after 0.2 s, doubling: one injected
#: fault then costs a fifth of a second, not a second (the chaos suite's api_faults_10 measured 1.6-2.9x
#: the fault-free time at 1 s). controller-runtime's own requeue after an error starts at 5 ms.
ACTIVITY_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=60),
    non_retryable_error_types=errors.NON_RETRYABLE,
)
#: Retries of one activity stop after this long; the pass then ends with an error and is re-checked.
ACTIVITY_DEADLINE = timedelta(minutes=5)
# The timeout chain (docs/operations.md, *Timeouts*; pinned by tests/workflows/test_timeouts.py): one
# API request <= llmisvc_kube.api.REQUEST_BUDGET (17 s) < one attempt (30 s); a regular activity
# heartbeats every second (activities.heartbeats), so a lost worker is noticed after HEARTBEAT_TIMEOUT.
ATTEMPT_TIMEOUT = timedelta(seconds=30)
HEARTBEAT_TIMEOUT = timedelta(seconds=5)
#: Local activities cannot heartbeat (a lost worker shows as a workflow task timeout instead), so their
#: retries are kept short: after this long the pass ends with an error and is re-checked.
LOCAL_DEADLINE = timedelta(seconds=60)
RECHECK_FIRST = timedelta(seconds=10)
RECHECK_CAP = timedelta(minutes=5)
MAX_RESTARTS = 6  # a pass whose writes keep losing races is re-planned this often, then re-checked later
PHASE_ACTIVITIES = (
    (Phase.SCHEDULER, RouterActivities.reconcile_scheduler),
    (Phase.ROUTES, RouterActivities.reconcile_routes),
    (Phase.MIGRATION, RouterActivities.attempt_v1_migration),
)


ArgT = TypeVar("ArgT")
ResultT = TypeVar("ResultT")
#: The options of every activity: retried with backoff, each attempt bounded, the whole bounded too.
ACTIVITY_OPTIONS = workflow.ActivityConfig(
    start_to_close_timeout=ATTEMPT_TIMEOUT,
    schedule_to_close_timeout=ACTIVITY_DEADLINE,
    heartbeat_timeout=HEARTBEAT_TIMEOUT,
    retry_policy=ACTIVITY_RETRY,
)
#: ``fetch_gateways`` and ``evaluate_conditions`` read the worker's own cache, so they run as local
#: activities, inside the workflow task: a pass with nothing to do is one workflow task and one marker
#: event, and asks neither the Temporal server to dispatch an activity nor the API server for anything.
#: Retries short enough stay in the worker; longer back-offs become timers (the same retry policy).
LOCAL_OPTIONS = workflow.LocalActivityConfig(
    start_to_close_timeout=ATTEMPT_TIMEOUT,
    schedule_to_close_timeout=LOCAL_DEADLINE,
    retry_policy=ACTIVITY_RETRY,
    local_retry_threshold=timedelta(seconds=10),
)


class _PassRestartError(Exception):
    """A write lost a race with another writer, or found its plan stale: read the world again and plan
    anew (``at_once``: a stale plan needs no back-off, nobody is racing it)."""

    def __init__(self, at_once: bool = False) -> None:
        super().__init__()
        self.at_once = at_once


@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
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
                    self._state.last_error = None
                except (ActivityError, ApplicationError) as err:
                    # An ApplicationError here is the pass giving up on conflicting writes: like a failed
                    # activity it ends this pass and is re-checked later, instead of failing the workflow.
                    summary = summaries.failed_pass(err, workflow.now())
                    self._state.last_error = summary.message
                except workflow.NondeterminismError:
                    raise  # a changed workflow: the task must fail until the code that wrote it is back
                except Exception as err:
                    # A fault of this code, not of the cluster: failing the workflow task would retry it
                    # for ever with nothing answering. End the pass instead, marked LlmisvcPassFailing,
                    # re-checked with the capped backoff like any pass that could not complete.
                    workflow.logger.exception("%s: the pass failed inside the workflow", self._key)
                    summary = summaries.internal_error(err, workflow.now())
                    self._state.last_error = summary.message
                observed.finished(summary)
                # In the pass's span, so that its lines carry the pass's trace id (llmisvc_runtime.logs).
                pass_log.log_pass(self._key, reasons, before, summary, workflow.now() - started)
            summary.build_id = versioning.build_id()
            self._state.pass_count += 1
            self._state.last = summary
            self._state.recheck_attempt = 0 if summary.outcome.settled else self._state.recheck_attempt + 1
            workflow.set_current_details(summaries.details_markdown(self._key, self._state))
            self._publish_search_attributes(summary)
            return summary

    def _publish_search_attributes(self, summary: PassSummary) -> None:
        """Let the Temporal UI filter services by namespace, name, readiness, outcome and drift."""
        if not self._request.search_attributes:
            return
        values = {
            search_attributes.NAMESPACE: self._key.namespace,
            search_attributes.NAME: self._key.name,
            search_attributes.ROUTER_READY: summary.router_ready,
            search_attributes.OUTCOME: summary.outcome.value,
        }
        current = workflow.info().typed_search_attributes
        changed: list[SearchAttributeUpdate[Any]] = [
            key.value_set(value) for key, value in values.items() if current.get(key) != value
        ]
        drift = self._state.drift
        if (
            self._request.drift_attribute
            and drift is not None
            and current.get(search_attributes.DRIFT) != drift.drift
        ):
            # Only once shadow mode ran, so the histories of write-only workflows replay unchanged.
            changed.append(search_attributes.DRIFT.value_set(drift.drift))
        failing = summary.outcome == PassOutcome.ERROR
        was_failing = current.get(search_attributes.PASS_FAILING)
        if self._request.drift_attribute and (failing or was_failing) and was_failing != failing:
            # Set once a pass failed, so the histories of passes that never failed replay unchanged.
            changed.append(search_attributes.PASS_FAILING.value_set(failing))
        if changed:  # an unchanged value would only add an event to the history
            workflow.upsert_search_attributes(changed)

    async def _run_pass(self, reasons: list[str], seen: list[SeenVersion]) -> PassSummary:
        if self._state.desired_stop is not None:
            stopped = self._state.desired_stop
            await self._activity(
                RouterActivities.set_stop_annotation,
                StopInput(key=self._key, stopped=stopped),
                f"{'set' if stopped else 'remove'} serving.kserve.io/stop on {self._key}",
            )
            self._state.desired_stop = None
        for attempt in range(MAX_RESTARTS + 1):
            try:
                return await self._plan_and_apply(seen)
            except _PassRestartError as restart:
                seen = []  # the restart reads what the lost race left behind, already in the cache
                if restart.at_once:
                    continue
                delay = min(timedelta(seconds=2**attempt), ACTIVITY_RETRY.maximum_interval or RECHECK_CAP)
                await workflow.sleep(delay, summary=descriptions.restart_summary(delay))
        raise errors.transient(
            ErrorType.KEPT_CONFLICTING, f"the writes of {self._key} kept conflicting with other writers"
        )

    async def _plan_and_apply(self, seen: list[SeenVersion]) -> PassSummary:
        """``fetch_gateways``; then, only if there is something to do, the writes and the status."""
        now = workflow.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        decision = await self._local_activity(
            RouterActivities.fetch_gateways,
            FetchInput(key=self._key, now=now, wait_for=seen, verdict=self._state.rendered),
            f"read and plan the pass of {self._key}",
        )
        if decision.verdict is not None and decision.verdict.final:  # KServe #5918: asked once per spec
            self._state.rendered = decision.verdict
        if decision.gone or decision.handoff is not None:
            return self._end(decision)
        self._note_service(decision)
        if decision.shadow and decision.drift is not None:  # nothing is written: the drift is the result
            self._state.drift = drift_report.shadow_pass(self._key, decision.drift, workflow.now())
            summary = summaries.pass_summary(decision, 0, False, workflow.now())
            return summary.model_copy(update={"drift": self._state.drift.drift})
        if self._state.drift is not None and self._state.drift.mode == "shadow":
            self._state.drift = drift_report.write_pass(self._key, workflow.now())
        written, rejected = await self._write_phases(decision)
        # The plan's Events that the pass before did not plan: an unchanged warning is told once.
        events = [e for e in decision.events if e not in self._state.announced]
        if rejected is None and decision.status is None and not events:
            self._state.announced = decision.events
            return summaries.pass_summary(decision, written, False, workflow.now())
        evaluated: EvaluateResult = await self._local_activity(
            RouterActivities.evaluate_conditions,
            EvaluateInput(
                key=self._key,
                uid=decision.uid,
                now=now,
                status=decision.status if rejected is None else None,
                rejected=rejected,
                verdict=self._state.rendered,
                events=events,
            ),
            f"evaluate the conditions of {self._key}"
            + (f" after the API refused to write {rejected.ref.kind}" if rejected else ""),
        )
        self._state.announced = decision.events
        if rejected is None:
            return summaries.pass_summary(decision, written, evaluated.written, workflow.now())
        return summaries.pass_summary(
            decision,
            written,
            evaluated.written,
            workflow.now(),
            outcome=evaluated.outcome,
            message=evaluated.message,
            conditions=evaluated.conditions,
            url=evaluated.url,
        )

    def _end(self, decision: PassDecision) -> PassSummary:
        """The service is gone, or left this deployment's selection (a hand-off: nothing is changed)."""
        if self._state.drift is not None:
            drift_report.record_gauge(self._key, 0)
        if decision.handoff is not None:
            self._state.handed_off = decision.handoff
            return PassSummary(
                outcome=PassOutcome.HANDED_OFF, message=decision.handoff, finished_at=workflow.now()
            )
        self._state.gone = True
        return PassSummary(outcome=PassOutcome.GONE, finished_at=workflow.now())

    def _note_service(self, decision: PassDecision) -> None:
        pass_telemetry.note_generation(decision.generation)
        if self._state.uid is not None and decision.uid != self._state.uid:
            workflow.logger.info("%s was deleted and created again (uid %s)", self._key, decision.uid)
        self._state.uid = decision.uid

    async def _write_phases(self, decision: PassDecision) -> tuple[int, RejectedWrite | None]:
        """The writes, phase by phase in KServe's order; a refused write ends them."""
        written = 0
        for phase, method in PHASE_ACTIVITIES:
            ops = decision.writes.get(phase.value)
            if not ops:
                continue
            refs = {op.ref() for op in ops}
            targets = [t for t in decision.targets if t.ref in refs]
            request = ApplyInput(key=self._key, uid=decision.uid, writes=ops, targets=targets)
            result = await self._write(method, request, summaries.describe_writes(ops))
            written += result.written
            if result.rejected is not None:
                return written, result.rejected
        return written, None

    async def _write(
        self, method: MethodSyncSingleParam[Any, ApplyInput, ApplyResult], request: ApplyInput, summary: str
    ) -> ApplyResult:
        try:
            return await self._activity(method, request, summary)
        except ActivityError as err:
            if isinstance(err.cause, ApplicationError) and err.cause.type in errors.RESTART_PASS:
                raise _PassRestartError(at_once=err.cause.type == ErrorType.STALE_PLAN) from err
            raise

    async def _activity(
        self, method: MethodSyncSingleParam[Any, ArgT, ResultT], arg: ArgT, summary: str
    ) -> ResultT:
        options = workflow.ActivityConfig(**ACTIVITY_OPTIONS, summary=summary)
        return await workflow.execute_activity_method(method, arg, **options)

    async def _local_activity(
        self, method: MethodSyncSingleParam[Any, ArgT, ResultT], arg: ArgT, summary: str
    ) -> ResultT:
        options = workflow.LocalActivityConfig(**LOCAL_OPTIONS, summary=summary)
        result: ResultT = await workflow.execute_local_activity_method(method, arg, **options)
        return result
