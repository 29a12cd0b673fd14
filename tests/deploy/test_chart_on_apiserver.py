"""The Helm chart's renderings before the real kube-apiserver: a server-side dry run against its schemas
(with prometheus-operator's CRDs, vendored), then the kustomize install and the chart applied for real, on a
control plane of the module's own."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from llmisvc_devstack.controlplane import ControlPlane
from tests.deploy.chart import (
    KUSTOMIZED,
    NAMESPACE,
    OPTIONAL_ON,
    POD_MONITOR,
    PROMETHEUS_CRDS,
    VERSIONED,
    Obj,
    alert_rules,
    template,
)
from tests.deploy.dry_run import (
    dry_run_apply,
    existing_namespaces,
    installed_crds,
    namespaces_of,
    server_side_apply,
)
from tests.deploy.test_manifests import render

DRY_RUNS: dict[str, Callable[[], list[Obj]]] = {
    "chart-defaults": template,
    "chart-optional-on": lambda: template(OPTIONAL_ON),
    "chart-pod-monitor": lambda: template(POD_MONITOR),
    "chart-versioned": lambda: template(VERSIONED),
    "chart-namespaced": lambda: template(KUSTOMIZED["deploy/overlays/namespaced"]),
    "kustomize": lambda: render("deploy"),
}


@pytest.fixture(scope="module")
def own_plane() -> Iterator[ControlPlane]:
    """A control plane of this module's own, with prometheus-operator's CRDs and the namespaces the objects
    name: the apply below stores objects (the ClusterRoles among them) that the session's plane must keep as
    deploy/ has them for the other tests, and none of these objects needs the session's KServe CRDs."""
    names = set().union(*(namespaces_of(objects()) for objects in DRY_RUNS.values()))
    control = ControlPlane.start(crd_selection="none", quiet=True)
    try:
        with installed_crds(control, PROMETHEUS_CRDS), existing_namespaces(control, names):
            yield control
    finally:
        control.stop()


@pytest.mark.parametrize("objects", DRY_RUNS.values(), ids=DRY_RUNS.keys())
def test_the_apiserver_accepts_the_rendering_in_a_server_side_dry_run(
    own_plane: ControlPlane, objects: Callable[[], list[Obj]]
) -> None:
    """Strict field validation against the pinned kube-apiserver's schemas and the vendored CRDs'."""
    rendered = objects()
    applied = dry_run_apply(own_plane, rendered)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.count("(server dry run)") == len(rendered), applied.stdout


def apply(control: ControlPlane, objects: list[Obj]) -> subprocess.CompletedProcess[str]:
    return server_side_apply(control, objects, "llmisvc-router-install")


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
