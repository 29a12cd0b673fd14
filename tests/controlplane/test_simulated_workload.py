"""The dev stack's simulated workload controller reports what KServe's workload reconciler reports of a
running service (``workload_status.go`` at ``aaac4e294``): ``WorkloadsReady=True`` and
``status.workloads`` naming the primary Deployment with its ready replicas. Routing-group peers read
that field to know a member is routable (``router_group.go`` ``isMemberRoutable``), so without it a group
in ``make run`` would route each member to itself only. Run against the real control plane: the status
subresource and the CRD's schema decide what is stored."""

from __future__ import annotations

from typing import Any, cast

from kubernetes import client as k8s

from llmisvc_devstack.controllers.workload import SimulatedWorkloadController
from tests.cluster import Cluster
from tests.integration import world

GVR = ("serving.kserve.io", "v1alpha2")


def _create(api: k8s.CustomObjectsApi, body: dict[str, Any]) -> None:
    api.create_namespaced_custom_object(*GVR, body["metadata"]["namespace"], "llminferenceservices", body)


def _status(api: k8s.CustomObjectsApi, ns: str, name: str) -> dict[str, Any]:
    got = cast(dict[str, Any], api.get_namespaced_custom_object(*GVR, ns, "llminferenceservices", name))
    return cast(dict[str, Any], got.get("status") or {})


def test_a_running_service_gets_workloads_ready_and_its_primary_workload_with_a_ready_replica(
    cluster: Cluster,
) -> None:
    ns = cluster.namespace
    with cluster.api_client("test-simulated-workload", direct=True) as client:
        api = k8s.CustomObjectsApi(client)
        _create(api, world.service("running", ns))
        _create(api, world.service("stopped", ns, stopped=True))
        SimulatedWorkloadController(client).reconcile_once()

        running = _status(api, ns, "running")
        assert [c["status"] for c in running["conditions"] if c["type"] == "WorkloadsReady"] == ["True"]
        assert running["workloads"] == {
            "primary": {
                "apiGroup": "apps",
                "kind": "Deployment",
                "name": "running-kserve",
                "readyReplicas": 1,
            },
            "service": {"kind": "Service", "name": "running-kserve-workload-svc"},
        }
        # KServe leaves status.workloads nil for a stopped service
        stopped = _status(api, ns, "stopped")
        assert "workloads" not in stopped
        assert [c["status"] for c in stopped["conditions"] if c["type"] == "WorkloadsReady"] == ["True"]


def test_replica_counts_reported_by_someone_else_are_left_as_they_are(cluster: Cluster) -> None:
    ns = cluster.namespace
    with cluster.api_client("test-simulated-workload", direct=True) as client:
        api = k8s.CustomObjectsApi(client)
        _create(api, world.service("scaled-down", ns))
        controller = SimulatedWorkloadController(client)
        controller.reconcile_once()
        zero = {"primary": {"apiGroup": "apps", "kind": "Deployment", "name": "x", "readyReplicas": 0}}
        api.patch_namespaced_custom_object_status(
            *GVR, ns, "llminferenceservices", "scaled-down", {"status": {"workloads": zero}}
        )
        controller.reconcile_once()
        assert _status(api, ns, "scaled-down")["workloads"]["primary"]["readyReplicas"] == 0
