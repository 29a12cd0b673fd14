"""How the workflows call their activities: the options (retries, timeouts) and each activity by its
registered name with its types, so that workflow code imports the activities' models, never their
implementations (``activities.router_activities``, ``activities.rollout_activities``), which do the I/O.

``tests/workflows/test_activity_options.py`` checks every name and type here against the registered
activity.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Generic, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy

from activities import errors
from activities.models import (
    ApplyInput,
    ApplyResult,
    EvaluateInput,
    EvaluateResult,
    FetchInput,
    PassResult,
    StopInput,
)
from activities.rollout_models import (
    MembersObservation,
    MetricQueryInput,
    RolloutEventInput,
    RolloutMembers,
    WriteWeightsInput,
    WriteWeightsResult,
)
from llmisvc_core.planner.plan import Phase
from llmisvc_core.rollout.gates import MetricSample

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

#: The options of every activity: retried with backoff, each attempt bounded, the whole bounded too, and
#: a worker lost mid-write noticed by the heartbeat timeout, so another worker's retry (which finds the
#: write made or not, and never makes it twice) comes within seconds.
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

ArgT = TypeVar("ArgT")
ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class Activity(Generic[ArgT, ResultT]):
    """A registered activity, dispatched by the Temporal server (with :data:`ACTIVITY_OPTIONS` unless
    told otherwise)."""

    name: str
    result_type: type[ResultT]

    async def __call__(
        self, arg: ArgT, summary: str | None = None, options: workflow.ActivityConfig = ACTIVITY_OPTIONS
    ) -> ResultT:
        config = workflow.ActivityConfig(**options, summary=summary)
        result: ResultT = await workflow.execute_activity(
            self.name, arg, result_type=self.result_type, **config
        )
        return result


@dataclass(frozen=True)
class LocalActivity(Generic[ArgT, ResultT]):
    """A registered activity run inside the workflow task, with :data:`LOCAL_OPTIONS`."""

    name: str
    result_type: type[ResultT]

    async def __call__(self, arg: ArgT, summary: str) -> ResultT:
        options = workflow.LocalActivityConfig(**LOCAL_OPTIONS, summary=summary)
        result: ResultT = await workflow.execute_local_activity(
            self.name, arg, result_type=self.result_type, **options
        )
        return result


# The service workflow's (activities.router_activities).
FETCH_GATEWAYS = LocalActivity[FetchInput, PassResult]("fetch_gateways", PassResult)
EVALUATE_CONDITIONS = LocalActivity[EvaluateInput, EvaluateResult]("evaluate_conditions", EvaluateResult)
SET_STOP_ANNOTATION = Activity[StopInput, bool]("set_stop_annotation", bool)
#: The write activity of each phase, in the order KServe makes them.
PHASE_WRITES = {
    Phase.SCHEDULER: Activity[ApplyInput, ApplyResult]("reconcile_scheduler", ApplyResult),
    Phase.ROUTES: Activity[ApplyInput, ApplyResult]("reconcile_routes", ApplyResult),
    Phase.MIGRATION: Activity[ApplyInput, ApplyResult]("attempt_v1_migration", ApplyResult),
}

# The rollout workflow's (activities.rollout_activities).
READ_ROLLOUT_MEMBERS = Activity[RolloutMembers, MembersObservation](
    "read_rollout_members", MembersObservation
)
QUERY_PROMETHEUS = Activity[MetricQueryInput, MetricSample]("query_prometheus", MetricSample)
WRITE_ROLLOUT_WEIGHTS = Activity[WriteWeightsInput, WriteWeightsResult](
    "write_rollout_weights", WriteWeightsResult
)
RECORD_ROLLOUT_EVENT = Activity[RolloutEventInput, None]("record_rollout_event", type(None))
