"""Rendering the Helm chart (deploy/chart/llmisvc-router) with the pinned Helm (devstack/helm, built by
scripts/build-helm) for the tests: the value sets they share, and the comparison with the kustomizations."""

from __future__ import annotations

import copy
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

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
# - the Namespace: `helm install --create-namespace` makes the release's namespace; a chart that rendered
#   it too could not be installed into it.
HELM_LABELS = {
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
}
HELM_ANNOTATIONS = {"checksum/settings"}


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


def alert_rules() -> list[Obj]:
    (rule,) = [o for o in template(OPTIONAL_ON) if o["kind"] == "PrometheusRule"]
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]
