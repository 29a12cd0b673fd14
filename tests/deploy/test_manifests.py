"""The deployment as shipped: the kustomize manifests render, validate against the Kubernetes schemas
(offline, and as the pinned kube-apiserver takes them in a server-side dry-run apply) and follow the
security rules; the Dockerfile builds what the project is (checked statically: no container engine runs
here)."""

from __future__ import annotations

import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from llmisvc_devstack.controlplane.identity import CONFIG_READER
from llmisvc_runtime.probes import DEFAULT_PORT as DEFAULT_PROBE_PORT
from llmisvc_runtime.settings import DEFAULT_SHUTDOWN_GRACE
from tests.cluster import Plane
from tests.deploy.dry_run import dry_run_apply, existing_namespaces, namespaces_of
from tests.tools import KUBECTL

ROOT = Path(__file__).resolve().parents[2]
KUSTOMIZATIONS = [
    "deploy",
    "deploy/overlays/temporal-cloud",
    "deploy/overlays/payload-encryption",
    "deploy/overlays/namespaced",
]
WORKER_CONTROLLER = "deploy/overlays/temporal-worker-controller"
KUBERNETES_VERSION = "1.32.0"
GRACE_VARIABLE = "LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS"
DEFAULT_GRACE = int(DEFAULT_SHUTDOWN_GRACE.total_seconds())


def render(path: str) -> list[dict[str, Any]]:
    result = subprocess.run(
        [KUBECTL, "kustomize", str(ROOT / path)], capture_output=True, text=True, check=True, timeout=60
    )
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module", params=KUSTOMIZATIONS)
def objects(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(request.param)


def test_every_rendered_object_validates_against_its_schema(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


@pytest.fixture(scope="module")
def shipped_namespaces(plane: Plane) -> Iterator[None]:
    """The namespaces the shipped objects name, on the session's plane, for the module."""
    names = set().union(*(namespaces_of(render(path)) for path in KUSTOMIZATIONS))
    with existing_namespaces(plane.control, names):
        yield


def test_the_apiserver_accepts_every_rendered_object_in_a_server_side_dry_run(
    plane: Plane, shipped_namespaces: None, objects: list[dict[str, Any]]
) -> None:
    """The pinned kube-apiserver's own schemas (Deployments, Jobs, RBAC...), with KServe's and the Gateway
    API's CRDs installed: strict field validation, defaulting and admission, nothing stored."""
    applied = dry_run_apply(plane.control, objects)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.count("(server dry run)") == len(objects), applied.stdout


@pytest.mark.parametrize("path", [*KUSTOMIZATIONS, WORKER_CONTROLLER])
def test_the_kserve_config_reader_is_granted_in_kserves_namespace(path: str) -> None:
    """The Role that reads ``inferenceservice-config`` lives where the product looks for it
    (``POD_NAMESPACE``): an overlay's ``namespace:`` must not move it into the router's namespace."""
    objects = render(path)
    settings = next(o for o in objects if o["kind"] == "ConfigMap")
    kserve = settings["data"]["POD_NAMESPACE"]
    readers = [o for o in objects if o["metadata"]["name"] == CONFIG_READER]
    assert {(o["kind"], o["metadata"]["namespace"]) for o in readers} == {
        ("Role", kserve),
        ("RoleBinding", kserve),
    }


def test_rbac_has_no_wildcards(objects: list[dict[str, Any]]) -> None:
    rules = [rule for obj in objects if obj["kind"] in ("ClusterRole", "Role") for rule in obj["rules"]]
    assert rules
    for rule in rules:
        for field in ("verbs", "resources", "apiGroups"):
            assert "*" not in rule.get(field, []), rule


def test_workloads_run_as_non_root_with_a_read_only_root_filesystem(objects: list[dict[str, Any]]) -> None:
    pods = [o["spec"]["template"]["spec"] for o in objects if o["kind"] in ("Deployment", "Job")]
    assert pods
    for pod in pods:
        assert pod["securityContext"]["runAsNonRoot"] is True
        for container in [*pod["containers"], *pod.get("initContainers", [])]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"]["drop"] == ["ALL"]
            assert container["resources"]["limits"]["memory"]


def test_deployments_have_probes_and_read_temporal_settings(objects: list[dict[str, Any]]) -> None:
    deployments = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Deployment"}
    assert set(deployments) == {"llmisvc-router-worker", "llmisvc-router-watcher"}
    for deployment in deployments.values():
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        assert_http_probes(container)
        sources = {s.get("configMapRef", s.get("secretRef", {})).get("name") for s in container["envFrom"]}
        assert sources == {"llmisvc-router-settings", "llmisvc-router-temporal"}
    settings = next(o for o in objects if o["kind"] == "ConfigMap")
    assert {"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "LLMISVC_ROUTER_TASK_QUEUE"} <= set(settings["data"])


def assert_http_probes(container: dict[str, Any]) -> None:
    """Liveness on ``/healthz`` and readiness on ``/readyz`` of the ``probes`` port, the product's default
    (``llmisvc_runtime.probes``): served whether or not metrics are on, unlike the metrics port they
    replaced."""
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports["probes"] == DEFAULT_PROBE_PORT
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "probes"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "probes"}
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    assert env.get("LLMISVC_ROUTER_PROBE_PORT", str(DEFAULT_PROBE_PORT)) == str(DEFAULT_PROBE_PORT)


@pytest.mark.parametrize("path", [WORKER_CONTROLLER])
def test_the_worker_controllers_workers_have_the_http_probes(path: str) -> None:
    workers = [o for o in render(path) if o["kind"] == "WorkerDeployment"]
    assert workers
    for worker in workers:
        assert_http_probes(worker["spec"]["template"]["spec"]["containers"][0])


@pytest.mark.parametrize("path", [*KUSTOMIZATIONS, WORKER_CONTROLLER])
def test_the_pod_grace_period_exceeds_the_workers_shutdown_grace(path: str) -> None:
    """The kubelet's SIGKILL must not come before the worker's own grace for running activities ends
    (``LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS``, from the settings ConfigMap or the container, else the
    default), or a write under way is cut off after all."""
    objects = render(path)
    settings = next(o for o in objects if o["kind"] == "ConfigMap")["data"]
    workers = [
        (o["metadata"]["name"], o["spec"]["template"]["spec"])
        for o in objects
        if o.get("spec", {}).get("template", {}).get("spec", {}).get("containers")
        and o["spec"]["template"]["spec"]["containers"][0].get("args", [""])[0] in ("worker", "run")
    ]
    assert workers, f"{path} renders no worker"
    for name, pod in workers:
        env = {e["name"]: e.get("value") for e in pod["containers"][0].get("env", [])}
        grace = env.get(GRACE_VARIABLE) or settings.get(GRACE_VARIABLE) or DEFAULT_GRACE
        assert int(pod["terminationGracePeriodSeconds"]) > int(grace), f"{path}: {name}"


def init_containers(objects: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    (deployment,) = (o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == name)
    return list(deployment["spec"]["template"]["spec"].get("initContainers", []))


def test_the_cloud_overlay_uses_tls_and_does_not_register_search_attributes() -> None:
    objects = render("deploy/overlays/temporal-cloud")
    settings = next(o for o in objects if o["kind"] == "ConfigMap")
    assert settings["data"]["TEMPORAL_TLS"] == "true"
    assert init_containers(objects, "llmisvc-router-watcher") == []


def test_the_self_hosted_install_registers_search_attributes_before_the_watcher_starts() -> None:
    objects = render("deploy")
    (init,) = init_containers(objects, "llmisvc-router-watcher")
    assert init["args"] == ["register-search-attributes"]
    (watcher_deployment,) = (
        o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "llmisvc-router-watcher"
    )
    (watcher,) = watcher_deployment["spec"]["template"]["spec"]["containers"]
    assert init["image"] == watcher["image"] and init["envFrom"] == watcher["envFrom"]
    assert not [o for o in objects if o["kind"] == "Job"]  # a Job's template is immutable: no upgrade


DOCKERFILE = (ROOT / "Dockerfile").read_text()


def test_dockerfile_copies_only_files_that_exist() -> None:
    for line in DOCKERFILE.splitlines():
        if line.startswith("COPY") and "--from=" not in line:
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source


def test_dockerfile_copies_every_package_the_wheel_ships() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    copied = set(re.findall(r"^COPY (\w+)/ ", DOCKERFILE, flags=re.MULTILINE))
    assert copied == set(packages)


def test_the_image_carries_the_licence_and_the_notice() -> None:
    """In the build stage, for the installed package's .dist-info/licenses/, and beside the virtualenv."""
    copies = re.findall(r"^COPY (?!--from)([^\n]*)", DOCKERFILE, flags=re.MULTILINE)
    assert [c for c in copies if {"LICENSE", "NOTICE"} <= set(c.split()[:-1]) and c.endswith(" ./")]
    assert [c for c in copies if {"LICENSE", "NOTICE"} <= set(c.split()[:-1]) and c.endswith(" /app/")]


def test_the_image_installs_neither_the_dev_stack_nor_the_dev_group() -> None:
    assert "devstack" not in DOCKERFILE
    syncs = re.findall(r"^RUN uv sync ([^\n]*)", DOCKERFILE, flags=re.MULTILINE)
    assert syncs and all("--no-dev" in s and "--all-groups" not in s for s in syncs)


def test_dockerfile_entrypoint_is_the_console_script_and_runs_as_non_root() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "llmisvc-router" in project["project"]["scripts"]
    assert 'ENTRYPOINT ["/app/.venv/bin/llmisvc-router"]' in DOCKERFILE
    user = re.findall(r"^USER (\d+)", DOCKERFILE, flags=re.MULTILINE)
    assert user and int(user[-1]) != 0


def test_dockerfile_honours_the_lock_file() -> None:
    syncs = re.findall(r"^RUN uv sync ([^\n]*)", DOCKERFILE, flags=re.MULTILINE)
    assert syncs and all("--frozen" in s and "--no-dev" in s for s in syncs)


def test_the_payload_encryption_component_gives_worker_and_watcher_the_keys_from_a_secret() -> None:
    deployments = [o for o in render("deploy/overlays/payload-encryption") if o["kind"] == "Deployment"]
    assert {d["metadata"]["name"] for d in deployments} == {"llmisvc-router-worker", "llmisvc-router-watcher"}
    for deployment in deployments:
        pod = deployment["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["LLMISVC_ROUTER_CODEC_KEYS_FILE"] == "/etc/llmisvc-router/codec/keys.json"
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        assert (
            mounts["codec-keys"]["mountPath"] == "/etc/llmisvc-router/codec"
            and mounts["codec-keys"]["readOnly"]
        )
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["codec-keys"]["secret"]["secretName"] == "llmisvc-router-codec-keys"
