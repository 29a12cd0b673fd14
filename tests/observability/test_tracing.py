"""Tracing: a pass is one trace, from the watcher's signal through the pass and its activities down to the
Kubernetes API calls, with the service's namespace, name, generation and the outcome on the pass span.

The production pieces run as the processes run them: ``telemetry.install_tracer_provider`` (here with an
in-memory exporter instead of OTLP), ``connect_temporal`` (which adds the OpenTelemetry plugin),
``run_worker`` over ``KubeClusterApi`` and the real control plane, and the watcher's ``TemporalSignaller``.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from datetime import timedelta
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode, format_span_id, format_trace_id
from temporalio import activity, workflow
from temporalio.worker import Worker

from llmisvc_runtime import telemetry
from llmisvc_runtime.logs import JsonFormatter
from llmisvc_runtime.temporal import connect_temporal
from llmisvc_watcher.model import ServiceSignal
from llmisvc_watcher.signaller import SIGNAL_SPAN, TemporalSignaller
from tests.cluster import Cluster
from tests.observability.harness import Orchestrator, running_orchestrator
from workflows.drift_report import DRIFT_ATTRIBUTE
from workflows.pass_telemetry import PASS_SPAN
from workflows.starting import WorkflowStarter

#: The activities of a first pass, in order (``reconcile_scheduler`` creates the pool and the EPP Service).
FIRST_PASS = [
    "fetch_gateways",
    "reconcile_scheduler",
    "reconcile_routes",
    "evaluate_conditions",
]


@pytest.fixture(scope="module")
def spans() -> Iterator[InMemorySpanExporter]:
    """Every span the process ends, kept in memory (OpenTelemetry allows one global provider per process:
    later tests' spans still reach it, so each test picks its own by service)."""
    exporter = InMemorySpanExporter()
    telemetry.install_tracer_provider(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()  # stop collecting for the rest of the session


@asynccontextmanager
async def traced_orchestrator(
    temporal_address: str, cluster: Cluster, mode: str = "write"
) -> AsyncIterator[Orchestrator]:
    """The worker on a client made as the processes make theirs: with tracing on, it has the plugin."""
    client = await connect_temporal({"TEMPORAL_ADDRESS": temporal_address})
    assert "OpenTelemetryPlugin" in [plugin.name() for plugin in client.config()["plugins"]]
    async with running_orchestrator(client, cluster, mode=mode) as orchestrator:
        yield orchestrator


async def test_a_pass_is_one_trace_from_the_watchers_signal_to_the_kubernetes_calls(
    temporal_address: str, cluster: Cluster, spans: InMemorySpanExporter
) -> None:
    async with traced_orchestrator(temporal_address, cluster) as orchestrator:
        await _signal(orchestrator, start=True)
        await orchestrator.passes(1)

    tree = SpanTree(spans.get_finished_spans())
    signal = tree.one(SIGNAL_SPAN, orchestrator)
    the_pass = tree.one(PASS_SPAN, orchestrator)
    assert signal.kind == SpanKind.PRODUCER
    assert tree.path_to(the_pass) == [SIGNAL_SPAN, PASS_SPAN]
    expected = {
        "llmisvc.namespace": orchestrator.namespace,
        "llmisvc.name": orchestrator.name,
        "llmisvc.generation": 1,
        "llmisvc.outcome": "reconciled",
    }
    assert {key: _attributes(the_pass).get(key) for key in expected} == expected
    assert the_pass.status.status_code != StatusCode.ERROR

    activities = tree.children(the_pass)
    assert _names(activities) == [f"RunActivity:{name}" for name in FIRST_PASS]
    runs = dict(zip(FIRST_PASS, activities, strict=True))

    calls = {name: tree.children(run) for name, run in runs.items()}
    assert all(call.kind == SpanKind.CLIENT for spans in calls.values() for call in spans)
    # fetch_gateways reads from the worker's cache: it asks the API only for what no watch covers (the
    # router's own Service and the scheduler Deployment, not made yet, are outside the cache's label
    # selector until they exist).
    # And it makes the dry-run create of the merged spec, once for a new service (KServe #5918).
    assert set(_names(calls["fetch_gateways"])) == {
        "GET services",
        "GET deployments",
        "POST llminferenceservices",
    }
    first_get = next(call for call in calls["fetch_gateways"] if call.name.startswith("GET "))
    assert _attributes(first_get) == {
        "http.request.method": "GET",
        "k8s.resource": _attributes(first_get)["k8s.resource"],
        "k8s.namespace.name": orchestrator.namespace,
        "http.response.status_code": 404,
    }
    absent = [
        call for call in calls["fetch_gateways"] if _attributes(call)["http.response.status_code"] == 404
    ]
    assert absent, "the first pass looks for objects it has not made yet"
    assert all(call.status.status_code == StatusCode.UNSET for call in absent)  # an answer, not a failure
    assert "POST inferencepools" in _names(calls["reconcile_scheduler"])
    route = next(call for call in calls["reconcile_routes"] if call.name == "POST httproutes")
    assert _attributes(route)["http.response.status_code"] == 201
    status_calls = _names(calls["evaluate_conditions"])
    assert status_calls[:1] == ["PUT llminferenceservices/status"]
    assert set(status_calls[1:]) <= {"POST events"}  # the Event for the RouterReady condition it set


async def test_a_shadow_pass_carries_its_drift_and_makes_no_write_call(
    temporal_address: str, cluster: Cluster, spans: InMemorySpanExporter
) -> None:
    async with traced_orchestrator(temporal_address, cluster, mode="shadow") as orchestrator:
        await _signal(orchestrator, start=True)
        await orchestrator.passes(1)

    tree = SpanTree(spans.get_finished_spans())
    the_pass = tree.one(PASS_SPAN, orchestrator)
    # Nothing exists yet: the route, two pools and the EPP Service would be created, and the status set.
    assert _attributes(the_pass)[DRIFT_ATTRIBUTE] == 5
    [fetch] = tree.children(the_pass)
    assert fetch.name == "RunActivity:fetch_gateways"
    assert {call.name.split()[0] for call in tree.children(fetch)} == {"GET"}


async def test_each_pass_is_a_trace_of_its_own_continuing_the_signal_that_asked_for_it(
    temporal_address: str, cluster: Cluster, spans: InMemorySpanExporter
) -> None:
    async with traced_orchestrator(temporal_address, cluster) as orchestrator:
        await _signal(orchestrator, start=True)
        await orchestrator.passes(1)
        await _signal(orchestrator, start=False)
        await orchestrator.passes(2)

    tree = SpanTree(spans.get_finished_spans())
    signals = tree.all(SIGNAL_SPAN, orchestrator)
    passes = tree.all(PASS_SPAN, orchestrator)
    assert len(signals) == len(passes) == 2
    assert [_trace(p) for p in passes] == [_trace(s) for s in signals]
    assert _trace(passes[0]) != _trace(passes[1])
    assert tree.path_to(passes[1]) == [SIGNAL_SPAN, PASS_SPAN]
    assert _attributes(passes[1])["llmisvc.outcome"] == "reconciled"


async def test_json_log_lines_of_a_pass_carry_the_pass_spans_trace_and_span_ids(
    temporal_address: str, cluster: Cluster, spans: InMemorySpanExporter
) -> None:
    with json_lines("temporalio.workflow") as lines:
        async with traced_orchestrator(temporal_address, cluster) as orchestrator:
            await _signal(orchestrator, start=True)
            await orchestrator.passes(1)

    the_pass = SpanTree(spans.get_finished_spans()).one(PASS_SPAN, orchestrator)
    service = f"{orchestrator.namespace}/{orchestrator.name}"
    [line] = [line for line in lines if line["message"].startswith(f"{service}: reconciled")]
    assert (line["trace_id"], line["span_id"]) == _ids(the_pass)
    assert line["temporal_workflow"]["workflow_id"].endswith(service)


@activity.defn(name="LogOneLine")
def log_one_line() -> None:
    activity.logger.info("a line from an activity")


@workflow.defn(name="LogsFromAnActivity", sandboxed=False)
class LogsFromAnActivity:
    @workflow.run
    async def run(self) -> None:
        workflow.logger.info("a line from a workflow outside any pass")
        await workflow.execute_activity(log_one_line, start_to_close_timeout=timedelta(seconds=30))


async def test_json_log_lines_of_an_activity_carry_its_run_activity_span_and_none_outside_a_span(
    temporal_address: str, spans: InMemorySpanExporter
) -> None:
    client = await connect_temporal({"TEMPORAL_ADDRESS": temporal_address})
    task_queue = f"log-ids-{uuid.uuid4().hex[:8]}"
    with (
        json_lines("temporalio.activity", "temporalio.workflow") as lines,
        ThreadPoolExecutor(1) as threads,  # a sync activity, as ours are: it runs in a copy of the context
    ):
        async with Worker(
            client,
            task_queue=task_queue,
            workflows=[LogsFromAnActivity],
            activities=[log_one_line],
            activity_executor=threads,
        ):
            await client.execute_workflow(LogsFromAnActivity.run, id=task_queue, task_queue=task_queue)

    [run] = [
        span
        for span in spans.get_finished_spans()
        if span.name == "RunActivity:LogOneLine" and _attributes(span)["temporalWorkflowID"] == task_queue
    ]
    [in_activity] = [line for line in lines if line["message"].startswith("a line from an activity")]
    assert (in_activity["trace_id"], in_activity["span_id"]) == _ids(run)
    [in_workflow] = [line for line in lines if line["message"].startswith("a line from a workflow")]
    assert "trace_id" not in in_workflow and "span_id" not in in_workflow


# -- helpers -----------------------------------------------------------------------------------------


async def _signal(orchestrator: Orchestrator, start: bool) -> None:
    """What the watcher does when it sees the service (``start``) or something it uses change."""
    settings = orchestrator.settings
    starter = await WorkflowStarter.create(orchestrator.client, settings.task_queue, settings.resync_seconds)
    namespace, name = orchestrator.namespace, orchestrator.name
    reason = f"LLMInferenceService {namespace}/{name} {'found' if start else 'used'}"
    await TemporalSignaller(starter).send(ServiceSignal(namespace, name, reason, start))


class SpanTree:
    """The finished spans, navigable by parent (children in the order they started)."""

    def __init__(self, spans: Sequence[ReadableSpan]) -> None:
        self.spans = sorted(spans, key=lambda span: span.start_time or 0)
        self._by_id = {span.context.span_id: span for span in self.spans if span.context is not None}

    def all(self, name: str, orchestrator: Orchestrator) -> list[ReadableSpan]:
        """The spans called ``name`` about the orchestrator's service."""
        return [
            span
            for span in self.spans
            if span.name == name
            and _attributes(span).get("llmisvc.namespace") == orchestrator.namespace
            and _attributes(span).get("llmisvc.name") == orchestrator.name
        ]

    def one(self, name: str, orchestrator: Orchestrator) -> ReadableSpan:
        found = self.all(name, orchestrator)
        assert len(found) == 1, f"{len(found)} spans {name!r}"
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        assert parent.context is not None
        return [span for span in self.spans if span.parent and span.parent.span_id == parent.context.span_id]

    def path_to(self, span: ReadableSpan) -> list[str]:
        """The names from the trace's root down to ``span`` (every ancestor must have been exported)."""
        path = [span.name]
        while span.parent is not None:
            parent = self._by_id.get(span.parent.span_id)
            assert parent is not None, f"the parent of {span.name!r} was not exported"
            path.insert(0, parent.name)
            span = parent
        return path


@contextmanager
def json_lines(*loggers: str) -> Iterator[list[dict[str, Any]]]:
    """The JSON lines the process's formatter makes of these loggers' info records, formatted as they are
    logged (as the process's stream handler does, in the thread and context that logs)."""
    lines: list[dict[str, Any]] = []
    formatter = JsonFormatter(tracebacks=False)

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(json.loads(formatter.format(record)))

    handler = Collect()
    levels = {name: logging.getLogger(name).level for name in loggers}
    for name in loggers:
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.INFO)
    try:
        yield lines
    finally:
        for name, level in levels.items():
            logging.getLogger(name).removeHandler(handler)
            logging.getLogger(name).setLevel(level)


def _ids(span: ReadableSpan) -> tuple[str, str]:
    assert span.context is not None
    return format_trace_id(span.context.trace_id), format_span_id(span.context.span_id)


def _attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _names(spans: list[ReadableSpan]) -> list[str]:
    return [span.name for span in spans]


def _trace(span: ReadableSpan) -> int:
    assert span.context is not None
    return int(span.context.trace_id)
