"""Connecting the commands to Kubernetes and Temporal, with errors a person can act on.

Each failure is a :class:`ConnectionProblem`: one line naming the file, address or namespace and what
to do, and the exit status of its class (:mod:`worker.exit_codes`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime
from temporalio.service import RPCError, RPCStatusCode

from activities.kube_api import load_api_client
from worker import codec, exit_codes
from worker.settings import connect_temporal

DEFAULT_TEMPORAL = "localhost:7233"
IN_CLUSTER_HOST = "KUBERNETES_SERVICE_HOST"


class ConnectionProblem(Exception):  # noqa: N818 - reads as what happened
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]


def load_kube(
    kubeconfig: str | None,
    context: str | None = None,
    pool_size: int | None = None,
    env: Mapping[str, str] | None = None,
) -> Any:
    """The Kubernetes client: from ``kubeconfig`` (the flag or ``$KUBECONFIG``), ~/.kube/config, else the
    pod's service account; ``pool_size`` connections kept open (the urllib3 default when None)."""
    values = os.environ if env is None else env
    default = Path.home() / ".kube" / "config"
    if kubeconfig is None and not default.exists() and not values.get(IN_CLUSTER_HOST):
        raise ConnectionProblem(
            f"no kubeconfig: KUBECONFIG is unset, {default} does not exist and this is not a pod "
            "(set KUBECONFIG or pass --kubeconfig FILE)",
            exit_codes.USAGE,
        )
    source = kubeconfig or (str(default) if default.exists() else "the pod's service account")
    if kubeconfig is not None and os.pathsep not in kubeconfig and not Path(kubeconfig).is_file():
        raise ConnectionProblem(
            f"kubeconfig {kubeconfig}: no such file "
            "(set KUBECONFIG or --kubeconfig to an existing kubeconfig)",
            exit_codes.USAGE,
        )
    try:
        return load_api_client(kubeconfig, context, pool_size)
    except Exception as err:  # the kubernetes config loaders raise a variety of types
        where = f"kubeconfig {source}" + (f", context {context}" if context else "")
        raise ConnectionProblem(
            f"{where}: {first_line(err)} (check the file, or choose another with --kubeconfig)",
            exit_codes.USAGE,
        ) from err


def temporal_target(env: Mapping[str, str] | None = None) -> tuple[dict[str, Any], str, str]:
    """Temporal's environment configuration: the connect options, the address and the namespace."""
    config: dict[str, Any] = dict(ClientConfig.load_client_connect_config(override_env_vars=env))
    config.setdefault("target_host", DEFAULT_TEMPORAL)
    return config, str(config["target_host"]), str(config.get("namespace") or "default")


async def connect(env: Mapping[str, str] | None = None, runtime: Runtime | None = None) -> Client:
    """A Temporal client (pydantic converter, tracing plugin when tracing is on) whose namespace exists."""
    _, address, namespace = temporal_target(env)
    try:
        client = await connect_temporal(env, runtime)
    except codec.CodecKeysError as err:
        raise ConnectionProblem(str(err), exit_codes.USAGE) from err
    except (RuntimeError, OSError, ValueError) as err:
        raise ConnectionProblem(
            f"cannot connect to Temporal at {address}: {first_line(err)} "
            "(is it running? set TEMPORAL_ADDRESS, and TEMPORAL_TLS*/TEMPORAL_API_KEY for a secured server)",
            exit_codes.UNAVAILABLE,
        ) from err
    await check_namespace(client, address, namespace)
    return client


async def check_namespace(client: Client, address: str, namespace: str) -> None:
    try:
        await client.workflow_service.describe_namespace(DescribeNamespaceRequest(namespace=namespace))
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise ConnectionProblem(
                f"the Temporal namespace {namespace!r} does not exist at {address} "
                "(set TEMPORAL_NAMESPACE to an existing one, "
                "or create it: temporal operator namespace create)",
                exit_codes.UNAVAILABLE,
            ) from err
        if err.status == RPCStatusCode.PERMISSION_DENIED:
            return  # an API key scoped to the namespace may not describe it; the calls that follow will say
        raise ConnectionProblem(
            f"Temporal at {address}, namespace {namespace!r}: {first_line(err)}", exit_codes.UNAVAILABLE
        ) from err
