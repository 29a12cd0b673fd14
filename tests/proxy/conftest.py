"""Fixtures of the proxy's tests: a CA, a small TLS upstream, the proxy in front of it, a client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from llmisvc_devstack.proxy import ApiProxy

from .clients import Client
from .tls import Pki
from .upstream import FakeUpstream


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def upstream(pki: Pki) -> Iterator[FakeUpstream]:
    cert = pki.serving("upstream")
    server = FakeUpstream(cert.certfile, cert.keyfile).start()
    yield server
    server.stop()


@pytest.fixture
def proxy(pki: Pki, upstream: FakeUpstream) -> Iterator[ApiProxy]:
    cert = pki.serving("proxy")
    with ApiProxy(
        upstream.url, ca_file=pki.ca_file, certfile=cert.certfile, keyfile=cert.keyfile
    ).start() as p:
        yield p


@pytest.fixture
def client(proxy: ApiProxy, pki: Pki) -> Iterator[Client]:
    c = Client(proxy.url, pki.ca_file)
    yield c
    c.close()


@pytest.fixture
def ca_file(pki: Pki) -> str:
    return pki.ca_file
