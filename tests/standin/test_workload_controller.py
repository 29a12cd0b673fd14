"""The simulated workload controller keeps one ready scheduler Deployment per managed scheduler."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from kubernetes import client as k8s

from activities.kube_api import KubeClusterApi
from apiserver_standin.testing import running_apiserver
from llmisvc_devstack.controllers.workload import SimulatedWorkloadController
from router_core.models.kube import DEPLOYMENT, LLMISVC
from router_core.naming import scheduler_name
from tests import builders as b

SCHEDULER = scheduler_name("with-scheduler")


def _service(name: str, router: dict[str, object]) -> dict[str, object]:
    return b.service(name, "default", uid=None, generation=None, router=router)


def _eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def test_a_managed_scheduler_gets_a_ready_deployment_that_goes_away_with_it() -> None:
    with running_apiserver(crds="llmisvc") as server:
        custom, api = k8s.CustomObjectsApi(server.client), KubeClusterApi(server.client)
        args = ("serving.kserve.io", "v1alpha2", "default", "llminferenceservices")
        custom.create_namespaced_custom_object(*args, _service("with-scheduler", {"scheduler": {}}))
        custom.create_namespaced_custom_object(
            *args, _service("with-pool-ref", {"scheduler": {"pool": {"ref": {"name": "p"}}}})
        )

        def names() -> list[str]:
            return [d["metadata"]["name"] for d in api.list_objects(DEPLOYMENT, "default", {})]

        def deployment() -> dict[str, Any]:
            found = api.get(DEPLOYMENT, "default", SCHEDULER)
            assert found is not None
            return found

        controller = SimulatedWorkloadController(server.api_client(), interval=0.05).start()
        try:
            _eventually(lambda: names() == [SCHEDULER])
            _eventually(lambda: deployment().get("status", {}).get("availableReplicas") == 1)
            assert deployment()["metadata"]["ownerReferences"][0]["name"] == "with-scheduler"
            svc = api.get(LLMISVC, "default", "with-pool-ref")
            assert svc is not None
            assert [(c["type"], c["status"]) for c in svc["status"]["conditions"]] == [
                ("WorkloadsReady", "True")
            ]
            patch = {"metadata": {"annotations": {"serving.kserve.io/stop": "true"}}}
            custom.patch_namespaced_custom_object(*args, "with-scheduler", patch)
            _eventually(lambda: names() == [])
        finally:
            controller.stop()


def _post(url: str, body: dict[str, object]) -> None:
    """Create over plain HTTP, as kubectl would (the Python client's serializer recurses per level)."""
    path = "/apis/serving.kserve.io/v1alpha2/namespaces/default/llminferenceservices"
    data = json.dumps(body).encode()
    request = urllib.request.Request(url + path, data, {"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201


def test_a_malformed_service_does_not_stop_the_controller_serving_the_others() -> None:
    deep: object = "leaf"
    for _ in range(600):
        deep = {"x": deep}
    with running_apiserver(crds="llmisvc") as server:
        custom, api = k8s.CustomObjectsApi(server.client), KubeClusterApi(server.client)
        args = ("serving.kserve.io", "v1alpha2", "default", "llminferenceservices")
        _post(server.url, _service("deep", {"scheduler": {"config": {"inline": {"plugins": deep}}}}))
        controller = SimulatedWorkloadController(server.api_client(), interval=0.05).start()
        try:
            time.sleep(0.3)  # the controller meets the malformed service first
            custom.create_namespaced_custom_object(*args, _service("with-scheduler", {"scheduler": {}}))
            _eventually(lambda: api.get(DEPLOYMENT, "default", SCHEDULER) is not None)
            assert controller._thread.is_alive()
        finally:
            controller.stop()
