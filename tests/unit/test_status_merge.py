"""Status merge: the router writes its own fields and conditions and keeps everyone else's."""

from __future__ import annotations

import pytest

from router_core.status_merge import is_router_write, merge_status


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
    stored = {"conditions": [_cond("WorkloadsReady", "True"), _cond("PresetsCombined", "True")]}
    planned = {"conditions": [_cond("RouterReady", "True"), _cond("WorkloadsReady", "Unknown")]}
    merged = merge_status(stored, planned)
    assert merged["conditions"] == [
        _cond("PresetsCombined", "True"),
        _cond("RouterReady", "True"),
        _cond("WorkloadsReady", "True"),
    ]


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
    planned = {"conditions": [_cond("PresetsCombined", "True"), _cond("RouterReady", "True")]}
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
        pytest.param({}, {"conditions": [_cond("PresetsCombined", "True")]}, id="new-foreign-condition"),
        pytest.param({"conditions": [_cond("PresetsCombined", "True")]}, {}, id="foreign-condition-removed"),
        pytest.param({}, {"workloads": {"main": {"name": "x"}}}, id="foreign-field"),
    ],
)
def test_another_controllers_status_change_is_not_the_routers(
    before: dict[str, object], after: dict[str, object]
) -> None:
    assert not is_router_write(before, after)
