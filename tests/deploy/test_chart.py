"""The Helm chart (deploy/chart/llmisvc-router) with the pinned Helm (devstack/helm, built by
scripts/build-helm): it lints, renders with its defaults what the kustomize install renders (and with the
matching values what each overlay renders), refuses bad values with the schema's message, renders its
optional objects only when asked, alerts on metrics the code exports, and is taken by the real
kube-apiserver: a server-side dry run against its schemas (prometheus-operator's CRDs vendored) and an apply
onto a control plane of its own."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from kubernetes import client as k8s

from activities.api_telemetry import REQUESTS_METRIC
from llmisvc_devstack.controlplane import ControlPlane
from tests.cluster import Plane
from tests.deploy.dry_run import dry_run_apply, existing_namespaces, installed_crds, namespaces_of
from tests.deploy.test_manifests import KUBERNETES_VERSION, render
from tests.observability import dashboard
from tests.observability.failing_task import FAILED_TASKS
from tests.tools import KUBECTL
from watcher.service_gauge import SERVICES_METRIC
from workflows.drift_report import DRIFT_METRIC
from workflows.pass_telemetry import DURATION_METRIC, PASSES_METRIC

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
HELM = ROOT / ".tools" / "bin" / "helm"
CHART = ROOT / "deploy" / "chart" / "llmisvc-router"
RELEASE = NAMESPACE = "llmisvc-router"
VENDORED = Path(__file__).with_name("vendored_crds")
PROMETHEUS_CRDS = [
    VENDORED / f"monitoring.coreos.com_{plural}.yaml"
    for plural in ("servicemonitors", "podmonitors", "prometheusrules")
]
MONITORING_KINDS = {"ServiceMonitor", "PodMonitor", "PrometheusRule"}

#: The values that make the chart render each kustomization (the overlays' settings, as values).
KUSTOMIZED: dict[str, Obj] = {
    "deploy": {},
    "deploy/overlays/namespaced": {"rbac": {"scope": "namespaced"}, "namespaces": ["llm"]},
    "deploy/overlays/payload-encryption": {"payloadEncryption": {"enabled": True}},
    "deploy/overlays/temporal-cloud": {
        "temporal": {
            "address": "us-east-1.aws.api.temporal.io:7233",
            "namespace": "my-namespace.a1b2c",
            "tls": True,
            "registerSearchAttributes": False,
        }
    },
}
#: Every optional object on (one of the two monitors: the schema refuses both).
OPTIONAL_ON: Obj = {
    "worker": {"podDisruptionBudget": {"enabled": True}},
    "metrics": {
        "serviceMonitor": {"enabled": True, "labels": {"release": "kube-prometheus-stack"}},
        "prometheusRule": {"enabled": True, "alertLabels": {"team": "platform"}},
        "dashboard": {"enabled": True},
    },
}
POD_MONITOR: Obj = {"metrics": {"podMonitor": {"enabled": True}}}
VERSIONED: Obj = {
    "workerVersioning": {
        "deploymentName": "llmisvc-router",
        "builds": [{"buildId": "0.1.0-a", "imageTag": "0.1.0"}, {"buildId": "0.1.0-b", "replicas": 1}],
    }
}
#: What each optional value adds: (kind, name).
OPTIONAL_OBJECTS = {
    "worker.podDisruptionBudget": (
        {"worker": {"podDisruptionBudget": {"enabled": True}}},
        "PodDisruptionBudget",
    ),
    "metrics.serviceMonitor": ({"metrics": {"serviceMonitor": {"enabled": True}}}, "ServiceMonitor"),
    "metrics.podMonitor": (POD_MONITOR, "PodMonitor"),
    "metrics.prometheusRule": ({"metrics": {"prometheusRule": {"enabled": True}}}, "PrometheusRule"),
    "metrics.dashboard": ({"metrics": {"dashboard": {"enabled": True}}}, "ConfigMap"),
}

# What necessarily differs between a Helm release and `kubectl kustomize`, and nothing else:
# - Helm's standard labels on each object's metadata (the chart, the release, the manager, the app version),
#   which Helm and its users select releases by; kustomize has no release.
# - the pod templates' checksum/settings annotation: `helm upgrade` with a changed setting restarts the
#   pods through it, where the kustomize install asks for `kubectl rollout restart` (docs/operations.md).
# - the search-attribute Job's hook annotations: a Job's pod template is immutable, so Helm replaces the
#   Job at each install and upgrade instead of patching it.
# - the Namespace: `helm install --create-namespace` makes the release's namespace; a chart that rendered
#   it too could not be installed into it.
HELM_LABELS = {
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
}
HELM_ANNOTATIONS = {"helm.sh/hook", "helm.sh/hook-delete-policy", "checksum/settings"}


def helm(*args: str, values: Obj | None = None) -> subprocess.CompletedProcess[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
        yaml.safe_dump(values or {}, file)
        file.flush()
        return subprocess.run(
            [str(HELM), *args, "--values", file.name],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


def template(values: Obj | None = None) -> list[Obj]:
    result = helm("template", RELEASE, str(CHART), "--namespace", NAMESPACE, values=values)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def merged(*layers: Obj) -> Obj:
    out: Obj = {}
    for layer in layers:
        for key, value in layer.items():
            out[key] = (
                merged(out[key], value)
                if isinstance(value, dict) and isinstance(out.get(key), dict)
                else value
            )
    return out


def key(obj: Obj) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"]


def without_helm(obj: Obj) -> Obj:
    """``obj`` less what only a Helm release has (the list above HELM_LABELS)."""
    obj = copy.deepcopy(obj)
    metas = [obj["metadata"]]
    if template_meta := obj.get("spec", {}).get("template", {}).get("metadata"):
        metas.append(template_meta)
    for meta in metas:
        for field, helm_keys in (("labels", HELM_LABELS), ("annotations", HELM_ANNOTATIONS)):
            kept = {k: v for k, v in meta.get(field, {}).items() if k not in helm_keys}
            meta.pop(field, None)
            if kept:
                meta[field] = kept
    return obj


def containers(objects: list[Obj]) -> Iterator[Obj]:
    for obj in objects:
        yield from obj.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])


def has_tcp_probes(objects: list[Obj]) -> bool:
    return any("tcpSocket" in c.get("livenessProbe", {}) for c in containers(objects))


def without_probes(objects: list[Obj]) -> list[Obj]:
    """The objects less their probes, the probe port and LLMISVC_ROUTER_PROBE_PORT."""
    objects = copy.deepcopy(objects)
    for container in containers(objects):
        container.pop("livenessProbe", None)
        container.pop("readinessProbe", None)
        container["ports"] = [p for p in container.get("ports", []) if p.get("name") != "probes"]
        container["env"] = [e for e in container.get("env", []) if e["name"] != "LLMISVC_ROUTER_PROBE_PORT"]
    return objects


def assert_same_objects(chart: list[Obj], kustomized: list[Obj]) -> None:
    ours = {key(o): without_helm(o) for o in chart}
    theirs = {key(o): o for o in kustomized if o["kind"] != "Namespace"}
    assert sorted(ours) == sorted(theirs)
    for name, obj in theirs.items():
        assert ours[name] == obj, (
            f"{name}:\nchart:\n{yaml.safe_dump(ours[name])}\nkustomize:\n{yaml.safe_dump(obj)}"
        )


# --- the tool and the chart's metadata ---------------------------------------------------------------------


def test_helm_is_the_pinned_version() -> None:
    pin = re.search(r"^\thelm\.sh/helm/v3 (v\S+)", (ROOT / "devstack/helm/go.mod").read_text(), re.MULTILINE)
    assert pin is not None
    result = subprocess.run(
        [str(HELM), "version", "--template", "{{.Version}}"], capture_output=True, text=True, check=False
    )
    assert result.stdout == pin[1], result.stderr


def test_the_charts_version_and_app_version_are_the_package_version() -> None:
    package = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert (chart["version"], chart["appVersion"]) == (package, package)


@pytest.mark.parametrize("strict", [False, True], ids=["lint", "lint-strict"])
@pytest.mark.parametrize(
    "values",
    [{}, OPTIONAL_ON, POD_MONITOR, VERSIONED, KUSTOMIZED["deploy/overlays/namespaced"]],
    ids=["defaults", "optional-on", "pod-monitor", "versioned", "namespaced"],
)
def test_helm_lint_passes(values: Obj, strict: bool) -> None:
    result = helm(
        "lint", str(CHART), "--namespace", NAMESPACE, *(["--strict"] if strict else []), values=values
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


# --- the same objects as the kustomize install -------------------------------------------------------------


@pytest.mark.parametrize("path", list(KUSTOMIZED))
def test_the_chart_renders_the_objects_of_the_kustomization(path: str) -> None:
    """Compared as parsed objects, less only what the comment above HELM_LABELS lists. The chart's probes are
    HTTP (/healthz, /readyz on the port ``probes``); while the kustomize base still probes the metrics port
    over TCP, everything else is compared strictly and the test is an expected failure that names why."""
    chart, kustomized = template(KUSTOMIZED[path]), render(path)
    if has_tcp_probes(kustomized):
        assert_same_objects(without_probes(chart), without_probes(kustomized))
        pytest.xfail(
            "deploy/base still probes the metrics port over TCP; the chart probes /healthz and /readyz"
        )
    assert_same_objects(chart, kustomized)


def test_the_probes_are_http_on_the_probe_port() -> None:
    deployments = [o for o in template({"probes": {"port": 8181}}) if o["kind"] == "Deployment"]
    assert len(deployments) == 2
    for container in containers(deployments):
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "probes"}
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "probes"}
        assert {"name": "probes", "containerPort": 8181} in container["ports"]
        assert {"name": "LLMISVC_ROUTER_PROBE_PORT", "value": "8181"} in container["env"]


def test_versioned_workers_run_one_deployment_per_build_with_its_build_id() -> None:
    objects = template(VERSIONED)
    workers = {
        o["metadata"]["name"]: o
        for o in objects
        if o["kind"] == "Deployment" and "worker" in o["metadata"]["name"]
    }
    assert sorted(workers) == ["llmisvc-router-worker-0.1.0-a", "llmisvc-router-worker-0.1.0-b"]
    for build, deployment in zip(["0.1.0-a", "0.1.0-b"], workers.values(), strict=True):
        pod = deployment["spec"]["template"]
        assert deployment["spec"]["selector"]["matchLabels"]["llmisvc-router.dev/build-id"] == build
        assert pod["metadata"]["labels"]["llmisvc-router.dev/build-id"] == build
        (container,) = pod["spec"]["containers"]
        assert {"name": "LLMISVC_ROUTER_BUILD_ID", "value": build} in container["env"]
    assert workers["llmisvc-router-worker-0.1.0-b"]["spec"]["replicas"] == 1
    settings = next(o for o in objects if o["metadata"]["name"] == "llmisvc-router-settings")
    assert settings["data"]["LLMISVC_ROUTER_DEPLOYMENT_NAME"] == "llmisvc-router"


def test_extra_settings_reach_the_settings_configmap() -> None:
    objects = template({"extraSettings": {"LLMISVC_ROUTER_MAX_CACHED_WORKFLOWS": "2000"}})
    settings = next(o for o in objects if o["metadata"]["name"] == "llmisvc-router-settings")
    assert settings["data"]["LLMISVC_ROUTER_MAX_CACHED_WORKFLOWS"] == "2000"


# --- bad values --------------------------------------------------------------------------------------------

BAD_VALUES = {
    "mode-not-write-or-shadow": ({"mode": "read"}, "/mode", "'write', 'shadow'"),
    "replicas-not-an-integer": ({"worker": {"replicas": "two"}}, "/worker/replicas", "integer"),
    "negative-replicas": ({"watcher": {"replicas": -1}}, "/watcher/replicas", "minimum"),
    "unknown-key": ({"wroker": {"replicas": 3}}, "wroker", "additional properties"),
    "namespaced-rbac-without-namespaces": (
        {"rbac": {"scope": "namespaced"}},
        "/namespaces",
        "minItems",
    ),
    "rbac-scope-unknown": ({"rbac": {"scope": "namespace"}}, "/rbac/scope", "'cluster', 'namespaced'"),
    "builds-without-a-deployment-name": (
        {"workerVersioning": {"builds": [{"buildId": "a"}]}},
        "/workerVersioning/builds",
        "maxItems",
    ),
    "versioning-without-builds": (
        {"workerVersioning": {"deploymentName": "x"}},
        "/workerVersioning/builds",
        "minItems",
    ),
    "build-id-not-a-name": (
        {"workerVersioning": {"deploymentName": "x", "builds": [{"buildId": "Build_1"}]}},
        "/workerVersioning/builds/0/buildId",
        "does not match pattern",
    ),
    "deployment-name-with-a-dot": (
        {"workerVersioning": {"deploymentName": "a.b", "builds": [{"buildId": "a"}]}},
        "/workerVersioning/deploymentName",
        "does not match pattern",
    ),
    "probe-port-out-of-range": ({"probes": {"port": 70000}}, "/probes/port", "maximum"),
    "temporal-address-without-port": ({"temporal": {"address": "temporal"}}, "/temporal/address", "pattern"),
    "extra-setting-not-a-string": (
        {"extraSettings": {"LLMISVC_ROUTER_ACTIVITY_THREADS": 8}},
        "/extraSettings",
        "string",
    ),
    "both-monitors": (
        merged(POD_MONITOR, {"metrics": {"serviceMonitor": {"enabled": True}}}),
        "metrics.serviceMonitor.enabled and metrics.podMonitor.enabled",
        "enable one",
    ),
    "extra-setting-the-chart-sets": (
        {"extraSettings": {"LLMISVC_ROUTER_MODE": "shadow"}},
        "extraSettings.LLMISVC_ROUTER_MODE",
        "set that value instead",
    ),
}


@pytest.mark.parametrize(("values", "field", "message"), BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_bad_values_are_refused_naming_the_field(values: Obj, field: str, message: str) -> None:
    result = helm("template", RELEASE, str(CHART), "--namespace", NAMESPACE, values=values)
    assert result.returncode != 0
    assert field in result.stderr and message in result.stderr, result.stderr
    assert "goroutine" not in result.stderr and len(result.stderr.splitlines()) <= 8, result.stderr


# --- optional objects --------------------------------------------------------------------------------------


def test_the_optional_objects_are_absent_by_default() -> None:
    kinds = {o["kind"] for o in template()}
    assert not kinds & {"PodDisruptionBudget", "Service", *MONITORING_KINDS}
    assert [o["metadata"]["name"] for o in template() if o["kind"] == "ConfigMap"] == [
        "llmisvc-router-settings"
    ]


@pytest.mark.parametrize(("values", "kind"), OPTIONAL_OBJECTS.values(), ids=OPTIONAL_OBJECTS.keys())
def test_an_optional_object_renders_when_enabled(values: Obj, kind: str) -> None:
    default = {key(o) for o in template()}
    added = [o for o in template(values) if key(o) not in default]
    assert kind in {o["kind"] for o in added}
    for obj in added:
        if obj["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # not a Kubernetes kind: the CRDs' schemas check these (the dry run below)
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def test_the_pod_disruption_budget_covers_every_worker_pod() -> None:
    objects = template(merged(VERSIONED, {"worker": {"podDisruptionBudget": {"enabled": True}}}))
    (budget,) = [o for o in objects if o["kind"] == "PodDisruptionBudget"]
    selector = budget["spec"]["selector"]["matchLabels"]
    pods = [o["spec"]["template"]["metadata"]["labels"] for o in objects if o["kind"] == "Deployment"]
    workers = [labels for labels in pods if labels["app.kubernetes.io/component"] == "worker"]
    assert len(workers) == 2 and all(selector.items() <= labels.items() for labels in workers)
    assert not any(selector.items() <= labels.items() for labels in pods if labels not in workers)


def test_the_monitors_scrape_the_metrics_port_of_both_components() -> None:
    for values in (OPTIONAL_ON, POD_MONITOR):
        objects = template(values)
        (monitor,) = [o for o in objects if o["kind"] in ("ServiceMonitor", "PodMonitor")]
        endpoints = monitor["spec"].get("endpoints") or monitor["spec"]["podMetricsEndpoints"]
        assert [e["port"] for e in endpoints] == ["metrics"]
        target = {o["metadata"]["name"]: o for o in objects}.get("llmisvc-router-metrics")
        selector = (target or {}).get("spec", {}).get("selector") or monitor["spec"]["selector"][
            "matchLabels"
        ]
        for deployment in (o for o in objects if o["kind"] == "Deployment"):
            labels = deployment["spec"]["template"]["metadata"]["labels"]
            assert selector.items() <= labels.items(), deployment["metadata"]["name"]


def test_the_dashboard_configmap_carries_the_grafana_dashboard_for_the_sidecar() -> None:
    (configmap,) = [o for o in template(OPTIONAL_ON) if o["metadata"]["name"] == "llmisvc-router-dashboard"]
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = json.loads((ROOT / "deploy/grafana/llmisvc-router.json").read_text())
    # Helm reads only the chart's own files: its copy is the shipped dashboard, byte for byte.
    copy_in_chart = CHART / "dashboards" / "llmisvc-router.json"
    assert copy_in_chart.read_bytes() == (ROOT / "deploy/grafana/llmisvc-router.json").read_bytes()
    assert json.loads(configmap["data"]["llmisvc-router.json"]) == shipped


# --- the alerts --------------------------------------------------------------------------------------------

#: Every metric name the processes export that an alert may use: the orchestrator's own (named in the code,
#: with the suffixes the exporter adds) and the SDK's failed-workflow-task counter that the observability
#: tests scrape. tests/observability/test_metrics.py checks the alerts against a real scrape too.
EXPORTED = {
    f"{PASSES_METRIC}_total",
    f"{DURATION_METRIC}_seconds_bucket",
    f"{DURATION_METRIC}_seconds_count",
    f"{DURATION_METRIC}_seconds_sum",
    f"{REQUESTS_METRIC}_total",
    SERVICES_METRIC,
    DRIFT_METRIC,
    FAILED_TASKS,
}


def alert_rules() -> list[Obj]:
    (rule,) = [o for o in template(OPTIONAL_ON) if o["kind"] == "PrometheusRule"]
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]


def test_the_alerts_name_metrics_the_code_exports() -> None:
    rules = alert_rules()
    assert {r["alert"] for r in rules} >= {
        "LlmisvcRouterWorkflowTaskFailing",
        "LlmisvcRouterServicesNotReady",
        "LlmisvcRouterKubeRequestsRefused",
    }
    for rule in rules:
        named = dashboard.metric_names(rule["expr"])
        assert named, f"no metric in {rule['expr']!r}"
        assert named <= EXPORTED, f"{rule['alert']}: {sorted(named - EXPORTED)} not exported"
        assert rule["labels"]["team"] == "platform" and rule["labels"]["severity"] in ("warning", "critical")


def test_the_alerts_labels_in_annotations_are_the_ones_their_expressions_keep() -> None:
    """An annotation's {{ $labels.x }} is empty unless the expression's aggregation keeps x."""
    for rule in alert_rules():
        grouping = re.search(r"\bby \(([^)]*)\)", rule["expr"])
        kept = {label.strip() for label in grouping[1].split(",")} if grouping else set()
        used = set(re.findall(r"\$labels\.(\w+)", " ".join(rule["annotations"].values())))
        assert used <= kept, f"{rule['alert']}: {sorted(used - kept)}"


# --- the real kube-apiserver -------------------------------------------------------------------------------

DRY_RUNS: dict[str, Callable[[], list[Obj]]] = {
    "chart-defaults": template,
    "chart-optional-on": lambda: template(OPTIONAL_ON),
    "chart-pod-monitor": lambda: template(POD_MONITOR),
    "chart-versioned": lambda: template(VERSIONED),
    "chart-namespaced": lambda: template(KUSTOMIZED["deploy/overlays/namespaced"]),
    "kustomize": lambda: render("deploy"),
}


@pytest.fixture(scope="module")
def monitoring_crds(plane: Plane) -> Iterator[ControlPlane]:
    """The session's plane with prometheus-operator's CRDs and the namespaces the objects name."""
    names = set().union(*(namespaces_of(objects()) for objects in DRY_RUNS.values()))
    with installed_crds(plane.control, PROMETHEUS_CRDS), existing_namespaces(plane.control, names):
        yield plane.control


@pytest.mark.parametrize("objects", DRY_RUNS.values(), ids=DRY_RUNS.keys())
def test_the_apiserver_accepts_the_rendering_in_a_server_side_dry_run(
    monitoring_crds: ControlPlane, objects: Callable[[], list[Obj]]
) -> None:
    """Strict field validation against the pinned kube-apiserver's schemas and the vendored CRDs'."""
    rendered = objects()
    applied = dry_run_apply(monitoring_crds, rendered)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.count("(server dry run)") == len(rendered), applied.stdout


@pytest.fixture(scope="module")
def own_plane() -> Iterator[ControlPlane]:
    """A control plane of this module's own: the apply below stores objects (the ClusterRoles among them)
    that the session's plane must keep as deploy/ has them for the other tests."""
    control = ControlPlane.start(crd_selection="none", quiet=True)
    try:
        with installed_crds(control, PROMETHEUS_CRDS):
            yield control
    finally:
        control.stop()


def apply(control: ControlPlane, objects: list[Obj]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            KUBECTL,
            "--kubeconfig",
            str(control.admin_kubeconfig),
            "apply",
            "--server-side",
            "--validate=strict",
            "--field-manager=llmisvc-router-install",
            "-f",
            "-",
        ],
        input=yaml.safe_dump_all(objects),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_kustomization_then_the_chart_apply_onto_a_control_plane(own_plane: ControlPlane) -> None:
    """The kustomize install applied for real, then the chart's rendering over it (one field manager, as a
    move from `kubectl apply -k` to the chart would): both stored, the live objects the chart's."""
    kustomized, chart = render("deploy"), template(OPTIONAL_ON)
    with existing_namespaces(own_plane, namespaces_of(kustomized) | namespaces_of(chart)):
        first = apply(own_plane, kustomized)
        assert first.returncode == 0, first.stderr
        assert first.stdout.count("serverside-applied") == len(kustomized), first.stdout
        second = apply(own_plane, chart)
        assert second.returncode == 0, second.stderr
        assert second.stdout.count("serverside-applied") == len(chart), second.stdout
        with own_plane.admin("deploy-test") as api:
            apps: Any = k8s.AppsV1Api(api)
            read = apps.read_namespaced_deployment("llmisvc-router-worker", NAMESPACE, _preload_content=False)
            worker = json.loads(read.data)
            custom: Any = k8s.CustomObjectsApi(api)
            rules = custom.get_namespaced_custom_object(
                "monitoring.coreos.com", "v1", NAMESPACE, "prometheusrules", "llmisvc-router"
            )
        assert worker["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        (container,) = worker["spec"]["template"]["spec"]["containers"]
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert [r["alert"] for r in rules["spec"]["groups"][0]["rules"]] == [
            r["alert"] for r in alert_rules()
        ]
