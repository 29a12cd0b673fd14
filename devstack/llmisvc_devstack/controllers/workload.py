"""A simulated KServe workload controller for the dev stack: it reports ``WorkloadsReady=True`` and the
primary workload's ready replica (``status.workloads``) on every LLMInferenceService, and keeps a ready
scheduler Deployment for each one whose router has a managed scheduler, as KServe's workload reconciler
would once the model servers run.

llmisvc-router only reads that Deployment (for ``SchedulerWorkloadReady``); without something creating it
no service in the dev stack could become Ready. It lists and watches the services and Deployments (the
gateway controller's :class:`~llmisvc_devstack.controllers.gateway.Informer`), reconciles from that
cache when something changed (at most every ``interval`` seconds), writes only what differs, and deletes
the Deployments it created when the scheduler goes away or the service is stopped or deleted. A cache,
not a poll of every object: at a thousand services, listing them all twice a second was a good part of
the API server's time.

It talks to the API with the official client's ``CustomObjectsApi`` (which serves any group, apps/v1
included), as an outside controller would: nothing of the product but the core's derived names.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Self, cast

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from llmisvc_core import naming
from llmisvc_devstack.controllers.gateway import Informer

Obj = dict[str, Any]
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "standin-workload-controller"
#: (group, version, plural) of what the controller reads and writes.
SERVICES = ("serving.kserve.io", "v1alpha2", "llminferenceservices")
SERVICE_KIND = ("serving.kserve.io/v1alpha2", "LLMInferenceService")
DEPLOYMENTS = ("apps", "v1", "deployments")
log = logging.getLogger(__name__)


def is_stopped(svc: Obj) -> bool:
    annotations = (svc.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get("serving.kserve.io/stop", "")).lower() == "true"


def wants_scheduler(svc: Obj) -> bool:
    """A managed scheduler (no pool ref) on a service that is not stopped."""
    if is_stopped(svc):
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
            "name": naming.scheduler_name(meta["name"]),
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
        self.api = k8s.CustomObjectsApi(api_client)
        self.interval = interval
        self.stopping = threading.Event()
        self._dirty = threading.Event()
        self._services = Informer(self.api, SERVICES, self._dirty.set, self.stopping)
        self._deployments = Informer(self.api, DEPLOYMENTS, self._dirty.set, self.stopping)
        self._thread = threading.Thread(target=self._loop, name="workload-controller", daemon=True)

    def start(self) -> Self:
        for informer in (self._services, self._deployments):
            informer.thread.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._dirty.set()
        for informer in (self._services, self._deployments):
            informer.stop()
        for thread in (self._thread, self._services.thread, self._deployments.thread):
            if thread.is_alive():
                thread.join(timeout=5)

    def _loop(self) -> None:
        while not self.stopping.wait(self.interval):
            synced = self._services.synced.is_set() and self._deployments.synced.is_set()
            if not synced or not self._dirty.is_set():
                continue  # before both first lists, an absent service would delete a live Deployment
            self._dirty.clear()
            try:
                self.reconcile_once(self._services.items(), self._deployments.items())
            except Exception:  # the thread must outlive anything one round meets: try again next round
                log.exception("simulated workload controller: a round failed")
                self._dirty.set()

    def reconcile_once(self, services: list[Obj] | None = None, deployments: list[Obj] | None = None) -> None:
        """One round over ``services`` and ``deployments`` (the cache's; listed from the API when None)."""
        if services is None:
            api_version, kind = SERVICE_KIND
            listed = self._list(SERVICES)
            services = [{"apiVersion": api_version, "kind": kind, **svc} for svc in listed]
        if deployments is None:
            deployments = self._list(DEPLOYMENTS, f"{MANAGED_BY}={MANAGER}")
        wanted: dict[tuple[str, str], Obj] = {}
        for svc in services:
            try:
                self._quietly(self._mark_workloads_ready, svc)
                if wants_scheduler(svc):
                    deployment = scheduler_deployment(svc)
                    wanted[_key(deployment)] = deployment
            except Exception as err:  # a malformed service is skipped; the others are still served
                log.debug("simulated workload controller: skipped a service: %r", err)
        managed = [d for d in deployments if (d["metadata"].get("labels") or {}).get(MANAGED_BY) == MANAGER]
        existing = {_key(d): d for d in managed}
        for namespace, name in existing.keys() - wanted.keys():
            self._quietly(self._delete, DEPLOYMENTS, namespace, name)
        for key, deployment in wanted.items():
            self._quietly(self._keep_ready, existing.get(key), deployment)

    def _keep_ready(self, current: Obj | None, deployment: Obj) -> None:
        if current is None:
            namespace = deployment["metadata"]["namespace"]
            current = cast(
                Obj, self.api.create_namespaced_custom_object(*_in(DEPLOYMENTS, namespace), deployment)
            )
        if not (current.get("status") or {}).get("availableReplicas"):
            ready = {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}
            self._deployments.put(self._replace_status(DEPLOYMENTS, {**current, "status": ready}))

    def _quietly(self, write: Callable[..., object], *args: Any) -> None:
        """One object's write; a refusal (a conflict with a newer version, not installed yet) is retried
        in the next round instead of ending this one for every other object."""
        try:
            write(*args)
        except ApiException:
            self._dirty.set()

    def _list(self, gvr: tuple[str, str, str], label_selector: str = "") -> list[Obj]:
        listed = cast(Obj, self.api.list_cluster_custom_object(*gvr, label_selector=label_selector))
        return list(listed.get("items") or [])

    def _delete(self, gvr: tuple[str, str, str], namespace: str, name: str) -> None:
        try:
            self.api.delete_namespaced_custom_object(*_in(gvr, namespace), name)
        except ApiException as err:
            if err.status != 404:  # gone already: what was wanted
                raise

    def _replace_status(self, gvr: tuple[str, str, str], obj: Obj) -> Obj:
        meta = obj["metadata"]
        replaced = self.api.replace_namespaced_custom_object_status(
            *_in(gvr, meta["namespace"]), meta["name"], obj
        )
        return cast(Obj, replaced)

    def _mark_workloads_ready(self, svc: Obj) -> None:
        """What KServe's workload reconciler reports once the model server runs (a conflict: next round):
        ``WorkloadsReady=True`` and, unless the service is stopped, ``status.workloads`` naming the primary
        Deployment with its ready replica, which routing-group peers read to know a member is routable.
        What is there already is left alone, so a test may report other replica counts."""
        status = dict(svc.get("status") or {})
        conditions = status.get("conditions") or []
        ready = any(_is(c, "WorkloadsReady") and c.get("status") == "True" for c in conditions)
        observed = is_stopped(svc) or (status.get("workloads") or {}).get("primary") is not None
        if ready and observed:
            return
        if not ready:
            marked = {"type": "WorkloadsReady", "status": "True", "lastTransitionTime": _now()}
            others = [c for c in conditions if not _is(c, "WorkloadsReady")]  # others' kept as they are
            status["conditions"] = sorted(
                [*others, marked], key=lambda c: str(c.get("type") if isinstance(c, dict) else "")
            )
        if not observed:
            status["workloads"] = primary_workload(svc)
        self._services.put(self._replace_status(SERVICES, {**svc, "status": status}))


def primary_workload(svc: Obj) -> Obj:
    """KServe's ``status.workloads`` of a running single-node service: its main Deployment
    (``<name>-kserve``) with one ready replica, and the workload Service in front of it."""
    name = svc["metadata"]["name"]
    return {
        "primary": {
            "apiGroup": "apps",
            "kind": "Deployment",
            "name": naming.child_name(name, "-kserve"),
            "readyReplicas": 1,
        },
        "service": {"kind": "Service", "name": naming.workload_service_name(name)},
    }


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _in(gvr: tuple[str, str, str], namespace: str) -> tuple[str, str, str, str]:
    """The positional arguments of ``CustomObjectsApi``'s namespaced calls."""
    group, version, plural = gvr
    return group, version, namespace, plural


def _is(condition: object, type_: str) -> bool:
    return isinstance(condition, dict) and condition.get("type") == type_


def _key(obj: Obj) -> tuple[str, str]:
    return obj["metadata"]["namespace"], obj["metadata"]["name"]
