"""The workflows call their activities by name (``workflows.activity_options``), so that their imports hold
models only: each name there is an activity the worker registers, taking the argument and giving the
result the workflow's reference says."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio import activity

from activities.models import ApplyInput, EvaluateInput, FetchInput, StopInput
from activities.rollout_activities import RolloutActivities
from activities.rollout_models import MetricQueryInput, RolloutEventInput, RolloutMembers, WriteWeightsInput
from activities.router_activities import RouterActivities
from llmisvc_core.planner.plan import Phase
from workflows import activity_options
from workflows.activity_options import Activity, LocalActivity

#: Each reference with the argument type it is declared with (``Activity[Arg, Result]``).
REFERENCES: list[tuple[Activity[Any, Any] | LocalActivity[Any, Any], type]] = [
    (activity_options.FETCH_GATEWAYS, FetchInput),
    (activity_options.EVALUATE_CONDITIONS, EvaluateInput),
    (activity_options.SET_STOP_ANNOTATION, StopInput),
    *((write, ApplyInput) for write in activity_options.PHASE_WRITES.values()),
    (activity_options.READ_ROLLOUT_MEMBERS, RolloutMembers),
    (activity_options.QUERY_PROMETHEUS, MetricQueryInput),
    (activity_options.WRITE_ROLLOUT_WEIGHTS, WriteWeightsInput),
    (activity_options.RECORD_ROLLOUT_EVENT, RolloutEventInput),
]


def registered() -> dict[str, activity._Definition]:
    """By name, the activities of the two classes the worker registers (``worker.factory``)."""
    methods = [*vars(RouterActivities).values(), *vars(RolloutActivities).values()]
    definitions = [activity._Definition.from_callable(m) for m in methods if callable(m)]
    return {d.name: d for d in definitions if d is not None and d.name is not None}


@pytest.mark.parametrize("reference, argument", REFERENCES, ids=[r.name for r, _ in REFERENCES])
def test_each_activity_the_workflows_call_by_name_is_registered_with_the_types_they_expect(
    reference: Activity[Any, Any] | LocalActivity[Any, Any], argument: type
) -> None:
    definition = registered().get(reference.name)

    assert definition is not None, f"no activity registered as {reference.name!r}"
    assert definition.arg_types == [argument]
    expected = reference.result_type
    assert definition.ret_type is expected or (definition.ret_type is None and expected is type(None))


def test_every_registered_activity_is_called_by_one_reference() -> None:
    assert sorted(registered()) == sorted(reference.name for reference, _ in REFERENCES)


def test_each_phase_has_its_write_activity() -> None:
    assert list(activity_options.PHASE_WRITES) == list(Phase)
    assert [a.name for a in activity_options.PHASE_WRITES.values()] == [
        "reconcile_scheduler",
        "reconcile_routes",
        "attempt_v1_migration",
    ]
