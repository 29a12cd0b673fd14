"""The watcher tests' side of a cluster: a :class:`~tests.watcher.harness.World` on the test's namespaces."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cluster import Cluster

from .harness import World


@pytest.fixture
def world(cluster: Cluster) -> Iterator[World]:
    one = World(cluster)
    yield one
    one.close()
