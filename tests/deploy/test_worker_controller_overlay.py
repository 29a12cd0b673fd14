"""The temporal-worker-controller overlay: its built-in objects validate against the Kubernetes schemas, its
``WorkerDeployment`` and ``Connection`` against the controller's vendored CRDs as the pinned kube-apiserver
checks them (the CRDs installed on the session's plane; a server-side dry-run create with strict field
validation: structural schema, unknown fields, CEL rules), and its worker pod is the base worker's, left for
the controller to version."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from llmisvc_devstack.controlplane import ControlPlane
from tests.cluster import Plane
from tests.deploy.dry_run import dry_run_apply, existing_namespaces, installed_crds, namespaces_of
from tests.deploy.test_manifests import KUBERNETES_VERSION, WORKER_CONTROLLER, render

VENDORED = Path(__file__).with_name("vendored_crds")
CRD_FILES = {
    "WorkerDeployment": "temporal.io_workerdeployments.yaml",
    "Connection": "temporal.io_connections.yaml",
}
PLURALS = {"WorkerDeployment": "workerdeployments", "Connection": "connections"}
IMAGE = "ghcr.io/llmisvc-router/llmisvc-router"


@pytest.fixture(scope="module")
def controller_crds(plane: Plane) -> Iterator[ControlPlane]:
    """The session's plane with the controller's CRDs installed for the module."""
    with installed_crds(plane.control, [VENDORED / name for name in CRD_FILES.values()]):
        yield plane.control


def refusal(control: ControlPlane, obj: dict[str, Any]) -> tuple[int, str] | None:
    """What kube-apiserver with the CRDs answers to a dry-run create of ``obj`` with strict field
    validation (what ``kubectl apply`` asks for): None when accepted, else the status code and message."""
    group, _, version = obj["apiVersion"].partition("/")
    with control.admin("deploy-test") as api:
        custom: Any = k8s.CustomObjectsApi(api)
        try:
            custom.create_namespaced_custom_object(
                group,
                version,
                obj["metadata"]["namespace"],
                PLURALS[obj["kind"]],
                obj,
                dry_run="All",
                field_validation="Strict",
            )
        except ApiException as err:
            return err.status, str(json.loads(err.body or "{}").get("message"))
    return None


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return render(WORKER_CONTROLLER)


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_custom_resources_validate_against_the_controllers_crds(controller_crds, objects):
    custom = [o for o in objects if o["kind"] in CRD_FILES]
    assert sorted(o["kind"] for o in custom) == ["Connection", "WorkerDeployment"]
    for obj in custom:
        assert refusal(controller_crds, obj) is None, obj["kind"]


def test_the_apiserver_accepts_the_whole_overlay_in_a_server_side_dry_run(controller_crds, objects):
    with existing_namespaces(controller_crds, namespaces_of(objects)):
        applied = dry_run_apply(controller_crds, objects)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.count("(server dry run)") == len(objects), applied.stdout


def test_every_built_in_object_validates_against_its_schema(objects):
    for obj in objects:
        if obj["kind"] not in CRD_FILES:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            lambda s: s["rollout"].update(steps=[{"rampPercentage": 10, "pauseDuration": "10s"}]),
            (422, "spec.rollout.steps[0]: Invalid value: pause duration must be at least 30s"),
            id="pause-shorter-than-30s",
        ),
        pytest.param(
            lambda s: s["rollout"].pop("steps"),
            (422, "spec.rollout: Invalid value: steps are required for Progressive rollout"),
            id="progressive-without-steps",
        ),
        pytest.param(
            lambda s: s["workerOptions"].update(unsafeCustomBuildID="-bad"),
            (422, "spec.workerOptions.unsafeCustomBuildID: Invalid value"),
            id="build-id-pattern",
        ),
        pytest.param(
            lambda s: s["workerOptions"].update(connection="x"),
            (400, 'unknown field "spec.workerOptions.connection"'),
            id="unknown-field",
        ),
    ],
)
def test_the_apiserver_refuses_a_worker_deployment_the_crd_does_not_allow(
    controller_crds, objects, change, expected
):
    """The check above can fail: the CRD's own rules, reached through the overlay's object, refused by
    kube-apiserver with its own code and message."""
    worker = copy.deepcopy(by_kind(objects, "WorkerDeployment")[0])
    change(worker["spec"])
    answer = refusal(controller_crds, worker)
    assert answer is not None, "accepted"
    code, message = answer
    assert (code, expected[1] in message) == (expected[0], True), message


def test_the_controller_runs_the_base_workers_pod(objects):
    """Same pod as ``deploy/`` runs: only the Deployment around it is the controller's."""
    [worker] = by_kind(objects, "WorkerDeployment")
    base = {o["metadata"]["name"]: o for o in render("deploy") if o["kind"] == "Deployment"}
    assert worker["spec"]["template"] == base["llmisvc-router-worker"]["spec"]["template"]
    assert worker["spec"]["replicas"] == base["llmisvc-router-worker"]["spec"]["replicas"]
    deployments = {o["metadata"]["name"] for o in by_kind(objects, "Deployment")}
    assert deployments == {"llmisvc-router-watcher"}, "the worker's Deployments are the controller's"


def test_the_worker_takes_its_version_from_the_controller(objects):
    """The controller sets TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID in the pods; a setting of
    our own would override them and every build would register as the same version."""
    [worker] = by_kind(objects, "WorkerDeployment")
    [settings] = by_kind(objects, "ConfigMap")
    [container] = worker["spec"]["template"]["spec"]["containers"]
    ours = {"LLMISVC_ROUTER_DEPLOYMENT_NAME", "LLMISVC_ROUTER_BUILD_ID"}
    assert not ours & {e["name"] for e in container.get("env", [])}
    assert not [key for key in ours if settings["data"].get(key)]
    assert "." not in f"{worker['metadata']['namespace']}/{worker['metadata']['name']}", (
        "Temporal deployment names cannot contain '.'"
    )


def test_the_connection_and_namespace_match_the_settings(objects):
    [worker] = by_kind(objects, "WorkerDeployment")
    [connection] = by_kind(objects, "Connection")
    [settings] = by_kind(objects, "ConfigMap")
    assert worker["spec"]["workerOptions"]["connectionRef"]["name"] == connection["metadata"]["name"]
    assert connection["spec"]["hostPort"] == settings["data"]["TEMPORAL_ADDRESS"]
    assert worker["spec"]["workerOptions"]["temporalNamespace"] == settings["data"]["TEMPORAL_NAMESPACE"]


def test_one_image_tag_rolls_the_watcher_and_the_worker_together(objects):
    kinds = ("Deployment", "Job", "WorkerDeployment")
    pods = [o["spec"]["template"]["spec"] for o in objects if o["kind"] in kinds]
    images = {c["image"] for pod in pods for c in pod["containers"]}
    assert len(images) == 1 and next(iter(images)).startswith(f"{IMAGE}:"), images
