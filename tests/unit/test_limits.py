"""The depth bound on untrusted input (``llmisvc_core.limits``): found without recursion, at any depth,
and named by a short path."""

from __future__ import annotations

import pytest

from llmisvc_core.limits import MAX_DEPTH, depth_problem, too_deep


def nested(levels: int, leaf: object = "x") -> object:
    value = leaf
    for level in range(levels):
        value = {"a": value} if level % 2 else [value]
    return value


@pytest.mark.parametrize("levels", [0, 1, 15, MAX_DEPTH])
def test_an_object_nested_up_to_the_limit_is_within_it(levels: int) -> None:
    assert too_deep(nested(levels)) is None


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 600, 3000, 100_000])
def test_an_object_nested_past_the_limit_is_found_without_recursion_at_any_depth(levels: int) -> None:
    assert too_deep(nested(levels)) is not None


def test_the_path_names_where_the_nesting_starts_and_elides_the_rest() -> None:
    obj = {"metadata": {"name": "ok"}, "spec": {"model": {"uri": "hf://x", "extra": nested(3000)}}}
    assert depth_problem(obj) == f"field spec.model.extra.a[0].a…: nested deeper than {MAX_DEPTH} levels"


def test_a_wide_but_shallow_object_is_within_the_limit() -> None:
    assert too_deep({f"k{i}": [{"v": i}] * 50 for i in range(200)}) is None


def test_the_limit_is_a_parameter_for_smaller_bounds() -> None:
    assert too_deep({"a": {"b": {"c": 1}}}, limit=2) == "a.b"
    assert too_deep({"a": {"b": 1}}, limit=2) is None
