"""Settings of every process (the worker, the watcher, the command line), from the environment and the
flags (``llmisvc_router.options``).

The Temporal connection (``llmisvc_runtime.temporal``) comes from Temporal's standard environment
configuration (``TEMPORAL_ADDRESS``, ``TEMPORAL_NAMESPACE``, ``TEMPORAL_API_KEY``, ``TEMPORAL_TLS_*``,
``TEMPORAL_PROFILE`` and the TOML profile file), so the same variables work for the ``temporal`` CLI,
this worker and Temporal Cloud.

Telemetry (``llmisvc_runtime.telemetry``): ``LLMISVC_ROUTER_METRICS_PORT`` serves Prometheus metrics; traces
follow OpenTelemetry's variables, ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``, ``none``, comma-separated;
unset means ``otlp`` when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is
set and no tracing otherwise, so a cluster without a collector is not sent spans),
``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL`` (``http/protobuf``, the default,
or ``grpc``; the first set wins) and ``OTEL_SDK_DISABLED=true``.

Probes (``llmisvc_runtime.probes``): ``LLMISVC_ROUTER_PROBE_PORT`` serves ``/healthz`` and ``/readyz``
(default 8081; 0: off); ``LLMISVC_ROUTER_READINESS_GRACE_SECONDS`` (default 30) is how long a watch may fail
or Temporal be unreachable before ``/readyz`` answers 503.

Worker Versioning (``worker.versioning`` builds the SDK's options from them): off unless a deployment name is
set. ``LLMISVC_ROUTER_DEPLOYMENT_NAME`` names the deployment (else ``TEMPORAL_DEPLOYMENT_NAME``, which
temporal-worker-controller sets in the pods it creates); ``LLMISVC_ROUTER_BUILD_ID`` is the build ID (else the
controller's ``TEMPORAL_WORKER_BUILD_ID``, else the package version followed by ``LLMISVC_ROUTER_IMAGE_TAG``
when that is given and differs from it).

Sizing of the worker (:class:`WorkerSizing`) and of the Kubernetes client's connection
pool: ``LLMISVC_ROUTER_ACTIVITY_THREADS``, ``LLMISVC_ROUTER_MAX_CACHED_WORKFLOWS``,
``LLMISVC_ROUTER_WORKFLOW_TASK_POLLERS``, ``LLMISVC_ROUTER_ACTIVITY_TASK_POLLERS`` and
``LLMISVC_ROUTER_KUBE_CONNECTIONS`` (at least the activity threads; by default the threads plus room
for the watcher's watch streams, which share the pool in ``llmisvc-router run``).

Which services this deployment manages and how (``activities.management``): ``LLMISVC_ROUTER_NAMESPACES``
(comma-separated; empty: all), ``LLMISVC_ROUTER_SERVICE_SELECTOR`` (a label selector; empty: every
service) and ``LLMISVC_ROUTER_MODE`` (``write``, the default, or ``shadow``: plan, write nothing, report
the drift).

Several clusters sharing one Temporal namespace: ``LLMISVC_ROUTER_CLUSTER``, the install's cluster name
(a DNS-1123 label; empty: none), carried by the workflow ids and the ``LlmisvcCluster`` search attribute.

Stopping (``worker.process``): ``LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS``, how long running activities may
take to finish after SIGTERM (default 30, the longest an activity attempt runs; keep it below the pod's
terminationGracePeriodSeconds).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, Field, ValidationError, field_validator, model_validator

from activities.management import Management
from llmisvc_core.gocompat import label_selector
from llmisvc_runtime import exit_codes
from llmisvc_runtime.errors import StartupError
from llmisvc_runtime.probes import DEFAULT_PORT
from llmisvc_runtime.telemetry import OtlpProtocol
from llmisvc_runtime.version import package_version
from workflows.models import DEFAULT_RESYNC_SECONDS, DEFAULT_TASK_QUEUE, check_cluster_name

#: How long a stopping worker lets its running activities finish before cancelling them (the SDK's default
#: is none: cancelled at once, a write cut off mid-flight and retried by another worker). An activity
#: attempt is bounded by 30 s (``workflows.activity_options.ATTEMPT_TIMEOUT``), so by default every
#: running attempt can end; the pods' terminationGracePeriodSeconds (60 in ``deploy/``) must exceed it.
DEFAULT_SHUTDOWN_GRACE = timedelta(seconds=30)


@dataclass(frozen=True)
class WorkerSizing:
    """How much work one worker takes on at once (``worker.factory.build_worker``).

    ``activity_threads`` is the activity slots and as many local activity slots, and the executor has a
    thread for each (:attr:`executor_threads`): a slot without a thread would let a started activity wait
    for a thread while its timeout runs. Local activities share the executor with the others, and the
    SDK's default of 100 local slots on 16 threads let 300 services created at once time out their
    ``fetch_gateways`` in the executor's queue (``bench_scale --services 300``)."""

    activity_threads: int = 16
    max_cached_workflows: int = 1000  # sticky cache: a cached workflow's next task needs no replay
    workflow_task_pollers: int = 5
    activity_task_pollers: int = 5

    @property
    def local_activity_slots(self) -> int:
        return self.activity_threads

    @property
    def workflow_task_slots(self) -> int:
        """A workflow task slot for every cached workflow, so the sticky queue of a workflow in progress
        always has one (``worker.slots``)."""
        return max(2, self.max_cached_workflows)  # the SDK's minimum with a cache

    @property
    def new_workflow_room(self) -> int:
        """The held slots below which the worker takes a new workflow's task (``worker.slots``): twice the
        local activity slots, as every task of a first pass waits for one."""
        return min(2 * self.local_activity_slots, self.workflow_task_slots)

    @property
    def executor_threads(self) -> int:
        """A thread for every activity slot and every local activity slot."""
        return self.activity_threads + self.local_activity_slots


#: Temporal's ``limit.workerBuildIdSize``; the deployment name shares the bound.
MAX_LENGTH = 255
#: The build-ID alphabet of temporal-worker-controller's ``unsafeCustomBuildID`` (a subset of Temporal's),
#: so that an ID chosen here can also be handed to the controller.
_BUILD_ID = re.compile(r"^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$")
_UNVERSIONED = "__unversioned__"  # Temporal's reserved name for "no version"


def default_build_id(version: str, image_tag: str | None) -> str:
    """``<version>`` or ``<version>-<image tag>``; characters outside the build-ID alphabet become ``-``."""
    if not image_tag or image_tag == version:
        return version
    return f"{version}-{re.sub(r'[^a-zA-Z0-9._-]', '-', image_tag)}".strip("-._")


def versioning_from_env(values: Mapping[str, str]) -> dict[str, str | None]:
    """The raw deployment name and build ID the environment asks for (validated by the settings)."""
    tag = values.get("LLMISVC_ROUTER_IMAGE_TAG") or None
    return {
        "deployment_name": values.get("LLMISVC_ROUTER_DEPLOYMENT_NAME")
        or values.get("TEMPORAL_DEPLOYMENT_NAME")
        or None,
        "build_id": values.get("LLMISVC_ROUTER_BUILD_ID")
        or values.get("TEMPORAL_WORKER_BUILD_ID")
        or default_build_id(package_version(), tag),
    }


def check_deployment_name(name: str | None) -> str | None:
    if name is None:
        return None
    if not name.strip() or len(name) > MAX_LENGTH:
        raise ValueError(f"{name!r} must be 1 to {MAX_LENGTH} characters")
    if "." in name:
        # Temporal writes a version as "<deployment>.<build ID>" and splits it at the first dot.
        raise ValueError(f"{name!r} must not contain '.' (Temporal separates it from the build ID with one)")
    return name


def check_build_id(build_id: str) -> str:
    if build_id == _UNVERSIONED:
        raise ValueError(f"{build_id!r} is Temporal's name for unversioned workers")
    if len(build_id) > MAX_LENGTH or not _BUILD_ID.match(build_id):
        raise ValueError(
            f"{build_id!r} must be 1 to {MAX_LENGTH} letters, digits, '.', '_' or '-', "
            "starting and ending with a letter or digit"
        )
    return build_id


DeploymentName = Annotated[str | None, AfterValidator(check_deployment_name)]
BuildId = Annotated[str, AfterValidator(check_build_id)]

#: Connections kept beyond the activity threads: one per watch stream of ``llmisvc-router run`` (about
#: nine for all namespaces) and a few for the watcher's relists.
SPARE_CONNECTIONS = 12


class SettingsError(StartupError, ValueError):
    """A setting has a value that cannot be used; the message names the variable (exit status 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_codes.USAGE)


class OrchestratorSettings(BaseModel):
    task_queue: str = DEFAULT_TASK_QUEUE
    # The install's name among the clusters sharing the Temporal namespace ("": none); it goes into the
    # workflow ids and LlmisvcCluster (workflows.models.workflow_id).
    cluster: str = ""
    resync_seconds: int = DEFAULT_RESYNC_SECONDS
    # Worker Versioning: a version of this Worker Deployment; None: unversioned.
    deployment_name: DeploymentName = None
    build_id: BuildId = Field(default_factory=lambda: default_build_id(package_version(), None))
    kubeconfig: str | None = None
    kube_context: str | None = None
    namespaces: list[str] = []  # empty: all namespaces
    activity_threads: int = Field(default=16, ge=1)
    max_cached_workflows: int = Field(default=1000, ge=0)
    workflow_task_pollers: int = Field(default=5, ge=2)  # the SDK needs two with a workflow cache
    activity_task_pollers: int = Field(default=5, ge=1)
    kube_connections: int = Field(default=0, ge=0)  # 0: the executor's threads + SPARE_CONNECTIONS
    shutdown_grace_seconds: int = Field(default=int(DEFAULT_SHUTDOWN_GRACE.total_seconds()), ge=1, le=3600)
    metrics_port: int | None = Field(default=None, ge=1, le=65535)  # None: no metrics endpoint
    # /healthz and /readyz (llmisvc_runtime.probes); 0: off. A watch failing or Temporal unreachable for
    # longer than the grace turns /readyz 503 (a watch not listed yet does at once).
    probe_port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    readiness_grace_seconds: float = Field(default=30.0, gt=0, le=3600)
    trace_exporters: list[Literal["otlp", "console"]] = []  # empty: no tracing
    otlp_protocol: OtlpProtocol = "http/protobuf"
    # Which services this deployment manages, and whether it writes (activities.management).
    mode: Literal["write", "shadow"] = "write"
    service_selector: str = ""  # a label selector; empty: every service of the namespaces

    @field_validator("cluster")
    @classmethod
    def _cluster_is_a_label(cls, value: str) -> str:
        return check_cluster_name(value)

    @field_validator("service_selector")
    @classmethod
    def _selector_parses(cls, value: str) -> str:
        label_selector.parse(value)  # refused here, with the API server's reason, before anything starts
        return value.strip()

    @model_validator(mode="after")
    def _pool_fits_threads(self) -> OrchestratorSettings:
        # urllib3 keeps at most this many connections: fewer than the threads that share them means
        # connections thrown away and reopened under load ("Connection pool is full").
        if self.kube_connections == 0:
            self.kube_connections = self.sizing().executor_threads + SPARE_CONNECTIONS
        elif self.kube_connections < self.activity_threads:
            raise ValueError(
                f"{self.kube_connections} connections is fewer than the {self.activity_threads} "
                "activity threads that share them"
            )
        return self

    def with_flags(self, **flags: object) -> OrchestratorSettings:
        """These settings overridden by the command-line flags that were given (None, "" or []: not given);
        validated again, so a flag is held to the same rules as its variable (``--x 0`` included)."""
        given = {name: value for name, value in flags.items() if value is not None and value not in ("", [])}
        if not given:
            return self
        values = self.model_dump()
        if "activity_threads" in given and "kube_connections" not in given:
            values["kube_connections"] = 0  # derived from the threads again unless set explicitly
        try:
            return self.model_validate({**values, **given})
        except ValidationError as err:
            raise _settings_error(err, _FLAG_NAMES) from err

    def management(self) -> Management:
        return Management.of(self.mode, self.service_selector, self.namespaces)

    def sizing(self) -> WorkerSizing:
        return WorkerSizing(
            activity_threads=self.activity_threads,
            max_cached_workflows=self.max_cached_workflows,
            workflow_task_pollers=self.workflow_task_pollers,
            activity_task_pollers=self.activity_task_pollers,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OrchestratorSettings:
        values = os.environ if env is None else env
        raw: dict[str, Any] = {
            **versioning_from_env(values),
            "task_queue": values.get("LLMISVC_ROUTER_TASK_QUEUE"),
            "cluster": values.get("LLMISVC_ROUTER_CLUSTER"),
            "resync_seconds": values.get("LLMISVC_ROUTER_RESYNC_SECONDS"),
            "kubeconfig": values.get("KUBECONFIG"),
            "kube_context": values.get("LLMISVC_ROUTER_KUBE_CONTEXT"),
            "namespaces": [n for n in values.get("LLMISVC_ROUTER_NAMESPACES", "").split(",") if n.strip()],
            "activity_threads": values.get("LLMISVC_ROUTER_ACTIVITY_THREADS"),
            "max_cached_workflows": values.get("LLMISVC_ROUTER_MAX_CACHED_WORKFLOWS"),
            "workflow_task_pollers": values.get("LLMISVC_ROUTER_WORKFLOW_TASK_POLLERS"),
            "activity_task_pollers": values.get("LLMISVC_ROUTER_ACTIVITY_TASK_POLLERS"),
            "kube_connections": values.get("LLMISVC_ROUTER_KUBE_CONNECTIONS"),
            "shutdown_grace_seconds": values.get("LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS") or None,
            "metrics_port": values.get("LLMISVC_ROUTER_METRICS_PORT") or None,
            "probe_port": values.get("LLMISVC_ROUTER_PROBE_PORT") or None,
            "readiness_grace_seconds": values.get("LLMISVC_ROUTER_READINESS_GRACE_SECONDS") or None,
            "trace_exporters": trace_exporters(values),
            "otlp_protocol": otlp_protocol(values),
            "mode": values.get("LLMISVC_ROUTER_MODE") or None,
            "service_selector": values.get("LLMISVC_ROUTER_SERVICE_SELECTOR"),
        }
        try:
            return cls.model_validate({k: v for k, v in raw.items() if v is not None})
        except ValidationError as err:
            raise _settings_error(err, _ENV_NAMES) from err


def _settings_error(err: ValidationError, names: Mapping[str, str]) -> SettingsError:
    """One line naming the variable (or flag) at fault; a rule across fields names the pool's."""
    problem = err.errors()[0]
    field = str(problem["loc"][0]) if problem["loc"] else "kube_connections"
    message = str(problem["msg"]).removeprefix("Value error, ")
    return SettingsError(f"{names.get(field, field)}: {message}")


_SIZING_NAMES = {
    "activity_threads": "ACTIVITY_THREADS",
    "max_cached_workflows": "MAX_CACHED_WORKFLOWS",
    "workflow_task_pollers": "WORKFLOW_TASK_POLLERS",
    "activity_task_pollers": "ACTIVITY_TASK_POLLERS",
    "kube_connections": "KUBE_CONNECTIONS",
}
_FLAG_NAMES = {
    field: "--" + field.replace("_", "-")
    for field in (
        *_SIZING_NAMES,
        "mode",
        "service_selector",
        "shutdown_grace_seconds",
        "probe_port",
        "cluster",
    )
}
_ENV_NAMES = {
    "task_queue": "LLMISVC_ROUTER_TASK_QUEUE",
    "cluster": "LLMISVC_ROUTER_CLUSTER",
    "resync_seconds": "LLMISVC_ROUTER_RESYNC_SECONDS",
    **{field: f"LLMISVC_ROUTER_{suffix}" for field, suffix in _SIZING_NAMES.items()},
    "metrics_port": "LLMISVC_ROUTER_METRICS_PORT",
    "probe_port": "LLMISVC_ROUTER_PROBE_PORT",
    "readiness_grace_seconds": "LLMISVC_ROUTER_READINESS_GRACE_SECONDS",
    "shutdown_grace_seconds": "LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS",
    "trace_exporters": "OTEL_TRACES_EXPORTER",
    "mode": "LLMISVC_ROUTER_MODE",
    "service_selector": "LLMISVC_ROUTER_SERVICE_SELECTOR",
}


# Worker Versioning: its variables and flags, named in errors like the others.
_FLAG_NAMES.update(deployment_name="--deployment-name", build_id="--build-id")
_ENV_NAMES.update(
    deployment_name="LLMISVC_ROUTER_DEPLOYMENT_NAME (or TEMPORAL_DEPLOYMENT_NAME)",
    build_id="LLMISVC_ROUTER_BUILD_ID (or TEMPORAL_WORKER_BUILD_ID)",
)


def trace_exporters(values: Mapping[str, str]) -> list[str]:
    """The span exporters OpenTelemetry's variables ask for (validated by the settings model)."""
    if values.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = values.get("OTEL_TRACES_EXPORTER")
    if names is None:
        endpoints = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
        return ["otlp"] if any(values.get(name) for name in endpoints) else []
    return [name.strip() for name in names.split(",") if name.strip() not in ("", "none")]


#: OpenTelemetry's protocol variables, the signal's own first (the specification's precedence).
PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


def otlp_protocol(values: Mapping[str, str]) -> str | None:
    """The OTLP transport of the spans (None: the default), refused naming the variable that asked."""
    for variable in PROTOCOL_VARIABLES:
        value = values.get(variable, "").strip()
        if not value:
            continue
        if value == "http/json":
            raise SettingsError(
                f"{variable}: http/json is not available (the OpenTelemetry Python SDK has no OTLP/JSON "
                "exporter); use grpc or http/protobuf"
            )
        if value not in get_args(OtlpProtocol):
            raise SettingsError(f"{variable}: {value!r} is not an OTLP protocol; use grpc or http/protobuf")
        return value
    return None
