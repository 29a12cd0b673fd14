"""A control plane of the tests' own for what the shared ones cannot offer: a vendored CRD absent, or
installed and removed while a test runs.

The session's shared planes (:func:`tests.cluster.shared_plane`) have every vendored CRD installed and
other tests depend on that, so a test that needs "no InferencePool CRD" or removes the LLMInferenceService
CRD runs here instead. There is one such plane per session, started on first use (with the RBAC of
``deploy/`` and the product's tokens, as a shared one) and stopped when the session ends: starting one
costs 10-25 s, and the KServe CRDs take another ~20 s to become Established, so the plane is reused and
each test states the CRDs it needs. :func:`private_cluster` makes the installed CRDs exactly that
selection (installing what is missing, removing what is extra) before the test gets its namespaces and
proxy, so what a test installs or removes is undone for the next only where the next one cares.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from kubernetes import client as k8s

from llmisvc_devstack.controlplane import ControlPlane, crds
from tests.cluster import VARIANTS, Cluster, Plane, start_plane, test_cluster

SHAPE = VARIANTS["default"][0]  # the cluster-wide RBAC of deploy/

_planes: dict[str, Plane] = {}  # at most one, under SHAPE
_lock = threading.Lock()


def installed_crds(control: ControlPlane) -> set[str]:
    """The vendored CRDs installed on ``control`` now (by name)."""
    vendored = {spec.name for spec in crds.PROJECT_CRDS}
    with control.admin("private-plane") as api:
        listed = k8s.ApiextensionsV1Api(api).list_custom_resource_definition()
    return {str(crd.metadata.name) for crd in listed.items if crd.metadata} & vendored


def with_crds(control: ControlPlane, selection: str) -> None:
    """Make the vendored CRDs installed on ``control`` exactly those ``selection`` names."""
    wanted = {spec.name for spec in crds.select(selection)}
    have = installed_crds(control)
    if extra := sorted(have - wanted):
        control.remove_crds(extra)
    if missing := sorted(wanted - have):
        control.install_crds(missing)


def private_plane(selection: str) -> Plane:
    """The session's private plane, with exactly the vendored CRDs ``selection`` names installed."""
    with _lock:
        if SHAPE not in _planes:
            _planes[SHAPE] = start_plane("default", selection)  # the cluster-wide shape
        else:
            with_crds(_planes[SHAPE].control, selection)
        return _planes[SHAPE]


def stop_private_plane() -> None:
    with _lock:
        for plane in _planes.values():
            plane.control.stop()
        _planes.clear()


atexit.register(stop_private_plane)


@contextmanager
def private_cluster(selection: str, prefix: str = "it", suffix: str | None = None) -> Iterator[Cluster]:
    """One test's namespaces and proxy (as the ``cluster`` fixture's) on the private plane, with exactly
    the CRDs ``selection`` names installed when the block starts (``suffix``: as :func:`test_cluster`)."""
    with test_cluster(private_plane(selection), prefix, suffix) as cluster:
        yield cluster
