"""Knative condition semantics (spec Appendix E) and the RouterReady rollup (3.9, R-RR-1..3)."""

from __future__ import annotations

import pytest

from llmisvc_core.models.llmisvc import LLMInferenceServiceStatus, ServiceCondition
from llmisvc_core.world import conditions
from llmisvc_core.world.conditions import Conditions

OLD = "2025-01-01T00:00:00Z"
OLDER = "2024-06-01T00:00:00Z"
NOW = "2026-01-01T00:00:00Z"


def cond(
    type_: str, status: str, reason: str | None = None, message: str | None = None, *, at: str = OLD
) -> ServiceCondition:
    severity = None if type_ in ("Ready", *conditions.TERMINAL) else "Info"
    return ServiceCondition(
        type=type_, status=status, severity=severity, reason=reason, message=message, last_transition_time=at
    )


def conds_of(*items: ServiceCondition) -> Conditions:
    return Conditions(LLMInferenceServiceStatus(conditions=list(items) or None), NOW)


def row(conds: Conditions, type_: str) -> tuple[str, str, str] | None:
    found = conds.get(type_)
    return None if found is None else (found.status, found.reason or "", found.message or "")


def types(conds: Conditions) -> list[str]:
    return [c.type for c in conds.status.conditions or []]


# --- E.1 set / unset -------------------------------------------------------------------------------


def test_e1_conditions_stay_sorted_by_type_and_unique():
    conds = conds_of(cond("WorkloadsReady", "True"), cond("Ready", "True"))
    conds.mark_true("HTTPRoutesReady")
    conds.mark_false("GatewaysReady", "R", "m")
    conds.mark_false("GatewaysReady", "R2", "m2")
    assert types(conds) == sorted(set(types(conds)))
    assert types(conds).count("GatewaysReady") == 1
    assert row(conds, "GatewaysReady") == ("False", "R2", "m2")


def test_e1_identical_condition_keeps_its_transition_time():
    conds = conds_of(cond("GatewaysReady", "False", "R", "m"))
    conds.mark_false("GatewaysReady", "R", "m")
    found = conds.get("GatewaysReady")
    assert found is not None and found.last_transition_time == OLD


def test_e1_empty_and_absent_reason_are_alike():
    conds = conds_of(cond("GatewaysReady", "False", "", "m"))
    conds.mark_false("GatewaysReady", "", "m")
    found = conds.get("GatewaysReady")
    assert found is not None and found.last_transition_time == OLD


@pytest.mark.parametrize(
    ("status", "reason", "message"),
    [("True", None, None), ("False", "Other", "m"), ("False", "R", "other message")],
    ids=["status-changes", "reason-changes", "message-changes"],
)
def test_e1_changed_condition_gets_now(status, reason, message):
    conds = conds_of(cond("GatewaysReady", "False", "R", "m"))
    if status == "True":
        conds.mark_true("GatewaysReady")
    else:
        conds.mark_false("GatewaysReady", reason, message)
    found = conds.get("GatewaysReady")
    assert found is not None and found.last_transition_time == NOW


def test_e1_unset_removes_the_entry_and_is_a_noop_when_absent():
    conds = conds_of(cond("GatewaysReady", "True"), cond("HTTPRoutesReady", "True"))
    conds.unset("GatewaysReady")
    conds.unset("InferencePoolReady")
    assert types(conds) == ["HTTPRoutesReady"]


@pytest.mark.parametrize("type_", ["Ready", "WorkloadsReady", "RouterReady"])
def test_e1_unset_never_removes_ready_or_terminal_conditions(type_):
    conds = conds_of(cond(type_, "True"))
    conds.unset(type_)
    assert types(conds) == [type_]


# --- E.2 top-level Ready ---------------------------------------------------------------------------


@pytest.mark.parametrize("type_", ["WorkloadsReady", "RouterReady"])
def test_e2_terminal_false_sets_ready_false_with_same_reason(type_):
    conds = conds_of(cond("Ready", "True"), cond("WorkloadsReady", "True"), cond("RouterReady", "True"))
    conds.mark_false(type_, "Broken", "it broke")
    assert row(conds, "Ready") == ("False", "Broken", "it broke")


def test_e2_sub_condition_false_leaves_ready_alone():
    conds = conds_of(cond("Ready", "True"), cond("WorkloadsReady", "True"), cond("RouterReady", "True"))
    conds.mark_false("GatewaysReady", "GatewaysNotReady", "m")
    assert row(conds, "Ready") == ("True", "", "")


def test_e2_mark_true_copies_the_newest_false_terminal_into_ready():
    conds = conds_of(
        cond("Ready", "Unknown"),
        cond("WorkloadsReady", "False", "Old", "older failure", at=OLDER),
        cond("RouterReady", "False", "New", "newer failure", at=OLD),
    )
    conds.mark_true("GatewaysReady")
    assert row(conds, "Ready") == ("False", "New", "newer failure")


def test_e2_false_trumps_a_newer_unknown():
    conds = conds_of(
        cond("Ready", "Unknown"),
        cond("WorkloadsReady", "False", "Down", "workload down", at=OLDER),
        cond("RouterReady", "Unknown", "Wait", "waiting", at=OLD),
    )
    conds.mark_true("HTTPRoutesReady")
    assert row(conds, "Ready") == ("False", "Down", "workload down")


def test_e2_unknown_terminal_is_copied_when_nothing_is_false():
    conds = conds_of(cond("Ready", "False"), cond("WorkloadsReady", "Unknown", "Wait", "waiting"))
    conds.mark_true("RouterReady")
    assert row(conds, "Ready") == ("Unknown", "Wait", "waiting")


def test_e2_missing_terminal_makes_ready_unknown_without_reason():
    conds = conds_of(cond("Ready", "False", "X", "y"))
    conds.mark_true("RouterReady")
    assert row(conds, "Ready") == ("Unknown", "", "")


def test_e2_all_terminals_true_make_ready_true():
    conds = conds_of(
        cond("Ready", "Unknown"), cond("PresetsCombined", "True"), cond("WorkloadsReady", "True")
    )
    conds.mark_true("RouterReady")
    assert row(conds, "Ready") == ("True", "", "")


def test_e2_severity_is_info_for_sub_conditions_and_empty_for_terminals():
    conds = conds_of(cond("WorkloadsReady", "True"))
    conds.mark_true("GatewaysReady")
    conds.mark_false("RouterReady", "R", "m")
    severities = {c.type: c.severity for c in conds.status.conditions or []}
    assert severities == {"GatewaysReady": "Info", "Ready": None, "RouterReady": None, "WorkloadsReady": None}
    assert "severity" not in conds.status.to_wire()["conditions"][1]


def test_e2_mark_unknown_of_a_terminal_sets_ready_unknown():
    conds = conds_of(cond("Ready", "True"), cond("WorkloadsReady", "True"), cond("RouterReady", "True"))
    conds.mark_unknown("RouterReady", "Wait", "waiting")
    assert row(conds, "Ready") == ("Unknown", "Wait", "waiting")


def test_e2_mark_unknown_does_not_hide_a_false_terminal():
    conds = conds_of(
        cond("Ready", "False", "Down", "workload down"),
        cond("WorkloadsReady", "False", "Down", "workload down"),
        cond("RouterReady", "True"),
    )
    conds.mark_unknown("RouterReady", "Wait", "waiting")
    assert row(conds, "RouterReady") == ("Unknown", "Wait", "waiting")
    assert row(conds, "Ready") == ("False", "Down", "workload down")


# --- E.3 pre-processing ----------------------------------------------------------------------------


def test_e3_missing_ready_and_terminals_start_unknown():
    conds = conds_of()
    conditions.initialize(conds, generation=1, observed_generation=1)
    assert [row(conds, t) for t in ("Ready", "RouterReady", "WorkloadsReady")] == [("Unknown", "", "")] * 3


def test_e3_terminals_start_true_when_ready_was_true():
    conds = conds_of(cond("Ready", "True"))
    conditions.initialize(conds, generation=1, observed_generation=1)
    assert row(conds, "RouterReady") == ("True", "", "")
    assert row(conds, "WorkloadsReady") == ("True", "", "")


def test_e3_new_generation_makes_ready_unknown():
    conds = conds_of(cond("Ready", "True"), cond("WorkloadsReady", "True"), cond("RouterReady", "True"))
    conditions.initialize(conds, generation=2, observed_generation=1)
    assert row(conds, "Ready") == (
        "Unknown",
        "NewObservedGenFailure",
        "unsuccessfully observed a new generation",
    )


def test_e3_new_generation_with_a_false_terminal_makes_ready_false_with_the_generation_reason():
    # knative's MarkUnknown(Ready) turns Ready False but keeps its own reason and message.
    conds = conds_of(
        cond("Ready", "False", "Down", "workload down"),
        cond("WorkloadsReady", "False", "Down", "workload down"),
        cond("RouterReady", "True"),
    )
    conditions.initialize(conds, generation=2, observed_generation=1)
    assert row(conds, "Ready") == (
        "False",
        "NewObservedGenFailure",
        "unsuccessfully observed a new generation",
    )


def test_e3_same_generation_leaves_ready_alone():
    conds = conds_of(cond("Ready", "True"), cond("WorkloadsReady", "True"), cond("RouterReady", "True"))
    conditions.initialize(conds, generation=3, observed_generation=3)
    found = conds.get("Ready")
    assert found is not None and (found.status, found.last_transition_time) == ("True", OLD)


# --- E.4 post-processing ---------------------------------------------------------------------------


def test_e4_observed_generation_is_recorded():
    status = LLMInferenceServiceStatus(observed_generation=1)
    conditions.finalize(status, [], generation=4)
    assert status.observed_generation == 4


def test_e4_condition_unset_and_reset_unchanged_keeps_its_old_timestamp():
    before = [cond("GatewaysReady", "True")]
    conds = conds_of(*(c.model_copy() for c in before))
    conds.unset("GatewaysReady")
    conds.mark_true("GatewaysReady")
    conditions.finalize(conds.status, before, generation=1)
    found = conds.get("GatewaysReady")
    assert found is not None and found.last_transition_time == OLD


def test_e4_changed_condition_keeps_the_pass_timestamp():
    before = [cond("GatewaysReady", "True")]
    conds = conds_of(*(c.model_copy() for c in before))
    conds.mark_false("GatewaysReady", "GatewaysNotReady", "m")
    conditions.finalize(conds.status, before, generation=1)
    found = conds.get("GatewaysReady")
    assert found is not None and found.last_transition_time == NOW


# --- 3.9 RouterReady rollup ------------------------------------------------------------------------

SUBS = ("GatewaysReady", "HTTPRoutesReady", "InferencePoolReady", "SchedulerWorkloadReady")


@pytest.mark.parametrize("first_false", range(4), ids=SUBS)
def test_r_rr_1_first_false_sub_condition_in_fixed_order_decides(first_false):
    items = [cond(t, "True") for t in SUBS[:first_false]]
    items += [cond(t, "False", f"{t}Reason", f"{t} message") for t in SUBS[first_false:]]
    conds = conds_of(cond("WorkloadsReady", "True"), *items)
    conditions.determine_router_readiness(conds)
    winner = SUBS[first_false]
    assert row(conds, "RouterReady") == ("False", f"{winner}Reason", f"{winner} message")


@pytest.mark.parametrize(
    "subs",
    [[], [cond("GatewaysReady", "True")], [cond("HTTPRoutesReady", "Unknown", "Wait", "w")]],
    ids=["all-absent", "true", "unknown-does-not-block-q30"],
)
def test_r_rr_1_nothing_false_makes_router_ready_true(subs):
    conds = conds_of(cond("WorkloadsReady", "True"), cond("RouterReady", "False", "X", "y"), *subs)
    conditions.determine_router_readiness(conds)
    assert row(conds, "RouterReady") == ("True", "", "")


def test_r_rr_2_router_false_sets_ready_false_and_true_recomputes_it():
    conds = conds_of(
        cond("Ready", "True"),
        cond("PresetsCombined", "True"),
        cond("WorkloadsReady", "True"),
        cond("RouterReady", "True"),
    )
    conds.mark_false("InferencePoolReady", "WaitingForGateway", "waiting for a gateway")
    conditions.determine_router_readiness(conds)
    assert row(conds, "Ready") == ("False", "WaitingForGateway", "waiting for a gateway")
    conds.mark_true("InferencePoolReady")
    conditions.determine_router_readiness(conds)
    assert row(conds, "Ready") == ("True", "", "")


def test_r_rr_3_router_ready_has_empty_severity_and_subs_info():
    conds = conds_of(cond("WorkloadsReady", "True"))
    conds.mark_true("SchedulerWorkloadReady")
    conditions.determine_router_readiness(conds)
    router, scheduler = conds.get("RouterReady"), conds.get("SchedulerWorkloadReady")
    assert router is not None and router.severity is None
    assert scheduler is not None and scheduler.severity == "Info"


def test_edge_80_refs_invalid_gateways_ready_is_copied_to_router_and_ready():
    conds = conds_of(
        cond("Ready", "True"),
        cond("WorkloadsReady", "True"),
        cond("RouterReady", "True"),
        cond("HTTPRoutesReady", "False", "Stopped", "Service is stopped"),
    )
    conds.mark_false("GatewaysReady", "RefsInvalid", "Gateway test-ns/gone does not exist")
    conditions.determine_router_readiness(conds)
    expected = ("False", "RefsInvalid", "Gateway test-ns/gone does not exist")
    assert row(conds, "RouterReady") == expected
    assert row(conds, "Ready") == expected


def test_mark_stopped_uses_the_stopped_reason():
    conds = conds_of()
    conditions.mark_stopped(conds, "GatewaysReady")
    assert row(conds, "GatewaysReady") == ("False", "Stopped", "Service is stopped")
