"""Shadow mode's drift report (llmisvc_core.planner.drift): which objects and fields differ from what a pass
would write, in the planner's own terms, so a cluster that already holds the desired state shows no drift."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.planner import drift, phases
from llmisvc_core.planner.passes import plan_pass
from llmisvc_core.world.config import Environment
from llmisvc_core.world.derivative import deep_derivative
from tests import builders as b
from tests.builders import Wire, plans

PRESETS: Wire = {"route": {}, "gateway": {}, "scheduler": {}}
ROUTE = "svc-kserve-route"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "a", "b"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(json_values, json_values)
def test_a_field_differs_exactly_when_deep_derivative_says_the_values_differ(desired: Any, live: Any) -> None:
    assert bool(drift.field_diff(desired, live, "spec")) == (not deep_derivative(desired, live))


def test_field_paths_name_list_indexes_and_quote_keys_with_dots() -> None:
    desired = {"rules": [{"backendRefs": [{"name": "b"}]}], "x": {"a.b/c": "1"}}
    live = {"rules": [{"backendRefs": [{"name": "a", "weight": 1}]}], "x": {}}
    assert drift.field_diff(desired, live, "spec") == [
        'spec.rules[0].backendRefs[0].name: "a" -> "b"',
        'spec.x["a.b/c"]: (absent) -> "1"',
    ]


def test_fields_only_the_live_object_sets_are_someone_elses_and_never_drift() -> None:
    assert drift.field_diff({"a": "1"}, {"a": "1", "extra": "2"}, "metadata.labels") == []


def test_exact_comparison_reports_live_values_the_desired_lacks() -> None:
    assert drift.field_diff({"a": 1}, {"a": 1, "b": 2}, "status", exact=True) == ["status.b: 2 -> (absent)"]


def test_long_values_are_cut() -> None:
    line = drift.field_diff("x" * 200, "y", "spec.v")[0]
    assert line.endswith("…") and len(line) < 2 * drift.MAX_VALUE


def _plan_and_world(objects: list[Wire]) -> tuple[Any, Any, Wire]:
    svc = next(o for o in objects if o["kind"] == "LLMInferenceService")
    world = plans.snapshot(*objects)
    plan = plan_pass(LLMInferenceService.model_validate(svc), world, Environment(), b.NOW)
    return plan, world, svc


def _converged() -> list[Wire]:
    cluster: list[Wire] = [
        b.service(router=PRESETS),
        b.gateway_class(),
        b.gateway("kserve-ingress-gateway", "kserve"),
    ]
    for _ in range(3):
        plan, _, _ = _plan_and_world(cluster)
        cluster = plans.apply_plan(cluster, plan, ("ns", "svc"))
    return cluster


def _drift(cluster: list[Wire]) -> drift.Drift:
    plan, world, svc = _plan_and_world(cluster)
    ops = [op for ops in phases.split_into_phases(plan, world).values() for op in ops]
    return drift.pass_drift(ops, world, svc.get("status") or {}, plan.status)


def test_a_cluster_holding_what_the_pass_would_write_has_no_drift() -> None:
    assert _drift(_converged()) == drift.Drift()
    assert _drift(_converged()).count == 0


def test_a_route_changed_by_hand_is_named_with_the_field_that_differs() -> None:
    cluster = copy.deepcopy(_converged())
    route = next(o for o in cluster if o["kind"] == "HTTPRoute")
    route["spec"]["rules"][0]["backendRefs"][0]["name"] = "by-hand"
    report = _drift(cluster)
    assert [o.describe() for o in report.objects] == [f"update HTTPRoute ns/{ROUTE}"]
    assert report.objects[0].fields == [
        'spec.rules[0].backendRefs[0].name: "by-hand" -> "svc-inference-pool"'
    ]


def test_a_missing_object_is_a_create_and_an_unwanted_one_a_delete() -> None:
    cluster = [o for o in _converged() if o["kind"] != "HTTPRoute"]
    assert [o.describe() for o in _drift(cluster).objects] == [f"create HTTPRoute ns/{ROUTE}"]
    stopped = [b.stopped(o) if o["kind"] == "LLMInferenceService" else o for o in _converged()]
    actions = {o.action for o in _drift(stopped).objects}
    assert actions == {"delete"}


def test_a_status_that_would_change_is_one_object_with_a_line_per_condition() -> None:
    cluster = copy.deepcopy(_converged())
    svc = next(o for o in cluster if o["kind"] == "LLMInferenceService")
    svc["status"] = {**svc["status"], "url": "http://elsewhere"}
    svc["status"]["conditions"] = [c for c in svc["status"]["conditions"] if c["type"] != "HTTPRoutesReady"]
    report = _drift(cluster)
    assert report.objects == [] and report.count == 1
    assert any(line.startswith("condition HTTPRoutesReady: (absent) -> ") for line in report.status)
    assert any(line.startswith('status.url: "http://elsewhere" -> ') for line in report.status)


def test_conditions_in_another_order_are_drift_and_another_writers_transition_times_are_not() -> None:
    cluster = copy.deepcopy(_converged())
    svc = next(o for o in cluster if o["kind"] == "LLMInferenceService")
    svc["status"]["conditions"] = list(reversed(svc["status"]["conditions"]))
    assert _drift(cluster).status == [
        "status.conditions: the same conditions in another order -> sorted by type"
    ]
    svc["status"]["conditions"] = sorted(svc["status"]["conditions"], key=lambda c: c["type"])
    svc["status"]["conditions"][0]["lastTransitionTime"] = "2000-01-01T00:00:00Z"
    assert _drift(cluster) == drift.Drift()  # an unchanged condition keeps the time it has
