"""Events are deduplicated as client-go's recorder does it: the same event again within the window bumps
the series of the one Event; a different note, or the window passed, makes a new Event."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from activities.cluster_api import ApiError
from activities.events import SERIES_WINDOW, WARNING, EventRecorder, EventSpec
from activities.service_status import condition_events, invalid_spec_status
from tests.workflows.fake_cluster import FakeCluster

SERVICE = {
    "apiVersion": "serving.kserve.io/v1alpha2",
    "kind": "LLMInferenceService",
    "metadata": {"name": "opt", "namespace": "llm", "uid": "u-1"},
}
T0 = datetime(2026, 1, 1, tzinfo=UTC)
BROKEN = EventSpec(WARNING, "InvalidSpec", "field spec.router.route: Input should be a valid dictionary")


def test_the_same_event_within_the_window_bumps_the_series_instead_of_a_new_event() -> None:
    cluster = FakeCluster()
    recorder = EventRecorder(cluster, instance="test")
    for minute in range(3):
        recorder.record(SERVICE, BROKEN, T0 + timedelta(minutes=minute))
    assert len(cluster.events) == 1
    event = cluster.events[0]
    assert (event["type"], event["reason"], event["reportingController"]) == (
        "Warning",
        "InvalidSpec",
        "llmisvc-router",
    )
    assert event["regarding"] == {"apiVersion": SERVICE["apiVersion"], "kind": "LLMInferenceService",
                                  "namespace": "llm", "name": "opt", "uid": "u-1"}  # fmt: skip
    assert event["series"] == {"count": 3, "lastObservedTime": "2026-01-01T00:02:00.000000Z"}


def test_another_note_or_the_window_passed_makes_a_new_event() -> None:
    cluster = FakeCluster()
    recorder = EventRecorder(cluster, instance="test")
    recorder.record(SERVICE, BROKEN, T0)
    recorder.record(SERVICE, EventSpec(WARNING, "InvalidSpec", "field spec.model: missing"), T0)
    recorder.record(SERVICE, BROKEN, T0 + SERIES_WINDOW + timedelta(seconds=1))
    assert len(cluster.events) == 3 and not any("series" in e for e in cluster.events)


def test_a_failed_event_write_never_fails_the_caller() -> None:
    class Refusing(FakeCluster):
        def create(self, type_, body):
            raise ApiError(403, "events.events.k8s.io is forbidden")

    EventRecorder(Refusing(), instance="test").record(SERVICE, BROKEN, T0)


def test_router_ready_changes_make_events_and_an_unchanged_status_makes_none() -> None:
    def status(state: str, reason: str = "", message: str = "") -> dict[str, Any]:
        cond = {"type": "RouterReady", "status": state, "reason": reason, "message": message}
        return {"conditions": [cond], "url": "http://gw/llm/opt"}

    assert [(e.type, e.reason) for e in condition_events({}, status("True"))] == [("Normal", "RouterReady")]
    down = condition_events(
        status("True"), status("False", "GatewayNotReady", "gateway kserve/gw is not ready")
    )
    assert [(e.type, e.reason, e.note) for e in down] == [
        ("Warning", "GatewayNotReady", "gateway kserve/gw is not ready")
    ]
    assert condition_events(status("True"), status("True")) == []


def test_an_unreadable_spec_keeps_other_controllers_conditions_and_its_transition_time() -> None:
    stored = {"conditions": [{"type": "WorkloadsReady", "status": "True"}]}
    first = invalid_spec_status(stored, "field spec.router.route: bad", T0)
    by_type = {c["type"]: c for c in first["conditions"]}
    assert by_type["WorkloadsReady"]["status"] == "True"
    assert by_type["Ready"]["reason"] == by_type["RouterReady"]["reason"] == "InvalidSpec"
    again = invalid_spec_status(first, "field spec.router.route: bad", T0 + timedelta(minutes=5))
    assert again == first  # nothing to write on a re-check


def test_an_unreadable_spec_status_answers_the_generation_it_was_read_at() -> None:
    stored = {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]}
    status = invalid_spec_status(stored, "field spec.model.lora.adapters: bad", T0, generation=2)
    assert status["observedGeneration"] == 2
