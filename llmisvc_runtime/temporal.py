"""The Temporal connection of every process: Temporal's environment configuration (``TEMPORAL_ADDRESS``,
``TEMPORAL_NAMESPACE``, ``TEMPORAL_API_KEY``, ``TEMPORAL_TLS_*``, ``TEMPORAL_PROFILE`` and the TOML
profile file, as for the ``temporal`` CLI), the pydantic data converter, the tracing plugins, and the
namespace checked at once. A failure is a :class:`~llmisvc_runtime.errors.StartupError` naming the address or
namespace and what to do.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime
from temporalio.service import RPCError, RPCStatusCode

from llmisvc_runtime import codec, exit_codes, telemetry
from llmisvc_runtime.errors import StartupError, first_line

DEFAULT_TEMPORAL = "localhost:7233"
#: The payloads of the workflows, their signals, updates and activities are pydantic models.
DATA_CONVERTER = pydantic_data_converter


def temporal_target(env: Mapping[str, str] | None = None) -> tuple[dict[str, Any], str, str]:
    """Temporal's environment configuration: the connect options, the address and the namespace."""
    config: dict[str, Any] = dict(ClientConfig.load_client_connect_config(override_env_vars=env))
    config.setdefault("target_host", DEFAULT_TEMPORAL)
    return config, str(config["target_host"]), str(config.get("namespace") or "default")


async def connect_temporal(
    env: Mapping[str, str] | None = None, runtime: Runtime | None = None, address: str | None = None
) -> Client:
    """Connect with Temporal's environment configuration (or to ``address`` alone, the dev stack's own
    server) and the pydantic data converter (encrypting payloads when ``LLMISVC_ROUTER_CODEC_KEYS_FILE``
    is set, :mod:`llmisvc_runtime.codec`); with tracing on, the OpenTelemetry plugin; with ``runtime``
    (``telemetry.start``), metrics on its endpoint."""
    config = {"target_host": address} if address else temporal_target(env)[0]
    converter = codec.converter_from_env(env)  # encrypted when LLMISVC_ROUTER_CODEC_KEYS_FILE is set
    return await Client.connect(
        **config, data_converter=converter, plugins=telemetry.client_plugins(), runtime=runtime
    )


async def connect(
    env: Mapping[str, str] | None = None,
    runtime: Runtime | None = None,
    *,
    address: str | None = None,
    wait: float = 0.0,
) -> Client:
    """A Temporal client (:func:`connect_temporal`) whose namespace exists; a server that does not
    answer is retried for ``wait`` seconds (a dev server still starting)."""
    if address is None:
        _, address, namespace = temporal_target(env)
    else:
        namespace = "default"
    deadline = time.monotonic() + wait
    while True:
        try:
            client = await connect_temporal(env, runtime, address)
            break
        except (RuntimeError, OSError, ValueError) as err:
            if time.monotonic() < deadline:
                await asyncio.sleep(0.2)
                continue
            hint = (
                "is it running? set TEMPORAL_ADDRESS, and TEMPORAL_TLS*/TEMPORAL_API_KEY for a secured server"
            )
            raise StartupError(
                f"cannot connect to Temporal at {address}: {first_line(err)} ({hint})", exit_codes.UNAVAILABLE
            ) from err
    await check_namespace(client, address, namespace)
    return client


async def check_namespace(client: Client, address: str, namespace: str) -> None:
    try:
        await client.workflow_service.describe_namespace(DescribeNamespaceRequest(namespace=namespace))
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise StartupError(
                f"the Temporal namespace {namespace!r} does not exist at {address} "
                "(set TEMPORAL_NAMESPACE to an existing one, "
                "or create it: temporal operator namespace create)",
                exit_codes.UNAVAILABLE,
            ) from err
        if err.status == RPCStatusCode.PERMISSION_DENIED:
            return  # an API key scoped to the namespace may not describe it; the calls that follow will say
        raise StartupError(
            f"Temporal at {address}, namespace {namespace!r}: {first_line(err)}", exit_codes.UNAVAILABLE
        ) from err
