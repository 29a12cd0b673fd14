"""An upgrade is ``kubectl apply`` of the same manifests with a new image: the base, applied for real
(server-side, stored) to the pinned kube-apiserver, then applied again with every image changed, is
accepted. The search attributes are registered by an init container of the watcher, not by a Job,
because a Job's pod template is immutable: the second test shows the apply a Job would meet."""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Iterable
from typing import Any

import yaml

from llmisvc_devstack.controlplane import ControlPlane
from tests.cluster import Plane
from tests.deploy.dry_run import existing_namespaces, namespaces_of
from tests.deploy.test_manifests import render
from tests.tools import KUBECTL

Obj = dict[str, Any]
FIELD_MANAGER = "deploy-reapply-test"


def apply(control: ControlPlane, objects: Iterable[Obj]) -> subprocess.CompletedProcess[str]:
    """``kubectl apply --server-side`` as the admin, stored (conflicts with the RBAC the suite applied
    under another manager are forced: the same objects)."""
    return subprocess.run(
        [
            KUBECTL, "--kubeconfig", str(control.admin_kubeconfig), "apply", "--server-side",
            "--force-conflicts", f"--field-manager={FIELD_MANAGER}", "-f", "-",
        ],
        input=yaml.safe_dump_all(list(objects)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip


def with_image(objects: list[Obj], image: str) -> list[Obj]:
    """``objects`` with every container and init container of their pod templates running ``image``."""
    changed = copy.deepcopy(objects)
    for obj in changed:
        pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in [*pod.get("containers", []), *pod.get("initContainers", [])]:
            container["image"] = image
    return changed


def images(objects: list[Obj]) -> set[str]:
    return {
        c["image"]
        for o in objects
        for c in [*o.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []),
                  *o.get("spec", {}).get("template", {}).get("spec", {}).get("initContainers", [])]
    }  # fmt: skip


def test_the_base_applied_again_with_a_new_image_is_accepted(plane: Plane) -> None:
    objects = render("deploy/base")
    assert images(objects) == {"ghcr.io/llmisvc-router/llmisvc-router:0.1.0"}
    assert not [o for o in objects if o["kind"] == "Job"]
    with existing_namespaces(plane.control, namespaces_of(objects)):
        first = apply(plane.control, objects)
        assert first.returncode == 0, first.stderr
        again = apply(plane.control, objects)  # unchanged: a no-op
        assert again.returncode == 0, again.stderr
        upgraded = apply(plane.control, with_image(objects, "ghcr.io/llmisvc-router/llmisvc-router:0.2.0"))
        assert upgraded.returncode == 0, upgraded.stderr
        assert "deployment.apps/llmisvc-router-watcher serverside-applied" in upgraded.stdout


def test_a_job_applied_again_with_a_new_image_is_refused(plane: Plane) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "register-once", "namespace": "reapply-job"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "OnFailure",
                    "containers": [{"name": "register", "image": "llmisvc-router:0.1.0"}],
                }
            }
        },
    }
    with existing_namespaces(plane.control, ["reapply-job"]):
        assert apply(plane.control, [job]).returncode == 0
        refused = apply(plane.control, with_image([job], "llmisvc-router:0.2.0"))
    assert refused.returncode != 0
    assert "field is immutable" in refused.stderr
