"""The telemetry settings: OpenTelemetry's variables choose the span exporters, LLMISVC_ROUTER_METRICS_PORT
the metrics endpoint; bad values and a taken port are reported naming the variable."""

from __future__ import annotations

import socket

import pytest

from llmisvc_runtime import telemetry
from llmisvc_runtime.settings import OrchestratorSettings, SettingsError

ENDPOINT = "http://collector:4318"


@pytest.mark.parametrize(
    ("env", "exporters"),
    [
        pytest.param({}, [], id="nothing-set-no-tracing"),
        pytest.param({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, ["otlp"], id="endpoint-means-otlp"),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ENDPOINT}, ["otlp"], id="traces-endpoint-means-otlp"
        ),
        pytest.param({"OTEL_TRACES_EXPORTER": "console"}, ["console"], id="console"),
        pytest.param({"OTEL_TRACES_EXPORTER": "otlp, console"}, ["otlp", "console"], id="several"),
        pytest.param(
            {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, [], id="none-wins"
        ),
        pytest.param({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, [], id="sdk-disabled"),
    ],
)
def test_otel_variables_choose_the_span_exporters(env: dict[str, str], exporters: list[str]) -> None:
    assert OrchestratorSettings.from_env(env).trace_exporters == exporters


@pytest.mark.parametrize(
    ("env", "protocol"),
    [
        pytest.param({}, "http/protobuf", id="default-http-protobuf"),
        pytest.param({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "grpc", id="grpc"),
        pytest.param({"OTEL_EXPORTER_OTLP_PROTOCOL": ""}, "http/protobuf", id="empty-is-the-default"),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
            "http/protobuf",
            id="the-traces-variable-wins",
        ),
    ],
)
def test_the_otlp_protocol_comes_from_otels_variables(env: dict[str, str], protocol: str) -> None:
    assert OrchestratorSettings.from_env(env).otlp_protocol == protocol


@pytest.mark.parametrize(
    ("env", "port"),
    [
        pytest.param({}, None, id="unset-no-endpoint"),
        pytest.param({"LLMISVC_ROUTER_METRICS_PORT": ""}, None, id="empty-no-endpoint"),
        pytest.param({"LLMISVC_ROUTER_METRICS_PORT": "9464"}, 9464, id="the-deploy-manifests-port"),
    ],
)
def test_the_metrics_port_comes_from_its_variable(env: dict[str, str], port: int | None) -> None:
    assert OrchestratorSettings.from_env(env).metrics_port == port


@pytest.mark.parametrize(
    ("env", "message"),
    [
        pytest.param({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER: ", id="unknown-exporter"),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpcs"}, "OTEL_EXPORTER_OTLP_PROTOCOL: 'grpcs' is not", id="bad"
        ),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: http/json is not available",
            id="http-json-refused",
        ),
        pytest.param(
            {"LLMISVC_ROUTER_METRICS_PORT": "metrics"}, "LLMISVC_ROUTER_METRICS_PORT: ", id="not-a-number"
        ),
        pytest.param(
            {"LLMISVC_ROUTER_METRICS_PORT": "70000"}, "LLMISVC_ROUTER_METRICS_PORT: ", id="out-of-range"
        ),
    ],
)
def test_a_bad_value_is_reported_naming_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=f"^{message}"):
        OrchestratorSettings.from_env(env)


def test_a_taken_metrics_port_is_reported_naming_the_variable() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(telemetry.TelemetryError, match="LLMISVC_ROUTER_METRICS_PORT"):
            telemetry.metrics_runtime(port, "127.0.0.1")


def test_without_a_metrics_port_the_process_keeps_the_default_runtime() -> None:
    assert telemetry.metrics_runtime(None) is None
