"""KServe's own LLMInferenceService controller as a peer process, against a control plane of the dev stack.

The binary is KServe's ``cmd/llmisvc`` at the pin of ``devstack/kserve/go.mod`` (v0.20.0, the served release
nearest the target commit; see that file), built by ``scripts/build-kserve`` into
``.tools/bin/kserve-llmisvc``. The fidelity test and ``benchmarks/bench_peer.py`` run it where this router
would run, to compare what the two write.

What the process needs and gets here: a kubeconfig (admin credentials: the peer is not the product, its
RBAC is not under test), ``POD_NAMESPACE`` naming the KServe namespace it reads ``inferenceservice-config``
and the well-known ``LLMInferenceServiceConfig`` presets from, free loopback ports for its webhook, metrics
and probe servers, and serving certificates for the webhook server. controller-runtime looks for those in
``$TMPDIR/k8s-webhook-server/serving-certs`` (``cmd/llmisvc`` has no flag for the directory), so each peer
gets a ``TMPDIR`` of its own. No webhook configuration is registered with kube-apiserver: the peer's
webhooks serve, unused, as the router has none either. Output goes to ``<workdir>/kserve-llmisvc.log``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from llmisvc_devstack.controlplane import pki
from llmisvc_devstack.controlplane.processes import Component, free_port

BINARY_NAME = "kserve-llmisvc"
#: What KServe's controller reads of ``inferenceservice-config`` besides ``ingress`` and refuses to run
#: without (``toConfig`` of ``pkg/controller/v1alpha2/llmisvc/config_loader.go`` parses them on every
#: reconcile; the router reads neither): the values of KServe's own ``config/configmap/inferenceservice.yaml``
#: at v0.20.0, as data.
PEER_CONFIG_DATA: dict[str, str] = {
    "storageInitializer": json.dumps(
        {
            "image": "kserve/storage-initializer:latest",
            "memoryRequest": "100Mi",
            "memoryLimit": "1Gi",
            "cpuRequest": "100m",
            "cpuLimit": "1",
            "caBundleConfigMapName": "",
            "caBundleVolumeMountPath": "/etc/ssl/custom-certs",
            "enableModelcar": True,
            "cpuModelcar": "10m",
            "memoryModelcar": "15Mi",
            "uidModelcar": 1010,
        }
    ),
    "credentials": json.dumps(
        {
            "storageSpecSecretName": "storage-config",
            "storageSecretNameAnnotation": "serving.kserve.io/storageSecretName",
            "gcs": {"gcsCredentialFileName": "gcloud-application-credentials.json"},
            "s3": {
                "s3AccessKeyIDName": "AWS_ACCESS_KEY_ID",
                "s3SecretAccessKeyName": "AWS_SECRET_ACCESS_KEY",
            },
        }
    ),
}
START_TIMEOUT = 90.0  # seconds to readyz: the manager syncs its caches of every kind it watches first


def binary_path(root: Path | None = None) -> Path:
    """``.tools/bin/kserve-llmisvc`` of the checkout (``root``: the checkout; default: this file's)."""
    root = root or Path(__file__).resolve().parents[2]
    return root / ".tools" / "bin" / BINARY_NAME


def _probe_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return int(answer.status) == 200
    except (urllib.error.URLError, OSError):
        return False


@dataclass
class KServePeer:
    """One KServe controller process; ``start`` waits for its readiness probe, ``stop`` ends it."""

    kubeconfig: Path
    kserve_namespace: str
    workdir: Path
    ca: pki.Pki  # the control plane's CA, which signs the webhook's serving certificate
    binary: Path = field(default_factory=binary_path)
    component: Component | None = field(default=None, repr=False)

    @property
    def log(self) -> Path:
        return self.workdir / f"{BINARY_NAME}.log"

    def start(self) -> float:
        """Start the controller and wait until it is ready; the seconds it took."""
        if not self.binary.is_file():
            raise FileNotFoundError(
                f"{self.binary}: KServe's controller is not built; run scripts/build-kserve"
            )
        tmp = self.workdir / "tmp"
        certs = tmp / "k8s-webhook-server" / "serving-certs"
        certs.mkdir(parents=True, exist_ok=True)
        cert, key = pki.sign_serving(self.ca, certs, "webhook")
        cert.rename(certs / "tls.crt")
        key.rename(certs / "tls.key")
        probes = free_port()
        command = [
            str(self.binary),
            f"--webhook-port={free_port()}",
            f"--metrics-addr=127.0.0.1:{free_port()}",
            "--metrics-secure=false",
            f"--health-probe-addr=127.0.0.1:{probes}",
            "--leader-elect=false",
        ]
        environment = {
            **os.environ,
            "KUBECONFIG": str(self.kubeconfig),
            "POD_NAMESPACE": self.kserve_namespace,
            "TMPDIR": str(tmp),
        }
        self.component = Component(
            BINARY_NAME,
            command,
            self.log,
            healthy=lambda: _probe_ok(f"http://127.0.0.1:{probes}/readyz"),
            start_timeout=START_TIMEOUT,
            env=environment,
        )
        return self.component.start()

    def stop(self) -> None:
        if self.component is not None:
            self.component.stop()

    def __enter__(self) -> KServePeer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
