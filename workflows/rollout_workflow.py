"""``RolloutWorkflow``: one progressive rollout of a routing group, from its stable service to a candidate.

Each turn of the loop reads both services, evaluates the gates and asks the decision table
(:mod:`llmisvc_core.rollout.decision`) what to do: advance to the next step and dwell there (a durable timer
named after the step), wait for pending gates, roll back, pause, or succeed. People steer it with the
``pause``, ``resume``, ``promote`` and ``abort`` updates and read it with the ``status`` query; the
Temporal UI shows the same as the run's details. The weights are written by an activity that compares
them with the target first, so a worker that dies anywhere resumes the rollout without stepping twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from activities.rollout_models import (
    MembersObservation,
    MetricQueryInput,
    RolloutEventInput,
    WriteWeightsInput,
)
from llmisvc_core.rollout import decision, gates
from llmisvc_core.rollout import weights as weight_rules
from llmisvc_core.rollout.decision import Advance, Pause, Progress, RollBack, Succeed, Wait
from llmisvc_core.rollout.gates import GateState, MetricSample
from llmisvc_core.rollout.weights import Weights
from workflows import descriptions, rollout_details, rollout_metrics
from workflows.activity_options import (
    ACTIVITY_RETRY,
    QUERY_PROMETHEUS,
    READ_ROLLOUT_MEMBERS,
    RECORD_ROLLOUT_EVENT,
    WRITE_ROLLOUT_WEIGHTS,
)
from workflows.rollout_models import (
    MAX_TIMELINE,
    ROLLOUT_WORKFLOW_NAME,
    Command,
    ControlRequest,
    RolloutInput,
    RolloutPhase,
    RolloutResult,
    RolloutState,
    RolloutStatus,
    TimelineEntry,
)

NORMAL, WARNING = "Normal", "Warning"


async def _until(check: Callable[[], bool], timeout: timedelta, timeout_summary: str) -> None:
    """Wait until ``check`` holds or ``timeout`` passes (a durable timer named ``timeout_summary``)."""
    with contextlib.suppress(TimeoutError):  # the timeout is an answer, not a failure
        await workflow.wait_condition(check, timeout=timeout, timeout_summary=timeout_summary)


def _cause(err: ActivityError) -> str:
    """What went wrong, in the activity's words."""
    cause = err.cause
    return cause.message if isinstance(cause, ApplicationError) else str(cause or err)


@workflow.defn(name=ROLLOUT_WORKFLOW_NAME)
class RolloutWorkflow:
    @workflow.init
    def __init__(self, request: RolloutInput) -> None:
        self.members = request.members
        self.plan = request.plan
        self.state = request.state or RolloutState()

    @workflow.run
    async def run(self, request: RolloutInput) -> RolloutResult:
        if self.state.progress is None:
            await self._begin()
        while not self.state.phase.ended:
            if workflow.info().is_continue_as_new_suggested() and self.state.command is None:
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(RolloutInput(members=self.members, plan=self.plan, state=self.state))
            await self._turn()
            self._show()
        await workflow.wait_condition(workflow.all_handlers_finished)
        expected = self.state.progress.expected if self.state.progress else None
        return RolloutResult(phase=self.state.phase, reason=self.state.reason, weights=expected)

    # --- one turn --------------------------------------------------------------------------------------

    async def _begin(self) -> None:
        seen = await self._read()
        start = seen.weights
        self.state.initial = start
        self.state.progress = Progress(next_step=0, expected=start, last_good=start)
        self._note(0, start, "started")
        rollout_metrics.record_step(self.members, 0)
        steps = " → ".join(f"{s.weight}%" for s in self.plan.steps)
        await self._event(
            NORMAL,
            "RolloutStarted",
            f"rollout {steps} from {self.members.stable} to "
            f"{self.members.candidate} started at {start.describe()}",
        )
        self._show()

    async def _turn(self) -> None:
        state = self.state
        if state.command is not None:
            await (self._promote() if state.command == Command.PROMOTE else self._abort())
        elif state.phase == RolloutPhase.PAUSED:
            await workflow.wait_condition(
                lambda: self.state.phase != RolloutPhase.PAUSED or self.state.command is not None
            )
        elif state.dwell_until is not None and workflow.now() < state.dwell_until:
            await self._dwell()
        else:
            state.dwell_until = None
            await self._check()

    async def _dwell(self) -> None:
        """Dwell at the step, watching: every ``gate_recheck_seconds`` the weights and gates are read
        again, so that an edit pauses and a failed gate rolls back without waiting for the dwell's end."""
        assert self.state.dwell_until is not None and self.state.progress is not None
        step = self.state.progress.next_step
        left = self.state.dwell_until - workflow.now()
        summary = f"step {step}/{len(self.plan.steps)}: {self.plan.steps[step - 1].weight}% to the candidate"
        recheck = timedelta(seconds=self.plan.gate_recheck_seconds)
        await _until(self._interrupted, timeout=min(left, recheck), timeout_summary=summary)
        if not self._interrupted() and workflow.now() < self.state.dwell_until:
            await self._check(watch_only=True)

    async def _check(self, watch_only: bool = False) -> None:
        """Read, gate, decide, act: the decision table's move. ``watch_only`` (while dwelling): act on a
        pause or a failed gate only; pending gates, advancing and succeeding are for the dwell's end."""
        state = self.state
        assert state.progress is not None
        try:
            seen = await self._read()
            if state.adopt_weights:
                state.progress = state.progress.model_copy(update={"expected": seen.weights})
                state.adopt_weights = False
            sample = await self._sample()
        except ActivityError as err:
            return await self._pause(f"cannot read the services: {_cause(err)}")
        state.gates = gates.evaluate(seen.stable, seen.candidate, self.plan.prometheus, sample)
        rollout_metrics.record_gates(self.members, state.gates)
        pending = (workflow.now() - state.pending_since).total_seconds() if state.pending_since else 0.0
        move = decision.decide(
            self.plan, self.members.group, state.progress, seen.stable, seen.candidate, state.gates, pending
        )
        failed = any(g.state == GateState.FAILED for g in state.gates)
        if watch_only and not (isinstance(move, Pause) or (isinstance(move, RollBack) and failed)):
            return None
        match move:
            case Pause(reason=reason):
                state.adopt_weights = True
                await self._pause(reason)
            case RollBack(weights=target, reason=reason):
                await self._roll_back(target, reason)
            case Wait(reason=reason):
                await self._wait(reason)
            case Succeed():
                await self._end(
                    RolloutPhase.SUCCEEDED, "every step passed its gates", NORMAL, "RolloutSucceeded"
                )
            case Advance(step=step, weights=target):
                await self._advance(step, target)

    async def _advance(self, step: int, target: Weights) -> None:
        state = self.state
        assert state.progress is not None
        state.pending_since = None
        good = state.progress.expected  # the gates passed under these
        state.progress = state.progress.model_copy(update={"last_good": good})
        if not await self._write(target, f"step {step + 1}", step + 1):
            return
        state.progress = Progress(next_step=step + 1, expected=target, last_good=good)
        rollout_metrics.record_step(self.members, step + 1)
        dwell = self.plan.steps[step].dwell_seconds
        state.dwell_until = workflow.now() + timedelta(seconds=dwell)
        if state.phase == RolloutPhase.PAUSED:
            self._freeze_dwell()  # paused while this step was being written
        else:
            state.phase, state.reason = RolloutPhase.RUNNING, f"dwelling {dwell}s at step {step + 1}"
        note = f"step {step + 1}/{len(self.plan.steps)}: {target.describe()}, dwelling {dwell}s"
        workflow.logger.info("rollout %s: %s", self._name(), note)
        await self._event(NORMAL, "RolloutStep", note)

    async def _wait(self, reason: str) -> None:
        state = self.state
        if state.pending_since is None:
            state.pending_since = workflow.now()
        if state.phase != RolloutPhase.PAUSED:
            state.phase, state.reason = RolloutPhase.WAITING, reason
        self._show()
        wait = timedelta(seconds=self.plan.gate_recheck_seconds)
        await _until(self._interrupted, timeout=wait, timeout_summary="gates pending: re-check")

    async def _roll_back(self, target: Weights, reason: str) -> None:
        if await self._write(target, "rollback"):
            await self._end(
                RolloutPhase.ROLLED_BACK,
                f"{reason}; rolled back to {target.describe()}",
                WARNING,
                "RolloutRolledBack",
            )

    async def _promote(self) -> None:
        state = self.state
        by = state.command_reason
        if state.adopt_weights:  # paused by an edit: a promotion starts from the weights as they are
            assert state.progress is not None
            try:
                seen = await self._read()
            except ActivityError as err:
                state.command = None
                return await self._pause(f"cannot promote, cannot read the services: {_cause(err)}")
            state.progress = state.progress.model_copy(update={"expected": seen.weights})
            state.adopt_weights = False
        if await self._write(weight_rules.promoted(self.plan), f"promoted by {by}"):
            await self._end(RolloutPhase.SUCCEEDED, f"promoted by {by}", NORMAL, "RolloutPromoted")
        state.command = None  # carried out: the update answers

    async def _abort(self) -> None:
        state = self.state
        assert state.initial is not None
        by = state.command_reason
        if state.adopt_weights:
            reason = f"aborted by {by}; the weights were edited by someone else and are left as they are"
        elif await self._write(state.initial, f"aborted by {by}", pause_on_edit=False):
            reason = f"aborted by {by}; back to {state.initial.describe()}"
        else:
            reason = f"aborted by {by}; {state.reason}, so the weights are left as they are"
        await self._end(RolloutPhase.ABORTED, reason, WARNING, "RolloutAborted")
        state.command = None

    # --- effects ---------------------------------------------------------------------------------------

    async def _read(self) -> MembersObservation:
        return await READ_ROLLOUT_MEMBERS(self.members)

    async def _sample(self) -> MetricSample | None:
        gate = self.plan.prometheus
        if gate is None:
            return None
        query = MetricQueryInput(url=gate.url, query=gate.query, timeout_seconds=gate.timeout_seconds)
        options = workflow.ActivityConfig(
            start_to_close_timeout=timedelta(seconds=gate.timeout_seconds + 10), retry_policy=ACTIVITY_RETRY
        )
        return await QUERY_PROMETHEUS(query, options=options)

    async def _write(
        self, target: Weights, what: str, step: int | None = None, pause_on_edit: bool = True
    ) -> bool:
        """Write ``target`` over the weights the rollout last wrote; False (and paused, unless told not
        to) when someone else edited them or the write failed for good."""
        state = self.state
        assert state.progress is not None
        request = WriteWeightsInput(members=self.members, expected=state.progress.expected, target=target)
        try:
            result = await WRITE_ROLLOUT_WEIGHTS(request)
        except ActivityError as err:
            problem = f"cannot write the weights ({what}): {_cause(err)}"
        else:
            if result.edited is None:
                state.progress = state.progress.model_copy(update={"expected": target})
                self._note(state.progress.next_step if step is None else step, target, what)
                return True
            state.adopt_weights = True
            problem = result.edited
        if pause_on_edit:
            await self._pause(problem)
        else:
            state.reason = problem
        return False

    async def _pause(self, reason: str) -> None:
        state = self.state
        if state.phase != RolloutPhase.PAUSED:
            self._freeze_dwell()
        state.phase, state.reason = RolloutPhase.PAUSED, reason
        workflow.logger.warning("rollout %s paused: %s", self._name(), reason)
        await self._event(WARNING, "RolloutPaused", f"paused: {reason}")

    async def _end(self, phase: RolloutPhase, reason: str, kind: str, event: str) -> None:
        self.state.phase, self.state.reason = phase, reason
        self.state.dwell_until = None
        workflow.logger.info("rollout %s %s: %s", self._name(), phase.value, reason)
        await self._event(kind, event, f"{phase.value}: {reason}")

    async def _event(self, kind: str, reason: str, note: str) -> None:
        event = RolloutEventInput(members=self.members, type=kind, reason=reason, note=note)
        try:
            await RECORD_ROLLOUT_EVENT(event)
        except ActivityError:
            workflow.logger.warning("rollout %s: Event %s not recorded", self._name(), reason)

    # --- control -------------------------------------------------------------------------------------

    @descriptions.update(rollout_details.PAUSE)
    async def pause(self, request: ControlRequest) -> RolloutStatus:
        await self._pause(f"paused by {request.by}")
        self._show()
        return self.status()

    @pause.validator
    def _may_pause(self, request: ControlRequest) -> None:
        self._refuse_if_ended("pause")
        if self.state.phase == RolloutPhase.PAUSED:
            raise ValueError(f"rollout {self._name()} is paused already: {self.state.reason}")

    @descriptions.update(rollout_details.RESUME)
    async def resume(self, request: ControlRequest) -> RolloutStatus:
        state = self.state
        state.phase, state.reason = RolloutPhase.RUNNING, f"resumed by {request.by}"
        state.pending_since = None  # the gates get their full time again
        if state.dwell_left_seconds is not None:
            state.dwell_until = workflow.now() + timedelta(seconds=state.dwell_left_seconds)
            state.dwell_left_seconds = None
        await self._event(NORMAL, "RolloutResumed", state.reason)
        self._show()
        return self.status()

    @resume.validator
    def _may_resume(self, request: ControlRequest) -> None:
        self._refuse_if_ended("resume")
        if self.state.phase != RolloutPhase.PAUSED:
            raise ValueError(f"rollout {self._name()} is not paused (it is {self.state.phase.value})")

    @descriptions.update(rollout_details.PROMOTE)
    async def promote(self, request: ControlRequest) -> RolloutStatus:
        return await self._command(Command.PROMOTE, request)

    @promote.validator
    def _may_promote(self, request: ControlRequest) -> None:
        self._refuse_if_ended("promote")

    @descriptions.update(rollout_details.ABORT)
    async def abort(self, request: ControlRequest) -> RolloutStatus:
        return await self._command(Command.ABORT, request)

    @abort.validator
    def _may_abort(self, request: ControlRequest) -> None:
        self._refuse_if_ended("abort")

    @workflow.query(description=rollout_details.STATUS)
    def status(self) -> RolloutStatus:
        state = self.state
        return RolloutStatus(
            namespace=self.members.namespace,
            group=self.members.group,
            stable=self.members.stable,
            candidate=self.members.candidate,
            phase=state.phase,
            reason=state.reason,
            step=state.progress.next_step if state.progress else 0,
            steps=[s.weight for s in self.plan.steps],
            weights=state.progress.expected if state.progress else None,
            gates=state.gates,
            timeline=state.timeline,
        )

    async def _command(self, command: Command, request: ControlRequest) -> RolloutStatus:
        """Hand ``command`` to the loop and answer once the loop has carried it out: ended, or paused when
        the weights turned out to be someone else's."""
        self.state.command, self.state.command_reason = command, request.by
        await workflow.wait_condition(lambda: self.state.command is None)
        return self.status()

    def _refuse_if_ended(self, action: str) -> None:
        if self.state.phase.ended or self.state.command is not None:
            ended = self.state.phase.value if self.state.phase.ended else f"ending ({self.state.command})"
            raise ValueError(f"cannot {action} rollout {self._name()}: it is {ended}")

    # --- helpers -------------------------------------------------------------------------------------

    def _interrupted(self) -> bool:
        return self.state.command is not None or self.state.phase == RolloutPhase.PAUSED

    def _freeze_dwell(self) -> None:
        state = self.state
        if state.dwell_until is not None:
            state.dwell_left_seconds = max(0.0, (state.dwell_until - workflow.now()).total_seconds())
            state.dwell_until = None

    def _note(self, step: int, target: Weights, note: str) -> None:
        entry = TimelineEntry(at=workflow.now(), step=step, weights=target, note=note)
        self.state.timeline = [*self.state.timeline, entry][-MAX_TIMELINE:]

    def _name(self) -> str:
        return f"{self.members.namespace}/{self.members.group}"

    def _show(self) -> None:
        workflow.set_current_details(rollout_details.details(self.status()))
