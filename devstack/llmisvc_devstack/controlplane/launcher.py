"""A real Kubernetes control plane on loopback: etcd, kube-apiserver and kube-controller-manager.

What a cluster without nodes runs, as envtest does, and a little more: kube-apiserver serves TLS from a
fresh CA, authenticates an admin (a static token and a client certificate, both in ``system:masters``)
and service accounts (signed tokens, the TokenRequest API), authorizes with RBAC, and runs the admission
plugins a real cluster runs (NamespaceLifecycle among them, so a namespace being deleted refuses new
objects). kube-controller-manager runs only the controllers that matter without a kubelet: the garbage
collector (owner references), the namespace controller (deleting a namespace empties it) and the
service-account token controller, each with its own service-account credentials as in a real cluster.
The vendored CRDs (KServe, Gateway API, Inference Extension) are installed and Established before
:meth:`ControlPlane.start` returns.

Tests, benchmarks, the chaos suite and ``llmisvc-router dev`` start it the same way::

    with ControlPlane.start() as cp:
        client = cp.api_client("my-test")
        ...
"""

from __future__ import annotations

import json
import secrets
import shutil
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import yaml
from kubernetes import client as k8s

from llmisvc_devstack.controlplane import binaries, crds, pki
from llmisvc_devstack.controlplane.processes import Component, free_port, http_ok, https_ok

#: Room for a Service per LLMInferenceService (the EPP) at benchmark scale: a /24 fills at ~250.
SERVICE_CIDR = "10.0.0.0/16"
ISSUER = "https://kubernetes.default.svc.cluster.local"
#: kube-apiserver's defaults plus the ones a hosted cluster adds; listed so a reader sees what runs.
ADMISSION_PLUGINS = (
    "NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,"
    "MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,ResourceQuota,"
    "NodeRestriction,PodSecurity,Priority,StorageObjectInUseProtection,PersistentVolumeClaimResize,"
    "RuntimeClass,CertificateApproval,CertificateSigning,ClusterTrustBundleAttest,CertificateSubjectRestriction,"
    "DefaultIngressClass,TaintNodesByCondition"
)
#: Without a kubelet nothing else has work: no Deployment, ReplicaSet or Pod controllers.
CONTROLLERS = "garbage-collector-controller,namespace-controller,serviceaccount-token-controller"
ADMIN = "admin"
CONTROLLER_MANAGER = "system:kube-controller-manager"


@dataclass
class ControlPlane:
    """A running control plane; :meth:`start` makes one, :meth:`stop` (or the ``with`` block) ends it."""

    workdir: Path
    pki: pki.Pki
    etcd: Component
    apiserver: Component
    controller_manager: Component
    url: str
    etcd_url: str
    admin_token: str
    startup_seconds: dict[str, float] = field(default_factory=dict)
    owns_workdir: bool = True

    # --- starting and stopping ----------------------------------------------------------------------

    @classmethod
    def start(cls, workdir: Path | None = None, crd_selection: str = "all", quiet: bool = False) -> Self:
        """Build the binaries if needed, start the three processes and install ``crd_selection``."""
        found = binaries.ensure()
        owns = workdir is None
        root = Path(tempfile.mkdtemp(prefix="controlplane-")) if workdir is None else workdir
        root.mkdir(parents=True, exist_ok=True)
        keys = pki.create(root / "pki")
        admin_token = secrets.token_urlsafe(24)
        kcm_token = secrets.token_urlsafe(24)
        (root / "tokens.csv").write_text(
            f'{admin_token},{ADMIN},admin-uid,"system:masters"\n{kcm_token},{CONTROLLER_MANAGER},kcm-uid\n'
        )
        etcd_port, peer_port, api_port, kcm_port = (free_port() for _ in range(4))
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        url = f"https://127.0.0.1:{api_port}"
        logs = root / "logs"
        etcd = Component(
            "etcd",
            _etcd_command(found.etcd, root / "etcd", etcd_url, peer_port),
            logs / "etcd.log",
            lambda: http_ok(f"{etcd_url}/health"),
        )
        apiserver = Component(
            "kube-apiserver",
            _apiserver_command(found.kube_apiserver, root, keys, etcd_url, api_port),
            logs / "kube-apiserver.log",
            lambda: https_ok(f"{url}/readyz", keys.ca_cert, admin_token),
        )
        kcm_kubeconfig = write_kubeconfig(
            root / "kube-controller-manager.kubeconfig", url, keys.ca_cert, kcm_token
        )
        controller_manager = Component(
            "kube-controller-manager",
            _controller_manager_command(found.kube_controller_manager, root, keys, kcm_kubeconfig, kcm_port),
            logs / "kube-controller-manager.log",
            lambda: https_ok(f"https://127.0.0.1:{kcm_port}/healthz", None),
        )
        plane = cls(
            root, keys, etcd, apiserver, controller_manager, url, etcd_url, admin_token, owns_workdir=owns
        )
        try:
            for component in (etcd, apiserver, controller_manager):
                plane.startup_seconds[component.name] = component.start()
            started = time.monotonic()
            plane.install_crds(crd_selection)
            plane.startup_seconds["crds"] = time.monotonic() - started
        except BaseException:
            plane.stop()
            raise
        write_kubeconfig(plane.admin_kubeconfig, url, keys.ca_cert, admin_token)
        if not quiet:
            figures = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in plane.startup_seconds.items())
            print(
                f"control plane at {url} started in {sum(plane.startup_seconds.values()):.1f}s ({figures})",
                file=sys.stderr,
            )
        return plane

    def stop(self) -> None:
        for component in (self.controller_manager, self.apiserver, self.etcd):
            component.stop()
        if self.owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- clients --------------------------------------------------------------------------------------

    @property
    def admin_kubeconfig(self) -> Path:
        return self.workdir / "admin.kubeconfig"

    @property
    def ca_file(self) -> Path:
        return self.pki.ca_cert

    def api_client(
        self, user_agent: str, token: str | None = None, url: str | None = None, retries: Any = None
    ) -> k8s.ApiClient:
        """An official client for ``url`` (default: kube-apiserver) as ``token`` (default: the admin)."""
        configuration = k8s.Configuration()
        configuration.host = url or self.url
        configuration.ssl_ca_cert = str(self.ca_file)
        configuration.api_key = {"authorization": token or self.admin_token}
        configuration.api_key_prefix = {"authorization": "Bearer"}
        configuration.retries = retries
        api = k8s.ApiClient(configuration)
        api.user_agent = user_agent
        return api

    def service_account_token(self, namespace: str, name: str, seconds: int = 24 * 3600) -> str:
        """A token for ``namespace/name`` from the TokenRequest API, as the kubelet mounts one."""
        with self.admin() as api:
            request = k8s.AuthenticationV1TokenRequest(
                spec=k8s.V1TokenRequestSpec(audiences=[ISSUER], expiration_seconds=seconds)
            )
            answer = k8s.CoreV1Api(api).create_namespaced_service_account_token(name, namespace, request)
            assert answer.status is not None, "TokenRequest answered without a status"
            return str(answer.status.token)

    @contextmanager
    def admin(self, user_agent: str = "controlplane-admin") -> Iterator[k8s.ApiClient]:
        api = self.api_client(user_agent)
        try:
            yield api
        finally:
            api.close()  # type: ignore[no-untyped-call]

    # --- CRDs -----------------------------------------------------------------------------------------

    def install_crds(self, selection: str | Iterable[str] = "all", timeout: float = 60.0) -> list[str]:
        """Create the selected vendored CRDs (those absent) and wait until each is Established."""
        with self.admin() as api:
            return crds.install(k8s.ApiextensionsV1Api(api), selection, timeout)

    def remove_crds(self, selection: str | Iterable[str], timeout: float = 60.0) -> list[str]:
        """Delete the selected CRDs and wait until they are gone (their objects with them)."""
        with self.admin() as api:
            return crds.remove(k8s.ApiextensionsV1Api(api), selection, timeout)

    # --- faults on the real parts ---------------------------------------------------------------------

    def compact_etcd(self) -> int:
        """Compact etcd at its current revision: watches from an older resourceVersion then get a real 410
        once kube-apiserver's watch cache has moved past them. Returns the revision compacted at."""
        status = _etcd_post(self.etcd_url, "/v3/kv/range", {"key": "AA==", "limit": 1})
        revision = int(status["header"]["revision"])
        _etcd_post(self.etcd_url, "/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision


def _etcd_post(base: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return dict(json.loads(response.read()))


def write_kubeconfig(path: Path, url: str, ca_file: Path, token: str, user: str = "user") -> Path:
    """A kubeconfig for ``url`` authenticating with ``token`` (CA embedded by path)."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "controlplane", "cluster": {"server": url, "certificate-authority": str(ca_file)}}
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "controlplane", "context": {"cluster": "controlplane", "user": user}}],
        "current-context": "controlplane",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def _etcd_command(binary: Path, data: Path, client_url: str, peer_port: int) -> list[str]:
    peer = f"http://127.0.0.1:{peer_port}"
    return [
        str(binary),
        "--name=controlplane",
        f"--data-dir={data}",
        f"--listen-client-urls={client_url}",
        f"--advertise-client-urls={client_url}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=controlplane={peer}",
        "--unsafe-no-fsync",  # a test cluster on one disk: durability across power loss is not the point
        "--quota-backend-bytes=8589934592",  # the scale benchmark stores thousands of services
        "--log-level=warn",
    ]


def _apiserver_command(binary: Path, root: Path, keys: pki.Pki, etcd_url: str, port: int) -> list[str]:
    return [
        str(binary),
        f"--etcd-servers={etcd_url}",
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        f"--secure-port={port}",
        f"--tls-cert-file={keys.serving_cert}",
        f"--tls-private-key-file={keys.serving_key}",
        f"--client-ca-file={keys.ca_cert}",
        f"--token-auth-file={root / 'tokens.csv'}",
        "--authorization-mode=RBAC",
        f"--enable-admission-plugins={ADMISSION_PLUGINS}",
        f"--service-account-issuer={ISSUER}",
        f"--service-account-key-file={keys.sa_pub}",
        f"--service-account-signing-key-file={keys.sa_key}",
        f"--api-audiences={ISSUER}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        f"--cert-dir={root / 'apiserver-certs'}",
        "--endpoint-reconciler-type=none",  # no kubernetes Service endpoints for a loopback address
        "--allow-privileged=true",
        "--profiling=false",
        "--v=0",
    ]


def _controller_manager_command(
    binary: Path, root: Path, keys: pki.Pki, kubeconfig: Path, port: int
) -> list[str]:
    return [
        str(binary),
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--controllers={CONTROLLERS}",
        "--use-service-account-credentials=true",
        f"--service-account-private-key-file={keys.sa_key}",
        f"--root-ca-file={keys.ca_cert}",
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--cert-dir={root / 'kcm-certs'}",
        "--concurrent-gc-syncs=5",
        "--v=0",
    ]
