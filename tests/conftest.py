"""Fixtures every test folder may use: the real control plane (started on first use, once per session)
and one test's namespaces on it with a proxy of its own (``tests/cluster.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cluster import Cluster, Plane, shared_plane, stop_planes, test_cluster


@pytest.fixture(scope="session")
def plane() -> Iterator[Plane]:
    yield shared_plane()
    stop_planes()


@pytest.fixture
def cluster(plane: Plane) -> Iterator[Cluster]:
    with test_cluster(plane) as one:
        yield one
