"""Wire objects and events for the watcher tests."""

from __future__ import annotations

import json
from typing import Any

from router_core.models import kube
from watcher.model import ADDED, WatchEvent

Wire = dict[str, Any]
KSERVE = "kserve"


def llmisvc(
    name: str, namespace: str = "ns", *, router: Wire | None = None, status: Wire | None = None
) -> Wire:
    obj: Wire = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"model": {"uri": "hf://org/model"}},
    }
    if router is not None:
        obj["spec"]["router"] = router
    if status is not None:
        obj["status"] = status
    return obj


def observed(*gateways: tuple[str | None, str], routes: list[tuple[str | None, str]] | None = None) -> Wire:
    """``status.router.gateways`` naming ``(namespace, name)`` gateways, each listing ``routes``."""
    items = []
    for namespace, name in gateways:
        item: Wire = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": name}
        if namespace is not None:
            item["namespace"] = namespace
        if routes:
            item["httpRoutes"] = [
                {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": n}
                | ({"namespace": ns} if ns is not None else {})
                for ns, n in routes
            ]
        items.append(item)
    return {"router": {"gateways": items}}


def obj(
    resource: kube.ResourceType,
    name: str,
    namespace: str = "ns",
    *,
    labels: dict[str, str] | None = None,
    owner: str | None = None,
    owner_kind: str = "LLMInferenceService",
    controller: bool = True,
    spec: Wire | None = None,
    rv: str = "1",
) -> Wire:
    meta: Wire = {"name": name, "resourceVersion": rv}
    if resource.namespaced:
        meta["namespace"] = namespace
    if labels is not None:
        meta["labels"] = labels
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "serving.kserve.io/v1alpha2",
                "kind": owner_kind,
                "name": owner,
                "uid": "uid-1",
                "controller": controller,
            }
        ]
    body: Wire = {"apiVersion": resource.api_version, "kind": resource.kind, "metadata": meta}
    if spec is not None:
        body["spec"] = spec
    return body


def managed(resource: kube.ResourceType, name: str, owner: str, namespace: str = "ns") -> Wire:
    labels = {"app.kubernetes.io/part-of": "llminferenceservice", "app.kubernetes.io/name": owner}
    return obj(resource, name, namespace, labels=labels, owner=owner)


def route(name: str, namespace: str = "ns", parents: list[Wire] | None = None) -> Wire:
    return obj(kube.HTTPROUTE, name, namespace, spec={"parentRefs": parents or []})


def crd(group: str, plural: str = "things", versions: tuple[str, ...] = ("v1",)) -> Wire:
    body = obj(kube.CRD, f"{plural}.{group}")
    body["spec"] = {"group": group, "versions": [{"name": v, "served": True} for v in versions]}
    return body


def configmap(ingress: Wire | None, namespace: str = KSERVE, name: str = "inferenceservice-config") -> Wire:
    body = obj(kube.CONFIGMAP, name, namespace)
    body["data"] = {"ingress": json.dumps(ingress)} if ingress is not None else {"other": "x"}
    return body


def event(obj_: Wire, type_: str = ADDED, *, old: Wire | None = None, initial: bool = False) -> WatchEvent:
    resource = kube.type_of(obj_["apiVersion"], obj_["kind"])
    assert resource is not None
    return WatchEvent(type_, resource, obj_, old, initial)
