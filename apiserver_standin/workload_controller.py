"""A simulated KServe workload controller for the dev stack: it reports ``WorkloadsReady=True`` on every
LLMInferenceService and keeps a ready scheduler Deployment for each one whose router has a managed
scheduler, as KServe's workload reconciler would once the model servers run.

llmisvc-router only reads that Deployment (for ``SchedulerWorkloadReady``); without something creating it
no service in the dev stack could become Ready. It polls, writes only what differs, and deletes the
Deployments it created when the scheduler goes away or the service is stopped or deleted.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any, Self

from kubernetes import client as k8s

from activities.cluster_api import ApiError
from activities.kube_api import KubeClusterApi
from router_core import naming
from router_core.kube import DEPLOYMENT, LLMISVC

Obj = dict[str, Any]
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "standin-workload-controller"


def wants_scheduler(svc: Obj) -> bool:
    """A managed scheduler (no pool ref) on a service that is not stopped."""
    annotations = (svc.get("metadata") or {}).get("annotations") or {}
    if str(annotations.get("serving.kserve.io/stop", "")).lower() == "true":
        return False
    scheduler = ((svc.get("spec") or {}).get("router") or {}).get("scheduler")
    if scheduler is None:
        return False
    return not (((scheduler.get("pool") or {}).get("ref") or {}).get("name"))


def scheduler_deployment(svc: Obj) -> Obj:
    meta = svc["metadata"]
    labels = {**naming.scheduler_labels(meta["name"]), MANAGED_BY: MANAGER}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": naming.child_name(meta["name"], naming.SCHEDULER_SUFFIX),
            "namespace": meta["namespace"],
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": svc["apiVersion"],
                    "kind": svc["kind"],
                    "name": meta["name"],
                    "uid": meta.get("uid", ""),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": naming.scheduler_labels(meta["name"])},
            "template": {
                "metadata": {"labels": naming.scheduler_labels(meta["name"])},
                "spec": {"containers": [{"name": "main", "image": "epp:dev"}]},
            },
        },
    }


class SimulatedWorkloadController:
    def __init__(self, api_client: k8s.ApiClient, interval: float = 0.5) -> None:
        self.api = KubeClusterApi(api_client)
        self.interval = interval
        self.stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="workload-controller", daemon=True)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self.stopping.wait(self.interval):
            try:
                self.reconcile_once()
            except ApiError:
                continue  # not installed yet, or the server is going away: try again next round

    def reconcile_once(self) -> None:
        wanted = {}
        for svc in self.api.list_objects(LLMISVC, "", {}):
            self._mark_workloads_ready(svc)
            if wants_scheduler(svc):
                deployment = scheduler_deployment(svc)
                wanted[_key(deployment)] = deployment
        existing = {_key(d): d for d in self.api.list_objects(DEPLOYMENT, "", {MANAGED_BY: MANAGER})}
        for namespace, name in existing.keys() - wanted.keys():
            self.api.delete(DEPLOYMENT, namespace, name)
        for key, deployment in wanted.items():
            current = existing.get(key) or self.api.create(DEPLOYMENT, deployment)
            if not (current.get("status") or {}).get("availableReplicas"):
                ready = {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}
                self.api.replace_status(DEPLOYMENT, {**current, "status": ready})

    def _mark_workloads_ready(self, svc: Obj) -> None:
        """What KServe's workload reconciler reports once the model server runs (a conflict: next round)."""
        conditions = (svc.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "WorkloadsReady" and c.get("status") == "True" for c in conditions):
            return
        ready = {"type": "WorkloadsReady", "status": "True", "lastTransitionTime": _now()}
        others = [c for c in conditions if c.get("type") != "WorkloadsReady"]
        status = {
            **(svc.get("status") or {}),
            "conditions": sorted([*others, ready], key=lambda c: c["type"]),
        }
        self.api.replace_status(LLMISVC, {**svc, "status": status})


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _key(obj: Obj) -> tuple[str, str]:
    return obj["metadata"]["namespace"], obj["metadata"]["name"]
