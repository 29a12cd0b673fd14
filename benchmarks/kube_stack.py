"""The Kubernetes side of a benchmark or chaos run, every part its own OS process as in a cluster: the
control plane (etcd, kube-apiserver and kube-controller-manager, :class:`ControlPlane`), the fault proxy
in front of kube-apiserver (``python -m llmisvc_devstack.proxy``, driven and read through its
:class:`ControlClient`), and the simulated gateway and workload controllers
(``python -m llmisvc_devstack.controllers``).

The product runs as itself: ``deploy/``'s ServiceAccounts and RBAC are applied, and the worker and the
watcher get kubeconfigs with their own ServiceAccount tokens that point at the proxy, so every request
they make is counted there and can be faulted. The run's own requests and the simulated controllers'
go to kube-apiserver directly, as the admin: neither counted nor faulted, so the proxy's counters are
the product's alone. Nothing of the product is imported here (the chaos suite measures from outside).
"""

from __future__ import annotations

import sys
from pathlib import Path

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from benchmarks.procs import Proc, free_port, wait_until
from llmisvc_devstack.controlplane import ControlPlane, identity, pki, write_kubeconfig
from llmisvc_devstack.proxy import ControlClient

KSERVE_NAMESPACE = "kserve"
ROLES = ("worker", "watcher")
#: The simulated controllers' User-Agents start so (``llmisvc_devstack.controllers``).
CONTROLLER_AGENT = "simulated-"
START_TIMEOUT = 60.0


class KubeStack:
    """A control plane with the product's identity on it, the proxy and the simulated controllers."""

    def __init__(
        self, workdir: Path, plane: ControlPlane, owns_plane: bool, controller_args: list[str]
    ) -> None:
        self.workdir, self.plane, self.owns_plane = workdir, plane, owns_plane
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.tokens = identity.ProductTokens(worker="", watcher="")  # minted once the RBAC is applied
        port = free_port()
        self.url = f"https://127.0.0.1:{port}"
        self.control = ControlClient(self.url, ca_file=str(plane.ca_file))
        cert, key = pki.sign_serving(plane.pki, self.workdir, "proxy")
        argv = [sys.executable, "-m", "llmisvc_devstack.proxy", "--upstream", plane.url]
        argv += ["--ca-file", str(plane.ca_file), "--cert", str(cert), "--key", str(key), "--port", str(port)]
        self.proxy = Proc("proxy", [*argv, "--fault-seed", "13"], self.workdir / "proxy.log")
        argv = [
            sys.executable,
            "-m",
            "llmisvc_devstack.controllers",
            "--kubeconfig",
            str(plane.admin_kubeconfig),
        ]
        self.controllers = Proc("controllers", argv + controller_args, self.workdir / "controllers.log")

    @classmethod
    def start(
        cls,
        workdir: Path,
        plane: ControlPlane | None = None,
        kserve_namespace: str = KSERVE_NAMESPACE,
        controller_args: list[str] | None = None,
    ) -> KubeStack:
        """On ``plane`` (default: a new control plane, stopped with the stack): the product's RBAC, the
        KServe namespace, the proxy and the controllers, each serving when this returns."""
        owns = plane is None
        started = ControlPlane.start(workdir / "controlplane") if plane is None else plane
        stack = cls(workdir, started, owns, controller_args or [])
        try:
            stack._apply_identity(kserve_namespace)
            stack.proxy.start()
            wait_until(stack.control.healthy, "the API proxy", START_TIMEOUT)
            stack.controllers.start().wait_for_line("controllers running", START_TIMEOUT)
        except BaseException:
            stack.stop()
            raise
        return stack

    def _apply_identity(self, kserve_namespace: str) -> None:
        with self.plane.admin("kube-stack-setup") as api:
            try:
                k8s.CoreV1Api(api).create_namespace(
                    k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=kserve_namespace))
                )
            except ApiException as err:
                if err.status != 409:
                    raise
        identity.apply(self.plane, identity.rbac_objects("cluster-wide", [kserve_namespace]))
        self.tokens = identity.tokens(self.plane)
        for role in ROLES:
            token = getattr(self.tokens, role)
            write_kubeconfig(self.kubeconfig(role), self.url, self.plane.ca_file, token, user=role)

    def kubeconfig(self, role: str) -> Path:
        """The kubeconfig of ``worker`` or ``watcher`` (through the proxy), or ``admin`` (direct)."""
        return self.plane.admin_kubeconfig if role == "admin" else self.workdir / f"{role}.kubeconfig"

    @property
    def api_url(self) -> str:
        """kube-apiserver itself, for the run's own requests."""
        return self.plane.url

    @property
    def ca_file(self) -> Path:
        return self.plane.ca_file

    @property
    def admin_token(self) -> str:
        return self.plane.admin_token

    def client(self, user_agent: str, role: str = "admin", connections: int | None = None) -> k8s.ApiClient:
        """An official client as ``role``: the admin to kube-apiserver, ``worker`` or ``watcher`` through
        the proxy; ``connections`` kept open at most (the client's default when None)."""
        configuration = k8s.Configuration()
        configuration.host = self.plane.url if role == "admin" else self.url
        configuration.ssl_ca_cert = str(self.plane.ca_file)
        token = self.plane.admin_token if role == "admin" else getattr(self.tokens, role)
        configuration.api_key = {"authorization": token}
        configuration.api_key_prefix = {"authorization": "Bearer"}
        configuration.retries = False
        if connections is not None:
            configuration.connection_pool_maxsize = connections
        api = k8s.ApiClient(configuration)
        api.user_agent = user_agent
        return api

    def processes(self) -> list[Proc]:
        return [self.proxy, self.controllers]

    def stop(self) -> None:
        self.controllers.stop()
        self.proxy.stop()
        if self.owns_plane:
            self.plane.stop()
