"""``llmisvc_router_services``: the watcher's count of services by RouterReady follows its cache through
creation, status changes and deletion, and always reports every state (zeros included)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from temporalio.runtime import MetricBuffer, Runtime, TelemetryConfig

from llmisvc_core.models import kube
from llmisvc_watcher.model import ADDED, DELETED, MODIFIED, WatchEvent
from llmisvc_watcher.service_gauge import SERVICES_METRIC, ServiceGauge, router_ready
from tests import builders as b
from tests.builders import Wire


def service(name: str, router_ready: str | None = None, *, conditions: Any = None) -> Wire:
    status: Wire = {}
    if router_ready is not None:
        status["conditions"] = [
            {"type": "Ready", "status": "True"},
            {"type": "RouterReady", "status": router_ready},
        ]
    if conditions is not None:
        status["conditions"] = conditions
    return b.service(name, "llm", uid=None, generation=None, status=status)


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(service("a", "True"), "True", id="ready"),
        pytest.param(service("a", "False"), "False", id="not-ready"),
        pytest.param(service("a", "Unknown"), "Unknown", id="unknown-status"),
        pytest.param(service("a"), "Unknown", id="no-status-yet"),
        pytest.param(
            service("a", conditions=[{"type": "Ready", "status": "True"}]), "Unknown", id="no-condition"
        ),
        pytest.param(service("a", conditions="garbage"), "Unknown", id="malformed-conditions"),
        pytest.param(
            service("a", conditions=[{"type": "RouterReady", "status": "yes"}]), "Unknown", id="odd-value"
        ),
    ],
)
def test_router_ready_reads_the_condition_loosely(obj: Wire, expected: str) -> None:
    assert router_ready(obj) == expected


class Watcher:
    """The gauge, fed events as the watcher's consumer feeds them."""

    def __init__(self) -> None:
        self.buffer = MetricBuffer(1000)
        self.runtime = Runtime(telemetry=TelemetryConfig(metrics=self.buffer))
        self.gauge = ServiceGauge(self.runtime.metric_meter)
        self.counts: dict[str, float] = {}
        self._drain()

    def event(self, type_: str, obj: Wire, resource: kube.ResourceType = kube.LLMISVC) -> dict[str, float]:
        event = WatchEvent(type_, resource, obj)
        self.gauge.observe(event)
        self._drain()
        return dict(self.counts)

    def _drain(self) -> None:
        for update in self.buffer.retrieve_updates():
            if update.metric.name == SERVICES_METRIC:
                self.counts[str(update.attributes["router_ready"])] = update.value


@pytest.fixture
def watcher() -> Iterator[Watcher]:
    yield Watcher()


def test_every_state_is_reported_from_the_start(watcher: Watcher) -> None:
    assert watcher.counts == {"True": 0, "False": 0, "Unknown": 0}


def test_the_counts_follow_services_through_their_status_and_deletion(watcher: Watcher) -> None:
    assert watcher.event(ADDED, service("a")) == {"True": 0, "False": 0, "Unknown": 1}
    assert watcher.event(ADDED, service("b", "False")) == {"True": 0, "False": 1, "Unknown": 1}
    assert watcher.event(MODIFIED, service("a", "False")) == {"True": 0, "False": 2, "Unknown": 0}
    assert watcher.event(MODIFIED, service("a", "True")) == {"True": 1, "False": 1, "Unknown": 0}
    assert watcher.event(MODIFIED, service("a", "True")) == {"True": 1, "False": 1, "Unknown": 0}
    assert watcher.event(DELETED, service("b", "False")) == {"True": 1, "False": 0, "Unknown": 0}
    assert watcher.event(DELETED, service("a", "True")) == {"True": 0, "False": 0, "Unknown": 0}


def test_events_of_other_kinds_change_no_count(watcher: Watcher) -> None:
    watcher.event(ADDED, service("a", "True"))
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "a", "namespace": "llm"},
    }
    assert watcher.event(ADDED, route, kube.HTTPROUTE) == {"True": 1, "False": 0, "Unknown": 0}
