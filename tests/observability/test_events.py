"""Events are deduplicated as client-go's recorder does it: the same event again within the window bumps
the series of the one Event; a different note, or the window passed, makes a new Event. The recorder
writes as the worker's ServiceAccount to the real control plane, so the Event and its series patch are
the ones kube-apiserver's ``events.k8s.io/v1`` validation accepts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from activities.events import EVENT, SERIES_WINDOW, WARNING, EventRecorder, EventSpec
from activities.invalid_spec import invalid_spec_status
from activities.service_status import condition_events
from llmisvc_kube.client import CLIENT_RETRIES, KubeClusterApi
from tests.cluster import Cluster
from tests.integration.harness import TEST_AGENT, WATCHER_AGENT, WORKER_AGENT

T0 = datetime(2026, 1, 1, tzinfo=UTC)
BROKEN = EventSpec(WARNING, "InvalidSpec", "field spec.router.route: Input should be a valid dictionary")


def service(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": "opt", "namespace": namespace, "uid": "u-1"},
    }


@pytest.fixture
def recorder_as(cluster: Cluster) -> Iterator[Any]:
    """An EventRecorder writing as one of the product's ServiceAccounts (``worker``, ``watcher``)."""
    clients = []

    def recorder(role: str) -> EventRecorder:
        agent = {"worker": WORKER_AGENT, "watcher": WATCHER_AGENT}[role]
        clients.append(cluster.api_client(agent, role=role, retries=CLIENT_RETRIES))
        return EventRecorder(KubeClusterApi(clients[-1]), instance="test")

    yield recorder
    for client in clients:
        client.close()  # type: ignore[no-untyped-call]


def stored_events(cluster: Cluster) -> list[dict[str, Any]]:
    with cluster.api_client(TEST_AGENT) as api:
        return sorted(
            KubeClusterApi(api).list_objects(EVENT, cluster.namespace, {}),
            key=lambda e: (e["eventTime"], e["note"]),
        )


def test_the_same_event_within_the_window_bumps_the_series_instead_of_a_new_event(
    cluster: Cluster, recorder_as: Any
) -> None:
    recorder = recorder_as("worker")
    for minute in range(3):
        recorder.record(service(cluster.namespace), BROKEN, T0 + timedelta(minutes=minute))
    [event] = stored_events(cluster)
    assert (event["type"], event["reason"], event["reportingController"]) == (
        "Warning",
        "InvalidSpec",
        "llmisvc-router",
    )
    assert event["regarding"] == {"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceService",
                                  "namespace": cluster.namespace, "name": "opt", "uid": "u-1"}  # fmt: skip
    assert event["series"] == {"count": 3, "lastObservedTime": "2026-01-01T00:02:00.000000Z"}


def test_another_note_or_the_window_passed_makes_a_new_event(cluster: Cluster, recorder_as: Any) -> None:
    recorder = recorder_as("worker")
    svc = service(cluster.namespace)
    recorder.record(svc, BROKEN, T0)
    recorder.record(svc, EventSpec(WARNING, "InvalidSpec", "field spec.model: missing"), T0)
    recorder.record(svc, BROKEN, T0 + SERIES_WINDOW + timedelta(seconds=1))
    events = stored_events(cluster)
    assert len(events) == 3 and not any("series" in e for e in events)


def test_a_failed_event_write_never_fails_the_caller(cluster: Cluster, recorder_as: Any) -> None:
    """The watcher's ServiceAccount may not create Events: the 403 is logged, not raised."""
    recorder_as("watcher").record(service(cluster.namespace), BROKEN, T0)
    assert stored_events(cluster) == []
    assert cluster.counter.count(resource="events", code=403, user_agent=WATCHER_AGENT) == 1


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


def test_member_divergence_is_a_warning_event_when_group_degraded_turns_to_it_or_changes() -> None:
    """KServe ``applyGroupStatus`` (router_group_status.go, #5798): Warning ``MemberDivergence`` naming
    the group; here on a change of the condition, not on every pass."""

    def status(message: str | None) -> dict[str, Any]:
        conds = [{"type": "GroupReady", "status": "True"}]
        if message is not None:
            conds.append(
                {"type": "GroupDegraded", "status": "True", "reason": "MemberDivergence", "message": message}
            )
        return {"conditions": conds, "router": {"group": {"name": "llama"}}}

    note = 'Group "llama" has members with divergent model.name or LoRA adapter sets'
    assert [(e.type, e.reason, e.note) for e in condition_events(status(None), status("a"))] == [
        ("Warning", "MemberDivergence", note)
    ]
    assert [e.reason for e in condition_events(status("a"), status("a, b"))] == ["MemberDivergence"]
    assert condition_events(status("a"), status("a")) == []
    assert condition_events(status("a"), status(None)) == []


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
