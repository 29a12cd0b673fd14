"""Starting a long-running process (worker, watcher, both): the Kubernetes client, then telemetry, then the
Temporal client on telemetry's runtime, in that order, so that a process refuses to start with one line
naming the first thing that is wrong (:class:`~llmisvc_runtime.errors.StartupError`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

from temporalio.client import Client

from llmisvc_runtime import kube, telemetry, temporal
from llmisvc_runtime.version import Role


class ProcessSettings(telemetry.TelemetrySettings, Protocol):
    """What starting a process reads of its settings (``llmisvc_runtime.settings.OrchestratorSettings``)."""

    @property
    def kubeconfig(self) -> str | None: ...

    @property
    def kube_context(self) -> str | None: ...

    @property
    def kube_connections(self) -> int: ...


async def connect_process(
    settings: ProcessSettings, role: Role, env: Mapping[str, str] | None = None
) -> tuple[Any, Client]:
    """The Kubernetes client of a ``role`` process (its API server answered) and the Temporal client (its
    namespace exists), with tracing and the metrics endpoint started. The caller closes the Kubernetes
    client."""
    api_client = await asyncio.to_thread(
        kube.connect_kube, settings.kubeconfig, settings.kube_context, settings.kube_connections, env, role
    )
    try:
        client = await temporal.connect(env, telemetry.start(settings))
    except BaseException:
        api_client.close()
        raise
    return api_client, client
