"""Metrics: one Prometheus endpoint per process, served by the Temporal SDK runtime, carries the SDK's
metrics and the orchestrator's own (passes by outcome, pass duration, Kubernetes API requests by verb,
resource and code, services by RouterReady).

The process is assembled as ``llmisvc-router run`` assembles it: ``telemetry.start`` with a metrics port,
``connect_temporal`` on that runtime, ``run_worker`` over an instrumented ``KubeClusterApi`` and
``run_watcher``, against the real control plane; the test scrapes ``/metrics`` over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest_asyncio
from temporalio.client import Client

from llmisvc_runtime import telemetry
from llmisvc_runtime.settings import OrchestratorSettings
from llmisvc_runtime.temporal import connect_temporal
from llmisvc_watcher.service_gauge import STATES, router_ready
from tests.cluster import Cluster, Plane
from tests.cluster import test_cluster as cluster_on
from tests.deploy.chart import alert_rules
from tests.observability import dashboard
from tests.observability.failing_task import FAILED_TASKS, failing_workflow_task
from tests.observability.harness import running_orchestrator, until

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "llmisvc-router.json"
#: Some of what the Temporal SDK reports once a worker has run a workflow task and activities.
SDK_METRICS = [
    "temporal_request_total",
    "temporal_workflow_task_execution_latency_seconds_count",
    "temporal_activity_execution_latency_seconds_count",
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
        self.help = dict(line.split(" ", 3)[2:4] for line in text.splitlines() if line.startswith("# HELP "))

    def names(self) -> set[str]:
        return {sample.name for sample in self.samples}

    def value(self, name: str, **labels: str) -> float | None:
        """The sum of the samples of ``name`` that have ``labels`` (None: there are none)."""
        found = [s.value for s in self.samples if s.name == name and labels.items() <= s.labels.items()]
        return sum(found) if found else None

    def labels(self, name: str) -> list[Mapping[str, str]]:
        return [sample.labels for sample in self.samples if sample.name == name]


@dataclass(frozen=True)
class Scraped:
    """One scrape of a running orchestrator, after its first pass."""

    metrics: Scrape
    outcome: str
    ready: str
    task_queue: str


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def scraped(temporal_address: str, plane: Plane) -> Scraped:
    client, port = await metered_client(temporal_address)
    with cluster_on(plane) as cluster:
        async with running_orchestrator(client, cluster, watcher=True) as orchestrator:
            state = await orchestrator.passes(1)
            assert state.last is not None
            outcome = state.last.outcome
            ready = router_ready(orchestrator.service())

            async def probe() -> Scrape | None:
                scrape = await asyncio.to_thread(_scrape, port)
                # The watcher counts the service once it sees the status the pass wrote.
                return scrape if scrape.value("llmisvc_router_services", router_ready=ready) == 1 else None

            await until(probe, f"llmisvc_router_services{{router_ready={ready!r}}} 1")

            async def failed_task() -> Scrape | None:
                scrape = await asyncio.to_thread(_scrape, port)
                return scrape if scrape.value(FAILED_TASKS, workflow_type="AlwaysFailingTask") else None

            # A workflow task failing in the same process puts the SDK's failure counter on the endpoint.
            async with failing_workflow_task(client):
                metrics = await until(failed_task, f"{FAILED_TASKS} of AlwaysFailingTask")
    return Scraped(metrics, outcome, ready, orchestrator.settings.task_queue)


async def test_one_endpoint_serves_the_sdk_metrics_and_the_orchestrators_own(scraped: Scraped) -> None:
    metrics, outcome, ready = scraped.metrics, scraped.outcome, scraped.ready
    assert set(SDK_METRICS) <= metrics.names()
    activity_runs = metrics.value(
        "temporal_activity_execution_latency_seconds_count", activity_type="reconcile_routes"
    )
    assert (activity_runs or 0) >= 1

    # The objects the first pass creates are events the watcher signals the service for: a second pass
    # may have run by now, so counts are "at least".
    passes = metrics.labels("llmisvc_router_passes_total")
    assert passes and all(set(labels) >= {"outcome", "workflow_type", "task_queue"} for labels in passes)
    task_queue = scraped.task_queue
    assert (metrics.value("llmisvc_router_passes_total", outcome=outcome, task_queue=task_queue) or 0) >= 1
    duration = "llmisvc_router_pass_duration_seconds"
    durations = metrics.value(f"{duration}_count", outcome=outcome)
    assert durations is not None and durations >= 1
    assert metrics.value(f"{duration}_bucket", outcome=outcome, le="+Inf") == durations
    pass_seconds = (metrics.value(f"{duration}_sum", outcome=outcome) or 0) / durations
    assert 0 < pass_seconds < 30  # seconds: a pass takes well under that

    requests = "llmisvc_router_kube_requests_total"
    assert all(set(labels) >= {"verb", "resource", "code"} for labels in metrics.labels(requests))
    # Reads come from the worker's cache; the API is asked only for what no watch covers (the router's
    # own Service, outside the cache's label selector until it exists).
    # The service is read live only to merge a status write again after a conflict (RetryOnConflict).
    gets = metrics.value(requests, verb="GET", resource="llminferenceservices", code="200") or 0
    conflicts = metrics.value(requests, verb="PUT", resource="llminferenceservices/status", code="409") or 0
    assert gets <= conflicts
    assert (metrics.value(requests, verb="GET", resource="services", code="404") or 0) >= 1
    assert metrics.value(requests, verb="POST", resource="httproutes", code="201") == 1
    assert (metrics.value(requests, verb="PUT", resource="llminferenceservices/status", code="200") or 0) >= 1

    services = {state: metrics.value("llmisvc_router_services", router_ready=state) for state in STATES}
    assert services == {state: (1 if state == ready else 0) for state in STATES}


async def test_a_shadow_worker_exports_each_services_drift_as_a_gauge(
    temporal_address: str, cluster: Cluster
) -> None:
    client, port = await metered_client(temporal_address)
    async with running_orchestrator(client, cluster, watcher=True, mode="shadow") as orchestrator:
        await orchestrator.passes(1)
        labels = {"llmisvc_namespace": orchestrator.namespace, "llmisvc_name": orchestrator.name}

        async def probe() -> Scrape | None:
            scrape = await asyncio.to_thread(_scrape, port)
            return scrape if scrape.value("llmisvc_router_drift_objects", **labels) is not None else None

        metrics = await until(probe, "llmisvc_router_drift_objects")
    # The route, two pools and the EPP Service to create, and the status to set; nothing written.
    assert metrics.value("llmisvc_router_drift_objects", **labels) == 5
    assert metrics.value("llmisvc_router_kube_requests_total", verb="POST") is None
    assert metrics.value("llmisvc_router_kube_requests_total", verb="PUT") is None


def test_counters_end_in_total_and_durations_are_seconds_with_the_unit_in_their_help(
    scraped: Scraped,
) -> None:
    metrics = scraped.metrics
    ours = {name for name in metrics.names() if name.startswith("llmisvc_router_")}
    assert not {"llmisvc_router_passes", "llmisvc_router_kube_requests"} & ours
    assert "llmisvc_router_pass_duration_seconds_count" in ours
    assert "seconds" in metrics.help["llmisvc_router_pass_duration_seconds"]
    assert not {n for n in metrics.names() if "latency" in n and "seconds" not in n}


def test_every_series_carries_this_services_name_not_the_sdks(scraped: Scraped) -> None:
    assert {sample.labels.get("service_name") for sample in scraped.metrics.samples} == {"llmisvc-router"}


def test_a_failing_workflow_task_is_counted_by_the_metric_the_dashboard_shows_by_workflow_type(
    scraped: Scraped,
) -> None:
    failed = scraped.metrics.labels(FAILED_TASKS)
    assert all({"workflow_type", "failure_reason", "task_queue"} <= set(labels) for labels in failed), failed
    assert (scraped.metrics.value(FAILED_TASKS, workflow_type="AlwaysFailingTask") or 0) >= 1
    assert not scraped.metrics.value(FAILED_TASKS, workflow_type="LLMInferenceServiceWorkflow"), failed
    exprs = dashboard.queries(json.loads(DASHBOARD.read_text()))
    assert any(FAILED_TASKS in expr and "workflow_type" in expr for expr in exprs)


def test_every_query_of_the_grafana_dashboard_names_a_metric_the_process_exports(scraped: Scraped) -> None:
    exported = scraped.metrics.names()
    queries = dashboard.queries(json.loads(DASHBOARD.read_text()))
    assert len(queries) >= 6
    for query in queries:
        named = dashboard.metric_names(query)
        assert named, f"no metric in {query!r}"
        assert named <= exported, (
            f"{query!r} names {sorted(named - exported)}, which the process does not export"
        )


def test_every_alert_of_the_helm_chart_names_a_metric_the_process_exports(scraped: Scraped) -> None:
    """The PrometheusRule of deploy/chart/llmisvc-router, rendered by the pinned Helm, against a real scrape
    (one that has seen a workflow task fail)."""
    exported = scraped.metrics.names()
    rules = alert_rules()
    assert len(rules) >= 4
    for rule in rules:
        named = dashboard.metric_names(rule["expr"])
        assert named, f"no metric in {rule['alert']}: {rule['expr']!r}"
        assert named <= exported, (
            f"{rule['alert']} names {sorted(named - exported)}, which the process does not export"
        )


def _scrape(port: int) -> Scrape:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return Scrape(response.read().decode())


def _parse(line: str) -> Sample:
    match = _SAMPLE.match(line)
    assert match is not None, f"not a Prometheus sample: {line!r}"
    labels = dict(_LABEL.findall(match["labels"] or ""))
    return Sample(match["name"], labels, float(match["value"]))


async def metered_client(temporal_address: str) -> tuple[Client, int]:
    """A Temporal client whose runtime serves its metrics on 127.0.0.1:<port>, and that port."""
    port = _free_port()
    runtime = telemetry.start(OrchestratorSettings(metrics_port=port), metrics_host="127.0.0.1")
    assert runtime is not None
    return await connect_temporal({"TEMPORAL_ADDRESS": temporal_address}, runtime), port


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
