"""Status merge: the router writes its own fields and conditions and keeps everyone else's."""

from __future__ import annotations

import pytest

from llmisvc_core.world.status_merge import is_router_write, merge_status, router_basis


def _cond(type_: str, status: str) -> dict[str, str]:
    return {"type": type_, "status": status}


def test_router_fields_and_conditions_come_from_the_pass() -> None:
    stored = {"url": "http://old/", "conditions": [_cond("RouterReady", "False")]}
    planned = {
        "url": "http://new/",
        "addresses": [{"url": "http://new/"}],
        "conditions": [_cond("RouterReady", "True")],
    }
    assert merge_status(stored, planned) == {
        "url": "http://new/",
        "addresses": [{"url": "http://new/"}],
        "conditions": [_cond("RouterReady", "True")],
    }


def test_other_controllers_conditions_keep_their_stored_value() -> None:
    stored = {"conditions": [_cond("WorkloadsReady", "True"), _cond("MainWorkloadReady", "True")]}
    planned = {"conditions": [_cond("RouterReady", "True"), _cond("WorkloadsReady", "Unknown")]}
    merged = merge_status(stored, planned)
    assert merged["conditions"] == [
        _cond("MainWorkloadReady", "True"),
        _cond("RouterReady", "True"),
        _cond("WorkloadsReady", "True"),
    ]


def test_presets_combined_and_applied_configs_belong_to_the_router() -> None:
    stored = {"appliedConfigs": [{"name": "old"}], "conditions": [_cond("PresetsCombined", "False")]}
    planned = {"appliedConfigs": [{"name": "new"}], "conditions": [_cond("PresetsCombined", "True")]}
    merged = merge_status(stored, planned)
    assert merged == {"appliedConfigs": [{"name": "new"}], "conditions": [_cond("PresetsCombined", "True")]}


def test_why_4_ready_is_never_true_while_the_stored_workloads_ready_is_false() -> None:
    workloads = {
        "type": "WorkloadsReady",
        "status": "False",
        "reason": "MainWorkloadNotReady",
        "message": "Deployment rollout in progress",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    stored = {"conditions": [workloads]}
    planned = {
        "conditions": [_cond("Ready", "True"), _cond("RouterReady", "True"), _cond("WorkloadsReady", "True")]
    }
    ready = merge_status(stored, planned)["conditions"][0]
    assert ready == {
        "type": "Ready",
        "status": "False",
        "reason": "MainWorkloadNotReady",
        "message": "Deployment rollout in progress",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }


def test_ready_turns_true_when_the_stored_workloads_became_ready_meanwhile() -> None:
    stored = {"conditions": [_cond("WorkloadsReady", "True")]}
    planned = {
        "conditions": [
            _cond("PresetsCombined", "True"),
            _cond("Ready", "Unknown"),
            _cond("RouterReady", "True"),
            _cond("WorkloadsReady", "Unknown"),
        ]
    }
    assert merge_status(stored, planned)["conditions"][1] == _cond("Ready", "True")


def test_a_ready_that_agrees_is_kept_as_planned() -> None:
    planned_ready = {"type": "Ready", "status": "Unknown", "reason": "NewObservedGenFailure"}
    stored = {"conditions": [_cond("WorkloadsReady", "Unknown")]}
    planned = {"conditions": [planned_ready, _cond("RouterReady", "True")]}
    assert merge_status(stored, planned)["conditions"][0] == planned_ready


def test_conditions_the_pass_initialised_fill_gaps_only() -> None:
    merged = merge_status({}, {"conditions": [_cond("WorkloadsReady", "Unknown")]})
    assert merged["conditions"] == [_cond("WorkloadsReady", "Unknown")]


def test_fields_the_pass_cleared_are_removed_and_foreign_fields_stay() -> None:
    stored = {"url": "http://old/", "router": {"gateways": []}, "workloads": {"main": {"name": "x"}}}
    assert merge_status(stored, {"observedGeneration": 2}) == {
        "workloads": {"main": {"name": "x"}},
        "observedGeneration": 2,
    }


def test_a_stale_copy_of_another_controllers_condition_is_not_written_back() -> None:
    planned = {"conditions": [_cond("MainWorkloadReady", "True"), _cond("RouterReady", "True")]}
    assert merge_status({}, planned) == {"conditions": [_cond("RouterReady", "True")]}


def test_the_routers_first_write_is_recognised_as_its_own() -> None:
    planned = {
        "url": "http://svc/",
        "conditions": [
            _cond("Ready", "True"),
            _cond("RouterReady", "True"),
            _cond("WorkloadsReady", "Unknown"),
        ],
    }
    first_write = merge_status({}, planned)
    assert is_router_write({}, first_write)
    assert is_router_write(first_write, merge_status(first_write, {**planned, "url": "http://other/"}))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            {"conditions": [_cond("WorkloadsReady", "Unknown")]},
            {"conditions": [_cond("WorkloadsReady", "True")]},
            id="workloads-became-ready",
        ),
        pytest.param({}, {"conditions": [_cond("WorkloadsReady", "True")]}, id="workloads-first-word"),
        pytest.param({}, {"conditions": [_cond("MainWorkloadReady", "True")]}, id="new-foreign-condition"),
        pytest.param(
            {"conditions": [_cond("MainWorkloadReady", "True")]}, {}, id="foreign-condition-removed"
        ),
        pytest.param({}, {"workloads": {"main": {"name": "x"}}}, id="foreign-field"),
    ],
)
def test_another_controllers_status_change_is_not_the_routers(
    before: dict[str, object], after: dict[str, object]
) -> None:
    assert not is_router_write(before, after)


# -- a foreign status that is not what the router would write -------------------------------------------


@pytest.mark.parametrize("odd", ["x", 42, None, ["nested"], {"no": "type"}], ids=repr)
def test_a_foreign_condition_that_is_not_an_object_is_kept_as_it_is_and_the_routers_are_merged(
    odd: object,
) -> None:
    stored = {"conditions": [odd, _cond("WorkloadsReady", "True")]}
    planned = {"conditions": [_cond("RouterReady", "True")]}
    merged = merge_status(stored, planned)["conditions"]
    assert odd in merged
    assert _cond("RouterReady", "True") in merged and _cond("WorkloadsReady", "True") in merged


@pytest.mark.parametrize("odd", ["x", 42, {"type": "RouterReady"}], ids=repr)
def test_a_status_with_a_condition_that_is_not_an_object_is_not_mistaken_for_a_router_write(
    odd: object,
) -> None:
    before = {"conditions": [_cond("RouterReady", "True")]}
    after = {"conditions": [_cond("RouterReady", "True"), "x", odd]}
    assert is_router_write(before, after) is False
    assert is_router_write(after, after) is True


def test_conditions_that_are_not_a_list_are_replaced_by_the_routers_without_an_error() -> None:
    # A real API server refuses them (the CRD types status.conditions as a list); the merge need not crash.
    assert is_router_write({"conditions": "x"}, {"conditions": [_cond("RouterReady", "True")]}) is True
    assert merge_status({"conditions": "x"}, {"conditions": [_cond("RouterReady", "True")]}) == {
        "conditions": [_cond("RouterReady", "True")]
    }


def test_the_router_basis_moves_with_the_routers_part_only() -> None:
    """What the status writer compares before writing (``evaluate_conditions``): another controller's
    condition, ``Ready`` (which follows them), a foreign field and the conditions' order leave it;
    a router's condition or field moves it."""
    stored = {
        "url": "http://a/",
        "conditions": [_cond("RouterReady", "False"), _cond("WorkloadsReady", "True")],
    }
    basis = router_basis(stored)
    assert router_basis({**stored, "conditions": list(reversed(stored["conditions"]))}) == basis
    foreign = [_cond("WorkloadsReady", "False"), _cond("Ready", "False"), _cond("RouterReady", "False")]
    assert router_basis({**stored, "modelStatus": {"x": 1}, "conditions": foreign}) == basis
    assert router_basis({**stored, "conditions": [_cond("RouterReady", "True")]}) != basis
    assert router_basis({**stored, "url": "http://b/"}) != basis
    assert router_basis({"conditions": ["not an object", 3]}) == router_basis({})
