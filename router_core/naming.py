"""Derived names, labels and the controller owner reference of every object the router manages."""

from __future__ import annotations

import hashlib

LONGEST = 63
MD5_LEN = 32
HEAD = LONGEST - MD5_LEN

ROUTE_SUFFIX = "-kserve-route"
POOL_SUFFIX = "-inference-pool"
EPP_SERVICE_SUFFIX = "-epp-service"
SCHEDULER_SUFFIX = "-kserve-router-scheduler"
WORKLOAD_SERVICE_SUFFIX = "-kserve-workload-svc"
EPP_SERVICE_ACCOUNT_SUFFIX = "-epp-sa"

COMPONENT_LABEL = "app.kubernetes.io/component"
NAME_LABEL = "app.kubernetes.io/name"
PART_OF_LABEL = "app.kubernetes.io/part-of"
PART_OF_VALUE = "llminferenceservice"
ROUTER_COMPONENT = "llminferenceservice-router"
SCHEDULER_COMPONENT = "llminferenceservice-router-scheduler"
GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"


def child_name(parent: str, suffix: str) -> str:
    """Knative's kmeta.ChildName: ``parent + suffix``, shortened with an md5 of the parent past 63 bytes."""
    parent_bytes, suffix_bytes = parent.encode(), suffix.encode()
    if len(parent_bytes) <= LONGEST - len(suffix_bytes):
        return parent + suffix
    if HEAD - len(suffix_bytes) <= 0:
        digest = hashlib.md5(parent_bytes + suffix_bytes, usedforsecurity=False).hexdigest()
        head = parent_bytes[:HEAD] if len(parent_bytes) > HEAD else parent_bytes
        result = head + digest.encode()
        if len(result) < LONGEST:
            result += suffix_bytes[: LONGEST - len(result)]
        text = result.decode(errors="ignore")
        while text and not (text[-1].isascii() and text[-1].isalnum()):
            text = text[:-1]
        return text
    digest = hashlib.md5(parent_bytes, usedforsecurity=False).hexdigest()
    return parent_bytes[: HEAD - len(suffix_bytes)].decode(errors="ignore") + digest + suffix


def router_labels(name: str) -> dict[str, str]:
    return {COMPONENT_LABEL: ROUTER_COMPONENT, NAME_LABEL: name, PART_OF_LABEL: PART_OF_VALUE}


def scheduler_labels(name: str) -> dict[str, str]:
    return {COMPONENT_LABEL: SCHEDULER_COMPONENT, NAME_LABEL: name, PART_OF_LABEL: PART_OF_VALUE}


def workload_selector(name: str) -> dict[str, str]:
    """The labels of the service's workload pods, used as the default pool selector."""
    return {NAME_LABEL: name, PART_OF_LABEL: PART_OF_VALUE, "kserve.io/component": "workload"}


def publisher_model(namespace: str, model: str) -> str:
    return f"publishers/{namespace}/models/{model}"
