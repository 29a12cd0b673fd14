"""Test helpers for any test suite: run the stand-in (and the simulated gateway controller) in-process.

    from apiserver_standin.testing import running_apiserver

    with running_apiserver(crds="llmisvc,pool-v1") as server:
        api = kubernetes.client.CustomObjectsApi(server.client)
        ...
        assert server.counter.writes(resource="httproutes") == 0

``server`` is a :class:`~apiserver_standin.server.StandinApiServer`: ``.url``, ``.client`` (a
``kubernetes.client.ApiClient`` for ``http://127.0.0.1:PORT``, no auth), ``.faults``, ``.counter``,
``.install_crds()`` / ``.remove_crds()``. Each call serves on a fresh ephemeral loopback port.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kubernetes import client as k8s

from apiserver_standin.server import StandinApiServer, make_api_client
from llmisvc_devstack.controllers.gateway import ControllerConfig, SimulatedGatewayController

__all__ = [
    "ControllerConfig",
    "SimulatedGatewayController",
    "StandinApiServer",
    "StandinProcess",
    "make_api_client",
    "running_apiserver",
    "running_apiserver_process",
    "running_gateway_controller",
]


@contextmanager
def running_apiserver(crds: str | Iterable[str] = "all", **options: Any) -> Iterator[StandinApiServer]:
    """A stand-in serving on 127.0.0.1:<ephemeral> in a background thread for the ``with`` block."""
    server = StandinApiServer(crds=crds, **options).start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def running_gateway_controller(
    api_client: k8s.ApiClient | StandinApiServer, **config: Any
) -> Iterator[SimulatedGatewayController]:
    """The simulated gateway controller, watching through ``api_client`` (or a new client of a server)."""
    own_client = isinstance(api_client, StandinApiServer)
    client = (
        api_client.api_client("standin-gateway-controller")
        if isinstance(api_client, StandinApiServer)
        else api_client
    )
    controller = SimulatedGatewayController(client, ControllerConfig(**config)).start()
    try:
        yield controller
    finally:
        controller.stop()
        if own_client:
            client.close()  # type: ignore[no-untyped-call]


class StandinProcess:
    """The ``apiserver`` subcommand running as a child process."""

    def __init__(self, process: subprocess.Popen[str], url: str, kubeconfig: Path) -> None:
        self.process = process
        self.url = url
        self.kubeconfig = kubeconfig

    def api_client(self) -> k8s.ApiClient:
        return make_api_client(self.url)


def _wait_healthy(url: str, process: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the apiserver process exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_standin/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"the apiserver at {url} did not become healthy within {timeout}s")


@contextmanager
def running_apiserver_process(
    kubeconfig: Path, port: int, crds: str = "all", extra_args: Iterable[str] = (), timeout: float = 20.0
) -> Iterator[StandinProcess]:
    """Start ``python -m apiserver_standin apiserver`` on ``port``; SIGTERM it at the end of the block."""
    command = [sys.executable, "-m", "apiserver_standin", "apiserver", "--port", str(port)]
    command += ["--kubeconfig", str(kubeconfig), "--crds", crds, *extra_args]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process, timeout)
        yield StandinProcess(process, url, kubeconfig)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
