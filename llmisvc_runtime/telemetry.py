"""Telemetry of the worker and watcher processes: OpenTelemetry traces and one Prometheus endpoint.

Traces go through the Temporal SDK's OpenTelemetry plugin, put on the Temporal client (the workers it
runs inherit it): it carries the trace context in the headers of every start, signal, update and
activity. Its own spans stay off (``add_temporal_spans=False``): they would add a span per query and a
workflow-long ``RunWorkflow`` span that is only exported when the service is deleted (and that logs an
error each time a worker evicts a running workflow). The spans are ours instead: the watcher's signal,
the pass (``workflows.pass_telemetry``), one per activity attempt (``RunActivity:NAME``, from the
interceptor below) and one per Kubernetes API call (``llmisvc_kube.telemetry``). The tracer provider
is the SDK's replay-safe one: spans made by workflow code get deterministic ids and are not emitted
again when a workflow is replayed. Which exporters run comes from
``OTEL_TRACES_EXPORTER`` (read by ``llmisvc_runtime.settings``: ``otlp`` by default
once an OTLP endpoint is set, nothing otherwise), OTLP's transport from ``OTEL_EXPORTER_OTLP_PROTOCOL``
(or ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``): ``http/protobuf`` (the default) or ``grpc``. The exporter
reads the other ``OTEL_EXPORTER_OTLP_*`` variables itself (endpoint, headers, timeout, compression,
certificates), and the resource comes from ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``.

Metrics: the Temporal SDK runtime serves Prometheus on ``LLMISVC_ROUTER_METRICS_PORT``. Our own
metrics are recorded through that runtime's meter (or a workflow's, which is derived from it), so one
endpoint carries the SDK's metrics and ours, named by Prometheus's conventions (``_total`` counters,
``_seconds`` durations) and labelled with this process's ``service_name``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import SpanKind
from opentelemetry.util.types import AttributeValue
from temporalio import activity
from temporalio.client import Client, Plugin
from temporalio.common import MetricMeter
from temporalio.contrib.opentelemetry import (
    OpenTelemetryPlugin,
    ReplaySafeTracerProvider,
    create_tracer_provider,
)
from temporalio.plugin import SimplePlugin
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from llmisvc_runtime import exit_codes
from llmisvc_runtime.errors import StartupError

DEFAULT_SERVICE_NAME = "llmisvc-router"
OtlpProtocol = Literal["grpc", "http/protobuf"]
_tracer = trace.get_tracer(__name__)
ALL_INTERFACES = "0.0.0.0"  # a pod's metrics port is scraped from outside the pod


class TelemetryError(StartupError):
    """Telemetry could not start (the metrics port is taken, say); the message says what to change."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_codes.UNAVAILABLE)


class TelemetrySettings(Protocol):
    """What telemetry reads of a process's settings (``llmisvc_runtime.settings.OrchestratorSettings``)."""

    @property
    def trace_exporters(self) -> Sequence[str]: ...

    @property
    def otlp_protocol(self) -> OtlpProtocol: ...

    @property
    def metrics_port(self) -> int | None: ...


def start(
    settings: TelemetrySettings,
    metrics_host: str = ALL_INTERFACES,
    metrics_source: str = "LLMISVC_ROUTER_METRICS_PORT",
) -> Runtime | None:
    """Install tracing as configured and return the runtime that serves the metrics (None: no endpoint;
    the client then uses the SDK's default runtime). Call once per process, before connecting.
    ``metrics_source`` names the setting that chose the port, for the error when it is taken."""
    install_tracing(settings.trace_exporters, settings.otlp_protocol)
    return metrics_runtime(settings.metrics_port, metrics_host, metrics_source)


# -- traces ------------------------------------------------------------------------------------------


def install_tracing(exporters: Sequence[str], protocol: OtlpProtocol = "http/protobuf") -> bool:
    """Export spans to ``exporters`` (``otlp``, over ``protocol``; ``console``); False, and nothing
    installed (no exporter made, no connection tried), for none."""
    processors: list[SpanProcessor] = [BatchSpanProcessor(_exporter(name, protocol)) for name in exporters]
    if not processors:
        return False
    install_tracer_provider(*processors, resource=_resource())
    return True


def install_tracer_provider(
    *processors: SpanProcessor, resource: Resource | None = None
) -> ReplaySafeTracerProvider:
    """The process's replay-safe tracer provider with ``processors`` added: created and made global the
    first time (OpenTelemetry allows one global provider per process), reused afterwards."""
    current = trace.get_tracer_provider()
    if isinstance(current, ReplaySafeTracerProvider):
        provider = current
    else:
        provider = create_tracer_provider(resource=resource)
        trace.set_tracer_provider(provider)
    for processor in processors:
        provider.add_span_processor(processor)
    return provider


def client_plugins() -> list[Plugin]:
    """The Temporal client's plugins: when tracing is on, the OpenTelemetry plugin (context propagation)
    and the activity spans; else none.

    Tracing is on once a replay-safe tracer provider is the global one (``install_tracing``, or a test
    that installed its own); the OpenTelemetry plugin refuses to run workflows with any other provider.
    The activity spans come second, so they nest in the context the first one takes from the headers."""
    if isinstance(trace.get_tracer_provider(), ReplaySafeTracerProvider):
        activity_spans = SimplePlugin("llmisvc-router.ActivitySpans", interceptors=[_ActivitySpans()])
        return [OpenTelemetryPlugin(add_temporal_spans=False), activity_spans]
    return []


class _ActivitySpans(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _ActivitySpan(next)


class _ActivitySpan(ActivityInboundInterceptor):
    """``RunActivity:NAME`` around each attempt; the SDK runs sync activities in a copy of this context,
    so the Kubernetes calls they make nest in it."""

    async def execute_activity(self, input: ExecuteActivityInput) -> object:
        info = activity.info()
        attributes: dict[str, AttributeValue] = {
            "temporalWorkflowID": info.workflow_id or "",
            "temporalRunID": info.workflow_run_id or "",
            "temporalActivityID": info.activity_id,
            "temporalActivityAttempt": info.attempt,
        }
        with _tracer.start_as_current_span(
            f"RunActivity:{info.activity_type}", kind=SpanKind.SERVER, attributes=attributes
        ):
            return await super().execute_activity(input)


def _exporter(name: str, protocol: OtlpProtocol) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter()
    # Imported on demand: the OTLP exporters pull in protobuf and requests or grpcio, which most commands
    # never use. Each reads its endpoint, headers, timeout, compression from OTEL_EXPORTER_OTLP_*.
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        return GrpcExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

    return HttpExporter()


def _resource() -> Resource:
    """``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES``, with this program's name as the default."""
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    return resource


# -- metrics -----------------------------------------------------------------------------------------


def metrics_runtime(
    port: int | None, host: str = ALL_INTERFACES, source: str = "LLMISVC_ROUTER_METRICS_PORT"
) -> Runtime | None:
    """A Temporal runtime serving Prometheus metrics on ``http://host:port/metrics`` (None for no port)."""
    if port is None:
        return None
    address = f"{host}:{port}"
    # Prometheus's conventions: counters end in _total, durations are in seconds and say so in their
    # name; every series carries this process's service_name (OTEL_SERVICE_NAME), not the SDK's.
    prometheus = PrometheusConfig(
        bind_address=address, counters_total_suffix=True, unit_suffix=True, durations_as_seconds=True
    )
    service = str(_resource().attributes.get(SERVICE_NAME, DEFAULT_SERVICE_NAME))
    config = TelemetryConfig(
        metrics=prometheus, attach_service_name=False, global_tags={"service_name": service}
    )
    try:
        return Runtime(telemetry=config)
    except ValueError as err:  # the SDK reports a port in use or a bad address this way
        raise TelemetryError(
            f"cannot serve metrics on {address}: {err} (choose another port with {source})"
        ) from err


def metric_meter(client: Client) -> MetricMeter:
    """The meter of the runtime ``client`` uses: what it records is served with the SDK's metrics (a
    no-op meter when that runtime has no metrics endpoint)."""
    runtime = client.service_client.config.runtime or Runtime.default()
    return runtime.metric_meter
