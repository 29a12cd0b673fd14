"""Fixtures for the stand-in's own tests (product tests import the same from apiserver_standin.testing)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from apiserver_standin.server import StandinApiServer
from apiserver_standin.testing import StandinProcess, running_apiserver, running_apiserver_process

from .helpers import free_port
from .kubectl_session import kubectl, ns  # noqa: F401  (fixtures of the kubectl test modules)


@pytest.fixture
def standin() -> Iterator[StandinApiServer]:
    """A fresh stand-in with every project CRD, on an ephemeral loopback port."""
    with running_apiserver(crds="all", bookmark_interval=0.2) as server:
        yield server


@pytest.fixture
def api_client(standin: StandinApiServer) -> client.ApiClient:
    return standin.client


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def custom(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandinProcess]:
    """``python -m apiserver_standin apiserver`` in a child process, shared by a test module."""
    kubeconfig = tmp_path_factory.mktemp("standalone") / "kubeconfig"
    with running_apiserver_process(kubeconfig, free_port()) as process:
        yield process
