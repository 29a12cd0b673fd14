"""The Helm chart (deploy/chart/llmisvc-router) with the pinned Helm: it lints, renders with its defaults
what the kustomize install renders (and with the matching values what each overlay renders), refuses bad
values with the schema's message, renders its optional objects only when asked, and alerts on metrics the
code exports."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib

import kubernetes_validate
import pytest
import yaml

from llmisvc_kube.telemetry import REQUESTS_METRIC
from llmisvc_watcher.service_gauge import SERVICES_METRIC
from tests.deploy.chart import (
    CHART,
    HELM,
    KUSTOMIZED,
    MONITORING_KINDS,
    NAMESPACE,
    OPTIONAL_OBJECTS,
    OPTIONAL_ON,
    POD_MONITOR,
    RELEASE,
    ROOT,
    VERSIONED,
    Obj,
    alert_rules,
    assert_same_objects,
    containers,
    has_tcp_probes,
    helm,
    key,
    merged,
    template,
    without_probes,
)
from tests.deploy.test_manifests import KUBERNETES_VERSION, render
from tests.observability import dashboard
from tests.observability.failing_task import FAILED_TASKS
from workflows.drift_report import DRIFT_METRIC
from workflows.pass_telemetry import DURATION_METRIC, PASSES_METRIC

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


def test_tracing_is_off_by_default_and_an_endpoint_alone_turns_it_on() -> None:
    """As the shipped settings.env: no OTEL_TRACES_EXPORTER=none, so the endpoint is all it takes."""

    def settings(values: Obj) -> dict[str, str]:
        found = next(o for o in template(values) if o["metadata"]["name"] == "llmisvc-router-settings")
        return {k: v for k, v in found["data"].items() if k.startswith("OTEL_")}

    assert settings({}) == {"OTEL_SERVICE_NAME": "llmisvc-router"}
    endpoint = "http://otel-collector.observability.svc.cluster.local:4317"
    assert settings({"tracing": {"endpoint": endpoint, "protocol": "grpc"}}) == {
        "OTEL_SERVICE_NAME": "llmisvc-router",
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
    }


# --- bad values --------------------------------------------------------------------------------------------

BAD_VALUES = {
    "mode-not-write-or-shadow": ({"mode": "read"}, "/mode", "'write', 'shadow'"),
    "replicas-not-an-integer": ({"worker": {"replicas": "two"}}, "/worker/replicas", "integer"),
    "negative-replicas": ({"watcher": {"replicas": -1}}, "/watcher/replicas", "minimum"),
    "unknown-key": ({"wroker": {"replicas": 3}}, "wroker", "additional properties"),
    "otlp-protocol-unknown": ({"tracing": {"protocol": "http/json"}}, "/tracing/protocol", "grpc"),
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
            continue  # not a Kubernetes kind: the CRDs' schemas check these (test_chart_on_apiserver.py)
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
