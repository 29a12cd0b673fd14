"""The product as itself on the control plane: the ServiceAccounts and RBAC that ``deploy/`` ships, applied
as a platform team applies them, and the tokens the worker and the watcher authenticate with.

The objects come from rendering the kustomizations (kubectl from the virtualenv) and keeping what
authorizes: Namespace, ServiceAccounts, (Cluster)Roles and their bindings. The Deployments, the Job and the
settings ConfigMap are the processes, which tests and ``dev`` start themselves. KServe's namespace is a
setting of the product (``POD_NAMESPACE``), so the Role that reads KServe's configuration is re-applied in
whichever namespace plays that part; in the namespaced shape each managed namespace gets the Roles of
``deploy/components/namespaced-rbac/namespace``. Tokens come from the TokenRequest API, as the kubelet
mounts them into a pod.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from llmisvc_devstack.controlplane import binaries
from llmisvc_devstack.controlplane.launcher import ControlPlane

Obj = dict[str, Any]
KUBECTL = Path(sys.executable).parent / "kubectl"
ROUTER_NAMESPACE = "llmisvc-router"
WORKER_ACCOUNT = "llmisvc-router-worker"
WATCHER_ACCOUNT = "llmisvc-router-watcher"
AUTHORIZING_KINDS = {
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
}
CONFIG_READER = "llmisvc-router-config-reader"
#: The kustomization per shape whose cluster-wide part is applied once per control plane.
SHAPES = {"cluster-wide": "deploy", "namespaced": "deploy/overlays/namespaced"}
NAMESPACE_ROLES = "deploy/components/namespaced-rbac/namespace"


@dataclass(frozen=True)
class ProductTokens:
    worker: str
    watcher: str


def render(path: str) -> list[Obj]:
    """``kubectl kustomize`` of a directory of the repository."""
    result = subprocess.run(
        [str(KUBECTL), "kustomize", str(binaries.REPO / path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def _authorizing(objects: Iterable[Obj]) -> list[Obj]:
    return [o for o in objects if o.get("kind") in AUTHORIZING_KINDS]


def rbac_objects(
    shape: str, kserve_namespaces: Iterable[str], managed_namespaces: Iterable[str] = ()
) -> list[Obj]:
    """What to apply for one shape: its cluster-wide objects, the KServe-config reader in each of
    ``kserve_namespaces`` and, in the namespaced shape, the per-namespace Roles in ``managed_namespaces``."""
    if shape not in SHAPES:
        raise ValueError(f"unknown RBAC shape {shape!r}; known: {', '.join(SHAPES)}")
    rendered = _authorizing(render(SHAPES[shape]))
    reader = [o for o in rendered if o["metadata"]["name"] == CONFIG_READER]
    fixed = [o for o in rendered if o["metadata"]["name"] != CONFIG_READER and _kept(o)]
    objects = fixed + [_moved(o, ns) for ns in kserve_namespaces for o in reader]
    if shape == "namespaced":
        per_namespace = _authorizing(render(NAMESPACE_ROLES))
        objects += [_moved(o, ns) for ns in managed_namespaces for o in per_namespace]
    return objects


def _kept(obj: Obj) -> bool:
    """The router's own namespace and what is cluster-scoped or in it; a Role rendered for an example
    namespace (the namespaced overlay's ``llm``) is replaced by the same Roles in each managed namespace."""
    if obj["kind"] == "Namespace":
        return bool(obj["metadata"]["name"] == ROUTER_NAMESPACE)
    return obj["metadata"].get("namespace") in (None, ROUTER_NAMESPACE)


def _moved(obj: Obj, namespace: str) -> Obj:
    moved = copy.deepcopy(obj)
    moved["metadata"]["namespace"] = namespace
    return moved


def apply(plane: ControlPlane, objects: Iterable[Obj]) -> None:
    """Server-side apply as the admin, the way ``kubectl apply --server-side`` does it."""
    manifest = yaml.safe_dump_all(list(objects))
    subprocess.run(
        [
            str(KUBECTL),
            "--kubeconfig",
            str(plane.admin_kubeconfig),
            "apply",
            "--server-side",
            "--field-manager=controlplane-setup",
            "-f",
            "-",
        ],
        input=manifest,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )


def tokens(plane: ControlPlane) -> ProductTokens:
    return ProductTokens(
        worker=plane.service_account_token(ROUTER_NAMESPACE, WORKER_ACCOUNT),
        watcher=plane.service_account_token(ROUTER_NAMESPACE, WATCHER_ACCOUNT),
    )
