"""The control plane the suite runs on is a real one, and behaves as a cluster does: the pinned release,
RBAC that refuses what ``deploy/`` does not grant, NamespaceLifecycle, the garbage collector, the
vendored CRDs with their printer columns, and etcd compaction that gives an old watch a 410.

These are the behaviours the stand-in had to imitate (and the product relies on); here they are the real
server's (kube-apiserver and kube-controller-manager v1.37, ``devstack/controlplane/go.mod``)."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch
from kubernetes.client.exceptions import ApiException

from llmisvc_devstack.controlplane import binaries
from tests.cluster import Cluster
from tests.tools import KUBECTL

CONTROLPLANE_MOD = binaries.REPO / "devstack" / "controlplane" / "go.mod"


def _pinned_kubernetes() -> str:
    match = re.search(r"^\s*k8s\.io/kubernetes (v\S+)", CONTROLPLANE_MOD.read_text(), re.MULTILINE)
    assert match, "no k8s.io/kubernetes pin in devstack/controlplane/go.mod"
    return match.group(1)


T = TypeVar("T")


def _eventually(probe: Callable[[], T], what: str, timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def test_the_apiserver_is_the_release_that_go_mod_pins(cluster: Cluster) -> None:
    with cluster.control.admin() as api:
        version: Any = k8s.VersionApi(api).get_code()
        assert version.git_version == _pinned_kubernetes()


def test_the_worker_account_is_refused_what_deploy_rbac_does_not_grant(cluster: Cluster) -> None:
    api: Any = cluster.api_client("rbac-test", role="worker")
    try:
        with pytest.raises(ApiException) as refused:
            k8s.CoreV1Api(api).list_namespaced_secret(cluster.namespace)
        assert refused.value.status == 403
        assert "system:serviceaccount:llmisvc-router:llmisvc-router-worker" in str(refused.value.body)
        # ... and allowed what it does grant: reading the services it reconciles
        listed: Any = k8s.CustomObjectsApi(api).list_namespaced_custom_object(
            "serving.kserve.io", "v1alpha2", cluster.namespace, "llminferenceservices"
        )
        assert listed["items"] == []
    finally:
        api.close()


def test_a_namespace_being_deleted_refuses_new_objects(cluster: Cluster) -> None:
    doomed = f"{cluster.namespace}-doomed"
    cluster.manage(doomed)
    with cluster.control.admin() as api:
        core: Any = k8s.CoreV1Api(api)  # dict bodies: the typed signatures do not apply
        # a finalizer holds the namespace in Terminating while we try
        core.create_namespaced_config_map(
            doomed, {"metadata": {"name": "held", "finalizers": ["test.llmisvc-router/hold"]}}
        )
        core.delete_namespace(doomed)
        try:
            with pytest.raises(ApiException) as refused:
                core.create_namespaced_config_map(doomed, {"metadata": {"name": "late"}})
            assert refused.value.status == 403
            assert "because it is being terminated" in str(refused.value.body)
        finally:
            core.patch_namespaced_config_map("held", doomed, {"metadata": {"finalizers": None}})


def test_the_garbage_collector_deletes_what_a_deleted_owner_owned(cluster: Cluster) -> None:
    with cluster.control.admin() as api:
        core: Any = k8s.CoreV1Api(api)  # dict bodies: the typed signatures do not apply
        owner = core.create_namespaced_config_map(cluster.namespace, {"metadata": {"name": "owner"}})
        reference = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
        core.create_namespaced_config_map(
            cluster.namespace, {"metadata": {"name": "owned", "ownerReferences": [reference]}}
        )
        core.delete_namespaced_config_map("owner", cluster.namespace)

        def owned_gone() -> bool:
            try:
                core.read_namespaced_config_map("owned", cluster.namespace)
            except ApiException as err:
                return bool(err.status == 404)
            return False

        _eventually(owned_gone, "the garbage collector to delete the owned ConfigMap")


def test_kubectl_shows_the_llmisvc_printer_columns_of_the_vendored_crd(
    cluster: Cluster, tmp_path: Path
) -> None:
    kubeconfig = cluster.kubeconfig(tmp_path / "kubeconfig", direct=True)
    service = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": "columns", "namespace": cluster.namespace},
        "spec": {"model": {"uri": "hf://facebook/opt-125m", "name": "facebook/opt-125m"}},
    }
    with cluster.control.admin() as api:
        k8s.CustomObjectsApi(api).create_namespaced_custom_object(
            "serving.kserve.io", "v1alpha2", cluster.namespace, "llminferenceservices", service
        )
    shown = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "get", "llmisvc", "-n", cluster.namespace],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    header = shown.splitlines()[0].split()
    assert header[:3] == ["NAME", "URL", "READY"], shown
    assert "columns" in shown


def test_a_watch_from_before_an_etcd_compaction_is_answered_410(cluster: Cluster) -> None:
    """kube-apiserver's watch cache serves recent resourceVersions from memory; once it restarts after a
    compaction, a watch from before the compaction can only be answered ``410 Gone`` (what the chaos
    suite's compaction does to the product's watches)."""
    with cluster.control.admin() as api:
        core: Any = k8s.CoreV1Api(api)  # dict bodies: the typed signatures do not apply
        old = core.create_namespaced_config_map(cluster.namespace, {"metadata": {"name": "v0"}})
        core.create_namespaced_config_map(cluster.namespace, {"metadata": {"name": "v1"}})
    cluster.control.compact_etcd()
    cluster.control.apiserver.restart()
    with cluster.control.admin() as api:
        core = k8s.CoreV1Api(api)
        stream = k8s_watch.Watch().stream(  # type: ignore[no-untyped-call]
            core.list_namespaced_config_map,
            cluster.namespace,
            resource_version=old.metadata.resource_version,
            timeout_seconds=5,
        )
        with pytest.raises(ApiException) as gone:
            for event in stream:
                assert event["type"] != "ADDED", "a compacted resourceVersion was served"
        assert gone.value.status == 410
