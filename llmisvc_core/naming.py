"""Derived names, labels and label selectors of every object the router manages: the one home for them.

Core, watcher, cluster cache, stand-in, tests and benchmarks name a service's objects through these
functions (``route_name(service)``…) rather than spelling ``child_name(service, SUFFIX)`` out.
"""

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
TOKENIZER_SUFFIX = "-tokenizer"

COMPONENT_LABEL = "app.kubernetes.io/component"
NAME_LABEL = "app.kubernetes.io/name"
PART_OF_LABEL = "app.kubernetes.io/part-of"
PART_OF_VALUE = "llminferenceservice"
ROUTER_COMPONENT = "llminferenceservice-router"
SCHEDULER_COMPONENT = "llminferenceservice-router-scheduler"
TOKENIZER_COMPONENT = "tokenizer"
GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"
#: The routing group of a grouped service, on its managed HTTPRoute (KServe #5798, ``RouterLabels``).
ROUTING_GROUP_LABEL = "serving.kserve.io/routing-group"

#: The label selector of the objects KServe's LLMInferenceService controllers own (the part-of label).
PART_OF_SELECTOR = f"{PART_OF_LABEL}={PART_OF_VALUE}"


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


def route_name(service: str) -> str:
    """The managed HTTPRoute (R-EXP-1)."""
    return child_name(service, ROUTE_SUFFIX)


def pool_name(service: str) -> str:
    """The managed InferencePool, v1 and v1alpha2 alike."""
    return child_name(service, POOL_SUFFIX)


def epp_service_name(service: str) -> str:
    """The scheduler's (EPP) Service."""
    return child_name(service, EPP_SERVICE_SUFFIX)


def epp_service_account_name(service: str) -> str:
    """The scheduler's ServiceAccount, defaulted by the config merge."""
    return child_name(service, EPP_SERVICE_ACCOUNT_SUFFIX)


def scheduler_name(service: str) -> str:
    """The scheduler Deployment (the workload reconciler's; the router reads its status)."""
    return child_name(service, SCHEDULER_SUFFIX)


def tokenizer_name(service: str) -> str:
    """The standalone tokenizer's Deployment and Service (KServe #5712; the router reads the Deployment)."""
    return child_name(service, TOKENIZER_SUFFIX)


def workload_service_name(service: str) -> str:
    """The workload's Service, the backend of a route without a scheduler."""
    return child_name(service, WORKLOAD_SERVICE_SUFFIX)


def is_part_of(labels: dict[str, str] | None) -> bool:
    """The object carries the part-of label of KServe's LLMInferenceService objects."""
    return (labels or {}).get(PART_OF_LABEL) == PART_OF_VALUE


def router_labels(name: str, group: str | None = None) -> dict[str, str]:
    """The managed route's labels; a grouped service's route also carries its routing group."""
    labels = {COMPONENT_LABEL: ROUTER_COMPONENT, NAME_LABEL: name, PART_OF_LABEL: PART_OF_VALUE}
    if group is not None:
        labels[ROUTING_GROUP_LABEL] = group
    return labels


def scheduler_labels(name: str) -> dict[str, str]:
    return {COMPONENT_LABEL: SCHEDULER_COMPONENT, NAME_LABEL: name, PART_OF_LABEL: PART_OF_VALUE}


def tokenizer_labels(name: str) -> dict[str, str]:
    """KServe's ``TokenizerLabels``: distinct from the scheduler's, so neither selects the other's pods."""
    return {COMPONENT_LABEL: TOKENIZER_COMPONENT, NAME_LABEL: name, PART_OF_LABEL: PART_OF_VALUE}


def workload_selector(name: str) -> dict[str, str]:
    """The labels of the service's workload pods, used as the default pool selector."""
    return {NAME_LABEL: name, PART_OF_LABEL: PART_OF_VALUE, "kserve.io/component": "workload"}


def publisher_model(namespace: str, model: str) -> str:
    return f"publishers/{namespace}/models/{model}"
