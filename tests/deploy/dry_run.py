"""The shipped manifests before the real kube-apiserver: a server-side dry-run apply of rendered objects
(every schema, CEL rule and admission check the server runs, nothing stored), the namespaces the
manifests name, and CRDs of other projects installed for a module.

The objects name fixed namespaces (``llmisvc-router``, ``kserve``, the namespaced overlay's ``llm``): a
dry run of an object in a namespace that does not exist is refused, so the missing ones are created for
the module and deleted after it.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from llmisvc_devstack.controlplane import ControlPlane
from tests.tools import KUBECTL

Obj = dict[str, Any]
FIELD_MANAGER = "deploy-dry-run"


def dry_run_apply(control: ControlPlane, objects: Iterable[Obj]) -> subprocess.CompletedProcess[str]:
    """``kubectl apply --server-side --dry-run=server`` of ``objects`` as the admin, with strict field
    validation; conflicts with the fields others manage are forced (nothing is stored either way)."""
    return server_side_apply(control, objects, FIELD_MANAGER, "--dry-run=server", "--force-conflicts")


def server_side_apply(
    control: ControlPlane, objects: Iterable[Obj], field_manager: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    """``kubectl apply --server-side --validate=strict`` of ``objects`` as the admin, with ``flags``."""
    return subprocess.run(
        [
            KUBECTL,
            "--kubeconfig",
            str(control.admin_kubeconfig),
            "apply",
            "--server-side",
            *flags,
            "--validate=strict",
            f"--field-manager={field_manager}",
            "-f",
            "-",
        ],
        input=yaml.safe_dump_all(list(objects)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def namespaces_of(objects: Iterable[Obj]) -> set[str]:
    return {str(o["metadata"]["namespace"]) for o in objects if o["metadata"].get("namespace")}


@contextmanager
def existing_namespaces(control: ControlPlane, names: Iterable[str]) -> Iterator[None]:
    """The namespaces ``names`` exist for the block; those it created are deleted after it."""
    created = []
    with control.admin("deploy-test") as api:
        core = k8s.CoreV1Api(api)
        for name in sorted(set(names)):
            if _create_namespace(core, name):
                created.append(name)
    try:
        yield
    finally:
        with control.admin("deploy-test") as api:
            for name in created:
                k8s.CoreV1Api(api).delete_namespace(name)


def _create_namespace(core: Any, name: str, timeout: float = 60.0) -> bool:
    """Create the namespace unless it exists; one still being deleted (an earlier module's) is waited
    out first. Whether it was created."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))
            return True
        except ApiException as err:
            if err.status != 409:
                raise
        try:
            if core.read_namespace(name).status.phase != "Terminating":
                return False
        except ApiException as err:
            if err.status != 404:
                raise
        assert time.monotonic() < deadline, f"namespace {name} still terminating after {timeout:.0f}s"
        time.sleep(0.2)


@contextmanager
def installed_crds(control: ControlPlane, files: Iterable[Path], timeout: float = 60.0) -> Iterator[None]:
    """The CRDs in ``files`` installed and Established for the block, deleted after it."""
    manifests = [yaml.safe_load(path.read_text()) for path in files]
    names = [m["metadata"]["name"] for m in manifests]
    with control.admin("deploy-test") as api:
        extensions: Any = k8s.ApiextensionsV1Api(api)
        for manifest in manifests:
            extensions.create_custom_resource_definition(manifest)
        deadline = time.monotonic() + timeout
        while not all(_established(extensions.read_custom_resource_definition(n)) for n in names):
            assert time.monotonic() < deadline, f"CRDs not Established after {timeout:.0f}s: {names}"
            time.sleep(0.1)
    try:
        yield
    finally:
        with control.admin("deploy-test") as api:
            for name in names:
                k8s.ApiextensionsV1Api(api).delete_custom_resource_definition(name)


def _established(crd: Any) -> bool:
    conditions = (crd.status.conditions if crd.status else None) or []
    return any(c.type == "Established" and c.status == "True" for c in conditions)
