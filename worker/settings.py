"""Settings of the worker and the watcher, from the environment.

The Temporal connection comes from Temporal's standard environment configuration (``TEMPORAL_ADDRESS``,
``TEMPORAL_NAMESPACE``, ``TEMPORAL_API_KEY``, ``TEMPORAL_TLS_*``, ``TEMPORAL_PROFILE`` and the TOML
profile file), so the same variables work for the ``temporal`` CLI, this worker and Temporal Cloud.

Telemetry (``worker.telemetry``): ``LLMISVC_ROUTER_METRICS_PORT`` serves Prometheus metrics; traces follow
OpenTelemetry's variables, ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``, ``none``, comma-separated;
unset means ``otlp`` when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is
set and no tracing otherwise, so a cluster without a collector is not sent spans) and
``OTEL_SDK_DISABLED=true``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError
from temporalio.client import Client
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime

from worker import telemetry
from worker.factory import DATA_CONVERTER
from workflows.models import DEFAULT_RESYNC_SECONDS, DEFAULT_TASK_QUEUE


class SettingsError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


class OrchestratorSettings(BaseModel):
    task_queue: str = DEFAULT_TASK_QUEUE
    resync_seconds: int = DEFAULT_RESYNC_SECONDS
    kubeconfig: str | None = None
    kube_context: str | None = None
    namespaces: list[str] = []  # empty: all namespaces
    activity_threads: int = 16
    metrics_port: int | None = Field(default=None, ge=1, le=65535)  # None: no metrics endpoint
    trace_exporters: list[Literal["otlp", "console"]] = []  # empty: no tracing

    def with_flags(self, **flags: object) -> OrchestratorSettings:
        """These settings overridden by the command-line flags that were given (None or empty: not given)."""
        return self.model_copy(update={name: value for name, value in flags.items() if value})

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OrchestratorSettings:
        values = os.environ if env is None else env
        raw: dict[str, Any] = {
            "task_queue": values.get("LLMISVC_ROUTER_TASK_QUEUE"),
            "resync_seconds": values.get("LLMISVC_ROUTER_RESYNC_SECONDS"),
            "kubeconfig": values.get("KUBECONFIG"),
            "kube_context": values.get("LLMISVC_ROUTER_KUBE_CONTEXT"),
            "namespaces": [n for n in values.get("LLMISVC_ROUTER_NAMESPACES", "").split(",") if n.strip()],
            "activity_threads": values.get("LLMISVC_ROUTER_ACTIVITY_THREADS"),
            "metrics_port": values.get("LLMISVC_ROUTER_METRICS_PORT") or None,
            "trace_exporters": trace_exporters(values),
        }
        try:
            return cls.model_validate({k: v for k, v in raw.items() if v is not None})
        except ValidationError as err:
            problem = err.errors()[0]
            name = _ENV_NAMES.get(str(problem["loc"][0]), str(problem["loc"][0]))
            raise SettingsError(f"{name}: {problem['msg']}") from err


_ENV_NAMES = {
    "task_queue": "LLMISVC_ROUTER_TASK_QUEUE",
    "resync_seconds": "LLMISVC_ROUTER_RESYNC_SECONDS",
    "activity_threads": "LLMISVC_ROUTER_ACTIVITY_THREADS",
    "metrics_port": "LLMISVC_ROUTER_METRICS_PORT",
    "trace_exporters": "OTEL_TRACES_EXPORTER",
}


def trace_exporters(values: Mapping[str, str]) -> list[str]:
    """The span exporters OpenTelemetry's variables ask for (validated by the settings model)."""
    if values.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = values.get("OTEL_TRACES_EXPORTER")
    if names is None:
        endpoints = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
        return ["otlp"] if any(values.get(name) for name in endpoints) else []
    return [name.strip() for name in names.split(",") if name.strip() not in ("", "none")]


async def connect_temporal(env: Mapping[str, str] | None = None, runtime: Runtime | None = None) -> Client:
    """Connect with Temporal's environment configuration and the pydantic data converter; with tracing on,
    the OpenTelemetry plugin; with ``runtime`` (``telemetry.start``), metrics on its endpoint."""
    config = ClientConfig.load_client_connect_config(override_env_vars=env)
    config.setdefault("target_host", "localhost:7233")
    return await Client.connect(
        **config, data_converter=DATA_CONVERTER, plugins=telemetry.client_plugins(), runtime=runtime
    )
