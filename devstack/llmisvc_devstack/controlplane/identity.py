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
import functools
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

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


@functools.cache
def _rendered(path: str) -> str:
    result = subprocess.run(
        [str(KUBECTL), "kustomize", str(binaries.REPO / path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout


def render(path: str) -> list[Obj]:
    """``kubectl kustomize`` of a directory of the repository (rendered once per process)."""
    return [doc for doc in yaml.safe_load_all(_rendered(path)) if doc]


def _authorizing(objects: Iterable[Obj]) -> list[Obj]:
    return [o for o in objects if o.get("kind") in AUTHORIZING_KINDS]


def rbac_objects(
    shape: str,
    kserve_namespaces: Iterable[str],
    managed_namespaces: Iterable[str] = (),
    only_namespaced: bool = False,
) -> list[Obj]:
    """What to apply for one shape: its cluster-wide objects (unless ``only_namespaced``), the KServe-config
    reader in each of ``kserve_namespaces`` and, in the namespaced shape, the per-namespace Roles in
    ``managed_namespaces``."""
    if shape not in SHAPES:
        raise ValueError(f"unknown RBAC shape {shape!r}; known: {', '.join(SHAPES)}")
    rendered = _authorizing(render(SHAPES[shape]))
    reader = [o for o in rendered if o["metadata"]["name"] == CONFIG_READER]
    fixed = [o for o in rendered if o["metadata"]["name"] != CONFIG_READER and _kept(o)]
    objects = [] if only_namespaced else fixed
    objects += [_moved(o, ns) for ns in kserve_namespaces for o in reader]
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
    """Create the objects as the admin (those that exist already are left as they are): Namespaces,
    ServiceAccounts and RBAC objects only, through their typed APIs."""
    with plane.admin("controlplane-setup") as api:
        core, rbac = k8s.CoreV1Api(api), k8s.RbacAuthorizationV1Api(api)
        # The typed methods take dict bodies as they are; only their annotations say otherwise.
        creators: dict[str, tuple[Callable[..., object], bool]] = {
            "Namespace": (core.create_namespace, False),
            "ServiceAccount": (core.create_namespaced_service_account, True),
            "ClusterRole": (rbac.create_cluster_role, False),
            "ClusterRoleBinding": (rbac.create_cluster_role_binding, False),
            "Role": (rbac.create_namespaced_role, True),
            "RoleBinding": (rbac.create_namespaced_role_binding, True),
        }
        for obj in objects:
            try:
                create, namespaced = creators[obj["kind"]]
                create(obj["metadata"]["namespace"], obj) if namespaced else create(obj)
            except ApiException as err:
                if err.status != 409:
                    raise


def tokens(plane: ControlPlane) -> ProductTokens:
    return ProductTokens(
        worker=plane.service_account_token(ROUTER_NAMESPACE, WORKER_ACCOUNT),
        watcher=plane.service_account_token(ROUTER_NAMESPACE, WATCHER_ACCOUNT),
    )
