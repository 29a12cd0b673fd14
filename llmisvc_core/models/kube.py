"""Shared Kubernetes object shapes: the base model, object metadata, conditions and resource types.

Every model is camelCase on the wire and keeps fields it does not declare (``extra="allow"``), so an
object read from the cluster and written back loses nothing: a user's HTTPRoute spec is copied into
the managed route as-is, including filters, timeouts and fields from newer Gateway API releases.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class KubeModel(BaseModel):
    """Base of every API shape: camelCase aliases, unknown fields preserved."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        alias_generator=to_camel,
        validate_assignment=False,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON form sent to the API server: aliases, no nulls."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Self:
        return cls.model_validate(data)


class OwnerReference(KubeModel):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(KubeModel):
    name: str = ""
    namespace: str | None = None
    uid: str | None = None
    generation: int | None = None
    resource_version: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    deletion_timestamp: str | None = None


class Condition(KubeModel):
    """A metav1.Condition as written by Gateway API and Inference Extension controllers."""

    type: str = ""
    status: str = ""
    observed_generation: int | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None

    def is_stale(self, generation: int | None) -> bool:
        """Stale means reported for an older generation than the object's current one."""
        observed = self.observed_generation or 0
        return observed > 0 and observed < (generation or 0)


def find_condition(conditions: list[Condition] | None, type_: str) -> Condition | None:
    """First condition of the given type, as Go's meta.FindStatusCondition."""
    for cond in conditions or []:
        if cond.type == type_:
            return cond
    return None


class KubeObject(KubeModel):
    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or ""


@dataclass(frozen=True, order=True)
class ResourceType:
    """One served API resource: what the router reads, writes or requires to be installed."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def crd_name(self) -> str:
        """The name of this resource's CustomResourceDefinition, e.g. httproutes.gateway.networking.k8s.io."""
        return f"{self.plural}.{self.group}"

    def __str__(self) -> str:
        return f"{self.crd_name}/{self.version}" if self.group else f"{self.plural}/{self.version}"


def collection_path(type_: ResourceType, namespace: str) -> str:
    """The REST path of the resource's collection, in ``namespace`` when it is namespaced and given."""
    base = f"/apis/{type_.group}/{type_.version}" if type_.group else f"/api/{type_.version}"
    if type_.namespaced and namespace:
        return f"{base}/namespaces/{namespace}/{type_.plural}"
    return f"{base}/{type_.plural}"


GATEWAY_GROUP = "gateway.networking.k8s.io"
POOL_V1_GROUP = "inference.networking.k8s.io"
POOL_V1ALPHA2_GROUP = "inference.networking.x-k8s.io"
SERVING_GROUP = "serving.kserve.io"

LLMISVC = ResourceType(SERVING_GROUP, "v1alpha2", "LLMInferenceService", "llminferenceservices")
LLMISVC_CONFIG = ResourceType(
    SERVING_GROUP, "v1alpha2", "LLMInferenceServiceConfig", "llminferenceserviceconfigs"
)
HTTPROUTE = ResourceType(GATEWAY_GROUP, "v1", "HTTPRoute", "httproutes")
GATEWAY = ResourceType(GATEWAY_GROUP, "v1", "Gateway", "gateways")
GATEWAYCLASS = ResourceType(GATEWAY_GROUP, "v1", "GatewayClass", "gatewayclasses", namespaced=False)
POOL_V1 = ResourceType(POOL_V1_GROUP, "v1", "InferencePool", "inferencepools")
POOL_V1ALPHA2 = ResourceType(POOL_V1ALPHA2_GROUP, "v1alpha2", "InferencePool", "inferencepools")
SERVICE = ResourceType("", "v1", "Service", "services")
CONFIGMAP = ResourceType("", "v1", "ConfigMap", "configmaps")
DEPLOYMENT = ResourceType("apps", "v1", "Deployment", "deployments")
CRD = ResourceType(
    "apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", namespaced=False
)


def crd_established(crd: Mapping[str, Any]) -> bool:
    """A CustomResourceDefinition (wire form) whose ``Established`` condition is True: kube-apiserver
    serves its kind from then on (moments later, in fact)."""
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(
        isinstance(c, dict) and (c.get("type"), c.get("status")) == ("Established", "True")
        for c in conditions
    )


#: Types that are always served by a Kubernetes API server (no CRD needed).
BUILTIN_TYPES = frozenset({SERVICE, CONFIGMAP, DEPLOYMENT, CRD})
#: Every type the router deals with, by (apiVersion, kind).
KNOWN_TYPES = {
    (t.api_version, t.kind): t
    for t in (
        LLMISVC,
        LLMISVC_CONFIG,
        HTTPROUTE,
        GATEWAY,
        GATEWAYCLASS,
        POOL_V1,
        POOL_V1ALPHA2,
        SERVICE,
        CONFIGMAP,
        DEPLOYMENT,
        CRD,
    )
}


#: Every known type by its display name, e.g. ``httproutes.gateway.networking.k8s.io/v1``.
TYPES_BY_NAME = {str(t): t for t in KNOWN_TYPES.values()}


def not_found(type_: ResourceType, name: str) -> str:
    """The API server's NotFound message, e.g. ``gateways.gateway.networking.k8s.io "gw" not found``."""
    from llmisvc_core.gocompat.gofmt import quote

    resource = f"{type_.plural}.{type_.group}" if type_.group else type_.plural
    return f"{resource} {quote(name)} not found"


def type_of(api_version: str, kind: str) -> ResourceType | None:
    return KNOWN_TYPES.get((api_version, kind))


@dataclass(frozen=True, order=True)
class ObjectKey:
    """Identity of an object: its type, namespace ("" for cluster-scoped) and name."""

    type: ResourceType
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def key_of(obj: dict[str, Any]) -> ObjectKey | None:
    """The key of a wire object of a known type (None for kinds the router does not use)."""
    type_ = type_of(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if type_ is None:
        return None
    meta = obj.get("metadata") or {}
    return ObjectKey(
        type_, str(meta.get("namespace") or "") if type_.namespaced else "", str(meta.get("name"))
    )
