"""The temporal-worker-controller overlay: its built-in objects validate against the Kubernetes schemas, its
``WorkerDeployment`` and ``Connection`` against the controller's vendored CRDs (structural schema, unknown
fields refused, CEL rules, as kube-apiserver checks them on apply), and its worker pod is the base worker's,
left for the controller to version."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from apiserver_standin import cel_rules, schema
from tests.deploy.test_manifests import KUBERNETES_VERSION, render

OVERLAY = "deploy/overlays/temporal-worker-controller"
VENDORED = Path(__file__).with_name("vendored_crds")
CRD_FILES = {
    "WorkerDeployment": "temporal.io_workerdeployments.yaml",
    "Connection": "temporal.io_connections.yaml",
}
IMAGE = "ghcr.io/llmisvc-router/llmisvc-router"


@functools.cache
def crd(kind: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((VENDORED / CRD_FILES[kind]).read_text())
    return loaded


def crd_errors(obj: dict[str, Any]) -> list[str]:
    """What a cluster with the CRD installed answers to ``kubectl apply`` of ``obj`` (strict field
    validation): unknown fields, schema violations, then the CEL rules; empty when it is accepted."""
    definition = crd(obj["kind"])
    group, _, version = obj["apiVersion"].partition("/")
    assert group == definition["spec"]["group"], obj["apiVersion"]
    served = {v["name"]: v for v in definition["spec"]["versions"] if v["served"]}
    assert version in served, f"{obj['kind']} {version} is not served by the CRD"
    openapi = served[version]["schema"]["openAPIV3Schema"]
    unknown = schema.unknown_fields(obj, openapi, root=True)
    if unknown:
        return [f'{path}: unknown field "{path}"' for path in unknown]
    errors: schema.Errors = []
    normalized = schema.normalize(copy.deepcopy(obj), openapi, root=True)
    schema.validate(normalized, openapi, "", errors)
    if not errors:
        cel_rules.check(normalized, cel_rules.MISSING, openapi, "", errors)
    return [f"{cause[0]}: {cause[1]}" for cause in errors]


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return render(OVERLAY)


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_custom_resources_validate_against_the_controllers_crds(objects):
    custom = [o for o in objects if o["kind"] in CRD_FILES]
    assert sorted(o["kind"] for o in custom) == ["Connection", "WorkerDeployment"]
    for obj in custom:
        assert crd_errors(obj) == [], obj["kind"]


def test_every_built_in_object_validates_against_its_schema(objects):
    for obj in objects:
        if obj["kind"] not in CRD_FILES:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            lambda s: s["rollout"].update(steps=[{"rampPercentage": 10, "pauseDuration": "10s"}]),
            'spec.rollout.steps[0]: Invalid value: "object": pause duration must be at least 30s',
            id="pause-shorter-than-30s",
        ),
        pytest.param(
            lambda s: s["rollout"].pop("steps"),
            'spec.rollout: Invalid value: "object": steps are required for Progressive rollout',
            id="progressive-without-steps",
        ),
        pytest.param(
            lambda s: s["workerOptions"].update(unsafeCustomBuildID="-bad"),
            "spec.workerOptions.unsafeCustomBuildID: Invalid value",
            id="build-id-pattern",
        ),
        pytest.param(
            lambda s: s["workerOptions"].update(connection="x"),
            'spec.workerOptions.connection: unknown field "spec.workerOptions.connection"',
            id="unknown-field",
        ),
    ],
)
def test_the_crd_check_refuses_what_the_cluster_would(objects, change, expected):
    """The validation above can fail: the CRD's own rules, reached through the overlay's object."""
    worker = copy.deepcopy(by_kind(objects, "WorkerDeployment")[0])
    change(worker["spec"])
    errors = crd_errors(worker)
    assert any(e.startswith(expected) for e in errors), errors


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
