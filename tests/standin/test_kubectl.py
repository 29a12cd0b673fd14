"""kubectl against the standalone server: apply (twice), get -o yaml, patch, server-side apply, delete."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver_standin.control import ControlClient
from tests.tools import KUBECTL

MANIFESTS = """
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: llm
spec:
  model:
    uri: hf://org/model
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
spec:
  gatewayClassName: istio
  listeners:
  - {name: http, port: 80, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: route
spec:
  parentRefs:
  - name: gw
  rules:
  - backendRefs:
    - {group: inference.networking.k8s.io, kind: InferencePool, name: pool}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: dep
spec:
  selector: {matchLabels: {app: dep}}
  template:
    metadata: {labels: {app: dep}}
    spec:
      containers:
      - name: main
        image: img:1
        ports:
        - containerPort: 8000
"""


@pytest.fixture
def kubectl(standalone: Any, tmp_path: Path) -> Iterator[Callable[..., subprocess.CompletedProcess[str]]]:
    env = {**os.environ, "KUBECONFIG": str(standalone.kubeconfig)}

    def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [KUBECTL, "--cache-dir", str(tmp_path / "cache"), *args]
        result = subprocess.run(
            command, input=stdin, capture_output=True, text=True, env=env, timeout=60, check=False
        )
        if check:
            assert result.returncode == 0, result.stderr
        return result

    yield run
    run("delete", "-f", "-", "--ignore-not-found", "--wait=false", stdin=MANIFESTS, check=False)


def get_yaml(
    kubectl: Callable[..., subprocess.CompletedProcess[str]], kind: str, name: str
) -> dict[str, Any]:
    return dict(yaml.safe_load(kubectl("get", kind, name, "-o", "yaml").stdout))


def test_kubectl_apply_twice_creates_then_patches(kubectl, standalone):
    control = ControlClient(standalone.url)
    created = kubectl("apply", "-f", "-", stdin=MANIFESTS).stdout
    assert "llminferenceservice.serving.kserve.io/llm created" in created
    assert "httproute.gateway.networking.k8s.io/route created" in created
    control.reset_requests()
    changed = MANIFESTS.replace("hf://org/model", "hf://org/other").replace("img:1", "img:2")
    second = kubectl("apply", "-f", "-", stdin=changed).stdout
    assert "llminferenceservice.serving.kserve.io/llm configured" in second
    # kubectl's three-way merge patch for a custom resource replaces whole lists, and the stored
    # Gateway's listeners carry the CRD's defaults: kubectl sends them again (and says
    # "configured", as against a real cluster), the server defaults them again: nothing changes.
    assert "gateway.gateway.networking.k8s.io/gw configured" in second
    assert control.count(verb="create") == 0
    assert get_yaml(kubectl, "gateway", "gw")["metadata"]["generation"] == 1
    llm = get_yaml(kubectl, "llminferenceservice", "llm")
    assert llm["spec"]["model"]["uri"] == "hf://org/other" and llm["metadata"]["generation"] == 2
    container = get_yaml(kubectl, "deployment", "dep")["spec"]["template"]["spec"]["containers"][0]
    assert container == {"name": "main", "image": "img:2", "ports": [{"containerPort": 8000}]}


def test_kubectl_get_lists_the_project_kinds_by_name_and_short_name(kubectl):
    kubectl("apply", "-f", "-", stdin=MANIFESTS)
    assert "llm" in kubectl("get", "llmisvc").stdout
    assert "route" in kubectl("get", "httproutes").stdout
    table = kubectl("get", "gateways", "-A").stdout
    assert "NAMESPACE" in table and "istio" in table
    names = kubectl("get", "llminferenceservices,httproutes,gateways", "-o", "name").stdout.split()
    assert set(names) == {
        "llminferenceservice.serving.kserve.io/llm",
        "httproute.gateway.networking.k8s.io/route",
        "gateway.gateway.networking.k8s.io/gw",
    }


def test_kubectl_patch_merge_and_json_and_status(kubectl):
    kubectl("apply", "-f", "-", stdin=MANIFESTS)
    kubectl(
        "patch", "httproute", "route", "--type", "merge", "-p", '{"spec":{"hostnames":["a.example.com"]}}'
    )
    assert get_yaml(kubectl, "httproute", "route")["spec"]["hostnames"] == ["a.example.com"]
    kubectl(
        "patch",
        "gateway",
        "gw",
        "--type",
        "json",
        "-p",
        '[{"op":"replace","path":"/spec/gatewayClassName","value":"x"}]',
    )
    assert get_yaml(kubectl, "gateway", "gw")["spec"]["gatewayClassName"] == "x"
    kubectl(
        "patch",
        "llmisvc",
        "llm",
        "--subresource",
        "status",
        "--type",
        "merge",
        "-p",
        '{"status":{"url":"http://llm"}}',
    )
    assert get_yaml(kubectl, "llmisvc", "llm")["status"] == {"url": "http://llm"}


def test_kubectl_server_side_apply_is_idempotent(kubectl):
    first = kubectl("apply", "--server-side", "-f", "-", stdin=MANIFESTS).stdout
    assert "httproute.gateway.networking.k8s.io/route serverside-applied" in first
    version = get_yaml(kubectl, "httproute", "route")["metadata"]["resourceVersion"]
    kubectl("apply", "--server-side", "-f", "-", stdin=MANIFESTS)
    assert get_yaml(kubectl, "httproute", "route")["metadata"]["resourceVersion"] == version


def test_kubectl_delete_removes_the_objects(kubectl):
    kubectl("apply", "-f", "-", stdin=MANIFESTS)
    deleted = kubectl("delete", "-f", "-", stdin=MANIFESTS).stdout
    assert 'httproute.gateway.networking.k8s.io "route" deleted' in deleted
    missing = kubectl("get", "httproute", "route", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_kubectl_delete_waits_for_finalizers(kubectl):
    held = MANIFESTS.split("---")[2].replace("name: route", "name: held\n  finalizers: [example.com/hold]")
    kubectl("apply", "-f", "-", stdin=held)
    kubectl("delete", "httproute", "held", "--wait=false")
    assert get_yaml(kubectl, "httproute", "held")["metadata"]["deletionTimestamp"]
    kubectl("patch", "httproute", "held", "--type", "merge", "-p", '{"metadata":{"finalizers":null}}')
    assert kubectl("get", "httproute", "held", check=False).returncode != 0
