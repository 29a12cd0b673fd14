"""The payload bound (``activities.payload_guard``): a plan that does not fit in a history payload, by size
or by nesting, becomes a small plan without writes whose status says why; messages are clipped."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.contrib.pydantic import pydantic_data_converter

from activities import errors, payload_guard
from activities.models import PhaseWrites, Planned
from activities.payload_guard import DEPTH_BOUND, PAYLOAD_BOUND, TOO_LARGE
from llmisvc_core.planner.plan import Outcome, Phase, WriteOp
from llmisvc_kube.api import ApiError

NOW = "2026-12-01T06:00:00Z"


def nested(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(levels - 1):
        node["x"] = {}
        node = node["x"]
    return root


def service(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"metadata": {"namespace": "llm", "name": "opt", "uid": "u1"}, "spec": spec}
    if status is not None:
        raw["status"] = status
    return raw


def route_write(value: Any) -> WriteOp:
    return WriteOp(
        apply={
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": {"namespace": "llm", "name": "opt-kserve-route"},
            "spec": {"hostnames": [value]},
        }
    )


def plan_with(value: Any) -> Planned:
    routes = PhaseWrites(phase=Phase.ROUTES, writes=[route_write(value)])
    return Planned(uid="u1", generation=3, phases=[routes], status={"url": "x"})


def round_trip(decision: Planned) -> Planned:
    """Through the worker's converter, as the history records it and the workflow reads it back."""
    payloads = pydantic_data_converter.payload_converter.to_payloads([decision])
    assert payloads[0].ByteSize() <= PAYLOAD_BOUND
    (decoded,) = pydantic_data_converter.payload_converter.from_payloads(payloads, [Planned])
    assert isinstance(decoded, Planned)
    return decoded


def test_a_plan_that_fits_is_carried_as_it_is():
    decision = plan_with("opt.example.com")
    assert payload_guard.fit_plan(decision, service({}), NOW) is decision


def test_a_plan_over_the_size_bound_writes_nothing_and_names_the_longest_value_of_the_spec():
    name = "m" * 100_000
    raw = service({"model": {"name": name, "uri": "hf://x"}})
    routes = PhaseWrites(phase=Phase.ROUTES, writes=[route_write(name)] * 3)
    decision = plan_with(name).model_copy(update={"phases": [routes]})

    fitted = round_trip(payload_guard.fit_plan(decision, raw, NOW))

    assert fitted.outcome == Outcome.FAILED and not fitted.phases
    assert (fitted.uid, fitted.generation) == ("u1", 3)
    assert fitted.message is not None
    assert fitted.message.startswith("LLMInferenceService llm/opt is too large to handle: the plan of a ")
    assert fitted.message.endswith("its longest value is spec.model.name (100000 characters); shorten it")
    assert fitted.status is not None
    assert {(c["type"], c["status"], c["reason"]) for c in fitted.status["conditions"]} == {
        ("Ready", "False", TOO_LARGE),
        ("RouterReady", "False", TOO_LARGE),
    }
    assert fitted.conditions["RouterReady"].status == "False"


@pytest.mark.parametrize("levels", [DEPTH_BOUND + 1, 300, 600, 5_000])
def test_a_plan_nested_deeper_than_the_bound_is_told_not_left_to_fail_in_serialization(levels):
    """Pydantic's serializer refuses 255 levels and its parser about 200 (the workflow would fail to read
    the result); Python's recursion limit is 1,000: the guard measures without recursing."""
    raw = service({"model": {"lora": {"adapters": [{"name": "a", "extra": nested(levels)}]}}})

    fitted = round_trip(payload_guard.fit_plan(plan_with(nested(levels)), raw, NOW))

    assert fitted.message is not None and not fitted.phases
    # The plan, its phases, a phase, its writes, the write, the route, its spec and its hostnames wrap it.
    assert f"nested {levels + 8} levels deep, more than the {DEPTH_BOUND}" in fitted.message
    assert "its deepest value is spec.model.lora.adapters[0].….x.x.x.x" in fitted.message


def test_the_status_keeps_the_stored_routing_fields_and_the_other_controllers_conditions():
    stored = {
        "url": "http://203.0.113.10/llm/opt",
        "conditions": [
            {"type": "WorkloadsReady", "status": "True", "reason": "Ready"},
            {"type": "HTTPRoutesReady", "status": "True", "lastTransitionTime": "2026-11-30T00:00:00Z"},
        ],
    }
    raw = service({"model": {"name": "m" * 200_000}}, stored)

    fitted = payload_guard.fit_plan(plan_with("m" * 200_000), raw, NOW)

    assert fitted.status is not None and fitted.url == stored["url"]
    assert fitted.status["url"] == stored["url"]
    types = [c["type"] for c in fitted.status["conditions"]]
    assert types == ["HTTPRoutesReady", "Ready", "RouterReady"]  # WorkloadsReady is not the router's


def test_an_unchanged_too_large_status_is_not_written_again():
    raw = service({"model": {"name": "m" * 200_000}})
    first = payload_guard.fit_plan(plan_with("m" * 200_000), raw, NOW)
    assert first.status is not None
    raw["status"] = first.status

    again = payload_guard.fit_plan(plan_with("m" * 200_000), raw, "2026-12-01T06:10:00Z")

    assert again.status is None and again.message == first.message


def test_stored_routing_fields_over_the_bound_are_left_to_the_next_pass_that_fits():
    """A status written before the bound existed may itself be too large: only the conditions travel."""
    stored = {"addresses": [{"url": f"http://h/{'m' * 200_000}"}], "url": "http://h/x"}
    raw = service({"model": {"name": "m" * 200_000}}, stored)

    fitted = round_trip(payload_guard.fit_plan(plan_with("m" * 200_000), raw, NOW))

    assert fitted.status is not None and set(fitted.status) == {"conditions"} and fitted.url is None


def test_a_long_message_is_clipped_saying_how_much_was_left_out():
    assert payload_guard.clip("short") == "short"
    clipped = payload_guard.clip("e" * 10_000, 100)
    assert clipped == "e" * 100 + "… (9900 more characters)"


@pytest.mark.parametrize("status", [422, 500, 429, 409])
def test_an_api_message_quoting_a_large_value_is_clipped_in_the_failure_it_becomes(status):
    err = ApiError(status, 'HTTPRoute "r" is invalid: spec.hostnames[0]: Invalid value: "' + "m" * 100_000)
    failure = errors.stale_write(err) if status == 409 else errors.as_activity_error(err)
    assert len(failure.message) < payload_guard.MESSAGE_BOUND + 100
    assert failure.message.endswith(" more characters)")


def test_the_message_of_a_plan_is_clipped_as_it_travels_on_in_the_workflows_state():
    decision = Planned(message="e" * 50_000)
    fitted = payload_guard.fit_plan(decision, service({}), NOW)
    assert fitted.message == payload_guard.clip("e" * 50_000) and fitted.outcome == decision.outcome


def test_the_status_of_a_plan_too_large_does_not_change_with_what_else_the_pass_read():
    """The read digest (resourceVersions) varies from pass to pass: the message must not, or every
    Gateway status update would rewrite the service's status."""
    raw = service({"model": {"name": "m" * 200_000}})
    reads = [["Gateway kserve/kserve-ingress-gateway@1"], ["Gateway kserve/kserve-ingress-gateway@123456"]]
    messages = {
        payload_guard.fit_plan(plan_with("m" * 200_000).model_copy(update={"reads": r}), raw, NOW).message
        for r in reads
    }
    assert len(messages) == 1, messages


def test_a_too_large_status_answers_the_generation_it_was_planned_from():
    raw = service({"model": {"name": "m" * 200_000}}, {"observedGeneration": 2})
    raw["metadata"]["generation"] = 3

    fitted = round_trip(payload_guard.fit_plan(plan_with("m" * 200_000), raw, NOW))

    assert fitted.status is not None and fitted.status["observedGeneration"] == 3
