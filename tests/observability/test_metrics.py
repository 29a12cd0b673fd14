"""Metrics: one Prometheus endpoint per process, served by the Temporal SDK runtime, carries the SDK's
metrics and the orchestrator's own (passes by outcome, pass duration, Kubernetes API requests by verb,
resource and code, services by RouterReady).

The process is assembled as ``llmisvc-router run`` assembles it: ``telemetry.start`` with a metrics port,
``connect_temporal`` on that runtime, ``run_worker`` over an instrumented ``KubeClusterApi`` and
``run_watcher``, against the API stand-in; the test scrapes ``/metrics`` over HTTP.
"""

from __future__ import annotations

import asyncio
import re
import socket
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

from tests.observability.harness import running_orchestrator, until
from watcher.service_gauge import STATES, router_ready
from worker import telemetry
from worker.settings import OrchestratorSettings, connect_temporal

#: Some of what the Temporal SDK reports once a worker has run a workflow task and activities.
SDK_METRICS = [
    "temporal_request",
    "temporal_workflow_task_execution_latency_count",
    "temporal_activity_execution_latency_count",
]
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})? (?P<value>\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Sample:
    name: str
    labels: Mapping[str, str]
    value: float


class Scrape:
    def __init__(self, text: str) -> None:
        self.samples = [_parse(line) for line in text.splitlines() if line and not line.startswith("#")]

    def names(self) -> set[str]:
        return {sample.name for sample in self.samples}

    def value(self, name: str, **labels: str) -> float | None:
        """The sum of the samples of ``name`` that have ``labels`` (None: there are none)."""
        found = [s.value for s in self.samples if s.name == name and labels.items() <= s.labels.items()]
        return sum(found) if found else None

    def labels(self, name: str) -> list[Mapping[str, str]]:
        return [sample.labels for sample in self.samples if sample.name == name]


async def test_one_endpoint_serves_the_sdk_metrics_and_the_orchestrators_own(temporal_address: str) -> None:
    port = _free_port()
    runtime = telemetry.start(OrchestratorSettings(metrics_port=port), metrics_host="127.0.0.1")
    assert runtime is not None
    client = await connect_temporal({"TEMPORAL_ADDRESS": temporal_address}, runtime)
    async with running_orchestrator(client, watcher=True) as orchestrator:
        state = await orchestrator.passes(1)
        assert state.last is not None
        outcome = state.last.outcome
        ready = router_ready(orchestrator.service())

        async def scraped() -> Scrape | None:
            scrape = await asyncio.to_thread(_scrape, port)
            # The watcher counts the service once it sees the status the pass wrote.
            return scrape if scrape.value("llmisvc_router_services", router_ready=ready) == 1 else None

        metrics = await until(scraped, f"llmisvc_router_services{{router_ready={ready!r}}} 1")

    assert set(SDK_METRICS) <= metrics.names()
    activity_runs = metrics.value(
        "temporal_activity_execution_latency_count", activity_type="reconcile_routes"
    )
    assert (activity_runs or 0) >= 1

    # The objects the first pass creates are events the watcher signals the service for: a second pass
    # may have run by now, so counts are "at least".
    passes = metrics.labels("llmisvc_router_passes")
    assert passes and all(set(labels) >= {"outcome", "workflow_type", "task_queue"} for labels in passes)
    task_queue = orchestrator.settings.task_queue
    assert (metrics.value("llmisvc_router_passes", outcome=outcome, task_queue=task_queue) or 0) >= 1
    durations = metrics.value("llmisvc_router_pass_duration_count", outcome=outcome)
    assert durations is not None and durations >= 1
    assert metrics.value("llmisvc_router_pass_duration_bucket", outcome=outcome, le="+Inf") == durations
    assert (metrics.value("llmisvc_router_pass_duration_sum", outcome=outcome) or 0) > 0  # milliseconds

    requests = "llmisvc_router_kube_requests"
    assert all(set(labels) >= {"verb", "resource", "code"} for labels in metrics.labels(requests))
    # Reads come from the worker's cache; the API is asked only for what no watch covers (the router's
    # own Service, outside the cache's label selector until it exists).
    assert metrics.value(requests, verb="GET", resource="llminferenceservices", code="200") is None
    assert (metrics.value(requests, verb="GET", resource="services", code="404") or 0) >= 1
    assert metrics.value(requests, verb="POST", resource="httproutes", code="201") == 1
    assert (metrics.value(requests, verb="PUT", resource="llminferenceservices/status", code="200") or 0) >= 1

    services = {state: metrics.value("llmisvc_router_services", router_ready=state) for state in STATES}
    assert services == {state: (1 if state == ready else 0) for state in STATES}


def _scrape(port: int) -> Scrape:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return Scrape(response.read().decode())


def _parse(line: str) -> Sample:
    match = _SAMPLE.match(line)
    assert match is not None, f"not a Prometheus sample: {line!r}"
    labels = dict(_LABEL.findall(match["labels"] or ""))
    return Sample(match["name"], labels, float(match["value"]))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
