"""Builders of core Kubernetes objects (Service, Deployment, ConfigMap, CRDs) and of any object of a known
type, as wire dicts with keyword overrides: the rest of the one set of builders (``tests.builders``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from llmisvc_core import naming
from llmisvc_core.models import kube
from tests.builders import KSERVE, Wire, metadata


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
    """Any object of a known type (the namespace is dropped for cluster-scoped types)."""
    meta = metadata(
        name,
        namespace if resource.namespaced else None,
        rv=rv,
        labels=labels,
        owner=owner,
        owner_kind=owner_kind,
        controller=controller,
    )
    body: Wire = {"apiVersion": resource.api_version, "kind": resource.kind, "metadata": meta}
    if spec is not None:
        body["spec"] = spec
    return body


def managed(resource: kube.ResourceType, name: str, owner: str, namespace: str = "ns") -> Wire:
    """An object the router manages for ``owner``: the part-of and name labels, owned by the service."""
    labels = {naming.PART_OF_LABEL: naming.PART_OF_VALUE, naming.NAME_LABEL: owner}
    return obj(resource, name, namespace, labels=labels, owner=owner)


# --- core objects ---------------------------------------------------------------------------------


def k8s_service(
    name: str,
    namespace: str | None = "ns",
    *,
    labels: dict[str, str] | None = None,
    ports: Sequence[int] = (80,),
) -> Wire:
    """A core/v1 Service (named so to keep it apart from the LLMInferenceService ``service``)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(name, namespace, labels=labels),
        "spec": {"ports": [{"port": p} for p in ports]},
    }


def deployment(name: str, replicas: int = 1, namespace: str | None = None) -> Wire:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(name, namespace),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": "registry.example/app:1"}]},
            },
        },
    }


def scheduler_deployment(svc: Wire) -> Wire:
    """The scheduler Deployment KServe's workload reconciler would create for ``svc``, owned by it."""
    meta = svc["metadata"]
    labels = naming.scheduler_labels(meta["name"])
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(
            naming.scheduler_name(meta["name"]),
            meta["namespace"],
            labels=labels,
            owner=meta["name"],
            owner_kind=svc["kind"],
            owner_uid=meta["uid"],
        ),
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [{"name": "scheduler", "image": "scheduler:latest"}]},
            },
        },
    }


def tokenizer_deployment(svc: Wire, status: Wire | None = None) -> Wire:
    """The standalone tokenizer Deployment KServe's reconciler would create for ``svc`` (#5712), owned by
    it, with ``status`` when given."""
    meta = svc["metadata"]
    labels = naming.tokenizer_labels(meta["name"])
    body: Wire = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(
            naming.tokenizer_name(meta["name"]),
            meta["namespace"],
            labels=labels,
            owner=meta["name"],
            owner_kind=svc["kind"],
            owner_uid=meta["uid"],
        ),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [{"name": "main", "image": "tokenizer:latest"}]},
            },
        },
    }
    if status is not None:
        body["status"] = status
    return body


def configmap(
    name: str,
    namespace: str | None = None,
    *,
    labels: dict[str, str] | None = None,
    rv: str | None = None,
    **data: str,
) -> Wire:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(name, namespace, rv=rv, labels=labels),
        "data": data,
    }


def ingress_config(
    ingress: Wire | None, namespace: str = KSERVE, name: str = "inferenceservice-config"
) -> Wire:
    """KServe's ``inferenceservice-config`` holding ``ingress`` (a ConfigMap without it when ``None``)."""
    data = {"ingress": json.dumps(ingress)} if ingress is not None else {"other": "x"}
    return configmap(name, namespace, rv="1") | {"data": data}


def crd(group: str, plural: str = "things", versions: tuple[str, ...] = ("v1",)) -> Wire:
    body = obj(kube.CRD, f"{plural}.{group}")
    body["spec"] = {"group": group, "versions": [{"name": v, "served": True} for v in versions]}
    return body


def established(body: Wire, stored: bool = True) -> Wire:
    """``body`` (a CRD) with the Established condition kube-apiserver sets once it serves the kind, and
    ``status.storedVersions`` unless ``stored`` is False (another status change, Established either way)."""
    status: Wire = {"conditions": [{"type": "Established", "status": "True"}]}
    if stored:
        status["storedVersions"] = [v["name"] for v in body["spec"]["versions"]]
    return body | {"status": status}


#: A kubeconfig naming a server nothing listens on (port 9, discard): enough for code that builds a client
#: and never sends a request.
UNREACHABLE_KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""
