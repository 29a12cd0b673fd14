"""OTLP export with real receivers: the spans of a process set up as the worker sets itself up
(``OrchestratorSettings.from_env`` then ``telemetry.start``, what ``llmisvc_runtime.process.connect_process``
runs) reach an OTLP collector over gRPC and over HTTP/protobuf, as ``OTEL_EXPORTER_OTLP_PROTOCOL`` says; the
shipped settings (deploy/base/settings.env) trace once an endpoint is added and export nothing without.

The receivers are small in-test servers, one the collector's gRPC ``TraceService``, one an HTTP handler of
``POST /v1/traces``, both decoding the protobuf request. Each process runs in a subprocess: OpenTelemetry
allows one global tracer provider per process, and this session's is the in-memory one of test_tracing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

ROOT = Path(__file__).parents[2]
SETTINGS_ENV = ROOT / "deploy/base/settings.env"
PROBE_SPAN = "otlp-export-probe"
#: What the worker's start-up does about tracing, then one span, flushed; it prints what it installed.
PROCESS = f"""
import sys
from opentelemetry import trace
from llmisvc_runtime import telemetry
from llmisvc_runtime.settings import OrchestratorSettings

settings = OrchestratorSettings.from_env()
telemetry.start(settings)
with trace.get_tracer("test").start_as_current_span({PROBE_SPAN!r}):
    pass
provider = trace.get_tracer_provider()
if hasattr(provider, "force_flush"):
    provider.force_flush()
exporters = sorted(m for m in sys.modules if m.startswith("opentelemetry.exporter.otlp.proto."))
print(type(provider).__name__, len(telemetry.client_plugins()), *exporters)
"""


class Received:
    """The export requests a receiver got, as (service.name, span names) per resource."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, list[str]]] = []
        self._lock = threading.Lock()

    def add(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        for resource_spans in request.resource_spans:
            service = next(
                (a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"),
                "",
            )
            names = [span.name for scope in resource_spans.scope_spans for span in scope.spans]
            with self._lock:
                self.spans.append((service, names))


@contextmanager
def grpc_receiver() -> Iterator[tuple[str, Received]]:
    received = Received()

    class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request: Any, context: Any) -> trace_service_pb2.ExportTraceServiceResponse:
            received.add(request)
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(TraceService(), server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"http://127.0.0.1:{port}", received
    finally:
        server.stop(grace=None)


@contextmanager
def http_receiver() -> Iterator[tuple[str, Received]]:
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.path != "/v1/traces" or self.headers["Content-Type"] != "application/x-protobuf":
                self.send_error(404)
                return
            received.add(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
            reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


RECEIVERS = {"grpc": grpc_receiver, "http/protobuf": http_receiver}


def run_process(env: dict[str, str]) -> list[str]:
    """The process's report: its tracer provider, its client plugins and the OTLP modules it loaded."""
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "LLMISVC_ROUTER_", "TEMPORAL_"))
    }
    done = subprocess.run(
        [sys.executable, "-c", PROCESS],
        env={**base, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def shipped_settings() -> dict[str, str]:
    """deploy/base/settings.env as the ConfigMap hands it to the pods (KEY=VALUE lines, comments aside)."""
    lines = SETTINGS_ENV.read_text().splitlines()
    pairs = (line.partition("=") for line in lines if line.strip() and not line.startswith("#"))
    return {key: value for key, _, value in pairs}


@pytest.mark.parametrize(
    ("variable", "protocol"),
    [
        pytest.param("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", id="grpc"),
        pytest.param("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", id="http-protobuf"),
        pytest.param("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", id="traces-protocol-grpc"),
    ],
)
def test_spans_reach_a_collector_over_the_protocol_the_variable_names(variable: str, protocol: str) -> None:
    with RECEIVERS[protocol]() as (endpoint, received):
        report = run_process({"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, variable: protocol})
    assert report[:2] == ["ReplaySafeTracerProvider", "2"]  # the OpenTelemetry plugin and activity spans
    assert received.spans == [("llmisvc-router", [PROBE_SPAN])]


def test_the_traces_protocol_wins_over_the_general_one() -> None:
    with grpc_receiver() as (endpoint, received):
        run_process(
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
            }
        )
    assert received.spans == [("llmisvc-router", [PROBE_SPAN])]


def test_the_shipped_settings_trace_once_an_endpoint_is_set() -> None:
    with http_receiver() as (endpoint, received):
        report = run_process({**shipped_settings(), "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})
    assert report[0] == "ReplaySafeTracerProvider"
    assert received.spans == [(shipped_settings()["OTEL_SERVICE_NAME"], [PROBE_SPAN])]


def test_the_shipped_settings_alone_export_nothing_and_make_no_exporter() -> None:
    """No endpoint: no tracer provider of ours, no plugin, and no OTLP exporter loaded to connect anywhere."""
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in shipped_settings()
    report = run_process(shipped_settings())
    assert report == ["ProxyTracerProvider", "0"]
