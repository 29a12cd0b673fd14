"""The real control plane under the tests: one per test session (per variant), a namespace per test.

:func:`shared_plane` starts a :class:`~llmisvc_devstack.controlplane.ControlPlane` the first time a test
asks for it (``tests/conftest.py`` stops it at the end of the session), applies the RBAC that ``deploy/``
ships and mints the worker's and the watcher's ServiceAccount tokens, so the product runs as itself: a
call its RBAC does not allow is a 403 and fails the test.

:func:`test_cluster` gives one test its own view of that plane: a namespace of its own, a KServe
namespace of its own (``POD_NAMESPACE`` of the product: the well-known presets, the ingress Gateway and
``inferenceservice-config`` live there, so no test sees another's), and a fault-injecting, counting
proxy (``llmisvc_devstack.proxy``) in front of kube-apiserver that the product talks through, whose
counters and faults are the test's alone. The test's own requests go through the proxy too, told apart
by User-Agent. Namespaces are deleted when the test ends (the namespace controller empties them); the
test does not wait for that.
"""

from __future__ import annotations

import atexit
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from llmisvc_core.world.config import Environment
from llmisvc_devstack.controlplane import ControlPlane, identity, pki, write_kubeconfig
from llmisvc_devstack.proxy import ApiProxy, FaultInjector, RequestCounter
from llmisvc_runtime.environment import environment_from

#: Variants of the shared plane: the RBAC shape applied and the CRDs installed at start.
VARIANTS: dict[str, tuple[str, str]] = {
    "default": ("cluster-wide", "all"),
    "namespaced-rbac": ("namespaced", "all"),
}


@dataclass
class Plane:
    """A started control plane with the product's identity on it."""

    control: ControlPlane
    shape: str
    tokens: identity.ProductTokens
    proxy_cert: tuple[Path, Path]

    def token(self, role: str) -> str:
        return {
            "admin": self.control.admin_token,
            "worker": self.tokens.worker,
            "watcher": self.tokens.watcher,
        }[role]


_planes: dict[str, Plane] = {}
_lock = threading.Lock()


def start_plane(variant: str = "default", crd_selection: str | None = None) -> Plane:
    """A new control plane of ``variant`` with the product's identity on it; ``crd_selection`` overrides
    the variant's CRDs (``"llmisvc"``: KServe's alone, Gateway API and the InferencePools missing). The
    caller stops it (``plane.control.stop()``)."""
    shape, default_crds = VARIANTS[variant]
    control = ControlPlane.start(crd_selection=default_crds if crd_selection is None else crd_selection)
    try:
        identity.apply(control, identity.rbac_objects(shape, kserve_namespaces=[]))
        tokens = identity.tokens(control)
        cert = pki.sign_serving(control.pki, control.workdir / "pki", "proxy")
    except BaseException:
        control.stop()
        raise
    return Plane(control, shape, tokens, cert)


def shared_plane(variant: str = "default") -> Plane:
    """The session's control plane of ``variant``, started on first use."""
    with _lock:
        if variant not in _planes:
            _planes[variant] = start_plane(variant)
        return _planes[variant]


def stop_planes() -> None:
    with _lock:
        for plane in _planes.values():
            plane.control.stop()
        _planes.clear()


atexit.register(stop_planes)  # a session that ends abnormally still stops its processes


@dataclass
class Cluster:
    """One test's namespaces on a shared plane, and the proxy the product reaches it through."""

    plane: Plane
    proxy: ApiProxy
    namespace: str
    kserve_namespace: str

    @property
    def url(self) -> str:
        return self.proxy.url

    @property
    def faults(self) -> FaultInjector:
        return self.proxy.faults

    @property
    def counter(self) -> RequestCounter:
        return self.proxy.counter

    @property
    def control(self) -> ControlPlane:
        return self.plane.control

    @property
    def env(self) -> Environment:
        """The product's process settings for this test: its KServe namespace is the test's."""
        return environment_from({"POD_NAMESPACE": self.kserve_namespace})

    def api_client(
        self, user_agent: str, role: str = "admin", retries: Any = None, direct: bool = False
    ) -> k8s.ApiClient:
        """A client as ``role`` (``admin``, ``worker``, ``watcher``) through the proxy (``direct``: to
        kube-apiserver itself, uncounted and unfaulted)."""
        return self.control.api_client(
            user_agent, token=self.plane.token(role), url=None if direct else self.url, retries=retries
        )

    def kubeconfig(self, path: Path, role: str = "admin", direct: bool = False) -> Path:
        """A kubeconfig for ``role``, for a process or ``kubectl`` (through the proxy unless ``direct``)."""
        url = self.control.url if direct else self.url
        return write_kubeconfig(path, url, self.control.ca_file, self.plane.token(role), user=role)

    def manage(self, *namespaces: str) -> None:
        """Create more namespaces for the test (deleted with it) and, in the namespaced RBAC shape, the
        product's Roles in them."""
        self._create_namespaces(namespaces)
        self._extra.extend(namespaces)
        if self.plane.shape == "namespaced":
            identity.apply(
                self.control, identity.rbac_objects("namespaced", [], namespaces, only_namespaced=True)
            )

    def _create_namespaces(self, names: tuple[str, ...] | list[str]) -> None:
        with self.control.admin("test-setup") as api:
            core = k8s.CoreV1Api(api)
            for name in names:
                core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))

    def _delete_namespaces(self) -> None:
        with self.control.admin("test-teardown") as api:
            core = k8s.CoreV1Api(api)
            for name in [self.namespace, self.kserve_namespace, *self._extra]:
                try:
                    core.delete_namespace(name)
                except ApiException as err:
                    if err.status != 404:
                        raise

    def __post_init__(self) -> None:
        self._extra: list[str] = []


@contextmanager
def test_cluster(plane: Plane, prefix: str = "it", suffix: str | None = None) -> Iterator[Cluster]:
    """Namespaces ``<prefix>-<suffix>`` and ``kserve-<suffix>`` with the product's RBAC in them, and a
    proxy of the test's own; all gone when the block ends. ``suffix``: a given one (default: random), so
    that two planes can have namespaces of the same names (several clusters, one Temporal namespace)."""
    suffix = suffix or uuid.uuid4().hex[:8]
    namespace, kserve_namespace = f"{prefix}-{suffix}", f"kserve-{suffix}"
    cert, key = plane.proxy_cert
    proxy = ApiProxy(
        plane.control.url, ca_file=str(plane.control.ca_file), certfile=str(cert), keyfile=str(key)
    )
    cluster = Cluster(plane, proxy.start(), namespace, kserve_namespace)
    try:
        cluster._create_namespaces([namespace, kserve_namespace])
        managed = [namespace] if plane.shape == "namespaced" else []
        identity.apply(
            plane.control,
            identity.rbac_objects(plane.shape, [kserve_namespace], managed, only_namespaced=True),
        )
        yield cluster
    finally:
        proxy.stop()
        cluster._delete_namespaces()


test_cluster.__test__ = False  # type: ignore[attr-defined]  # a helper: pytest must not collect it where imported
