"""The Kubernetes connection of every process: the client from ``--kubeconfig`` / ``$KUBECONFIG``,
~/.kube/config or the pod's service account, refused at once when the API server does not answer. A
failure is a :class:`~llmisvc_runtime.errors.StartupError`: exit 2 for a kubeconfig that cannot be used, 4 for
an API server that cannot be reached. Every client says which process it serves in its User-Agent
(:func:`llmisvc_runtime.version.user_agent`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llmisvc_kube.client import (
    CONFIG_ERRORS,
    KubernetesUnreachable,
    check_reachable,
    load_api_client,
)
from llmisvc_runtime import exit_codes
from llmisvc_runtime.errors import StartupError, first_line
from llmisvc_runtime.version import Role, user_agent

IN_CLUSTER_HOST = "KUBERNETES_SERVICE_HOST"


def load_kube(
    kubeconfig: str | None,
    context: str | None = None,
    pool_size: int | None = None,
    env: Mapping[str, str] | None = None,
    role: Role = "cli",
) -> Any:  # a kubernetes.client.ApiClient (the client's own types are partial)
    """The Kubernetes client of a ``role`` process: from ``kubeconfig`` (the flag or ``$KUBECONFIG``),
    ~/.kube/config, else the pod's service account; ``pool_size`` connections kept open (the urllib3
    default when None)."""
    values = os.environ if env is None else env
    default = Path.home() / ".kube" / "config"
    if kubeconfig is None and not default.exists() and not values.get(IN_CLUSTER_HOST):
        raise StartupError(
            f"no kubeconfig: KUBECONFIG is unset, {default} does not exist and this is not a pod "
            "(set KUBECONFIG or pass --kubeconfig FILE)",
            exit_codes.USAGE,
        )
    source = kubeconfig or (str(default) if default.exists() else "the pod's service account")
    if kubeconfig is not None and os.pathsep not in kubeconfig and not Path(kubeconfig).is_file():
        raise StartupError(
            f"kubeconfig {kubeconfig}: no such file "
            "(set KUBECONFIG or --kubeconfig to an existing kubeconfig)",
            exit_codes.USAGE,
        )
    try:
        return load_api_client(kubeconfig, context, pool_size, user_agent(role))
    except CONFIG_ERRORS as err:
        where = f"kubeconfig {source}" + (f", context {context}" if context else "")
        raise StartupError(
            f"{where}: {first_line(err)} (check the file, or choose another with --kubeconfig)",
            exit_codes.USAGE,
        ) from err


def connect_kube(
    kubeconfig: str | None,
    context: str | None = None,
    pool_size: int | None = None,
    env: Mapping[str, str] | None = None,
    role: Role = "cli",
) -> Any:  # a kubernetes.client.ApiClient (the client's own types are partial)
    """:func:`load_kube`, then one request to the API server: a process does not start against one
    that does not answer. Blocking: call it in a thread from async code."""
    api_client = load_kube(kubeconfig, context, pool_size, env, role)
    try:
        check_reachable(api_client)
    except KubernetesUnreachable as err:
        api_client.close()
        raise StartupError(
            f"{err} (check the kubeconfig's server and the network)", exit_codes.UNAVAILABLE
        ) from err
    return api_client
