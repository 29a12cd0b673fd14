"""The LLMInferenceService (``serving.kserve.io/v1alpha2``): fields the router reads, the status it writes.

Spec predicates (Go: ``HasRefs``, ``HasSpec``, ``HasRef``, ``EPPServiceName``) live here as methods so
every rule asks the same question the same way.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from llmisvc_core import naming
from llmisvc_core.models.gateway_api import HTTPBackendRef, HTTPRouteSpec
from llmisvc_core.models.inference_pool import InferencePoolSpec
from llmisvc_core.models.kube import LLMISVC, LLMISVC_CONFIG, KubeModel, KubeObject, OwnerReference

STOP_ANNOTATION = "serving.kserve.io/stop"
MODEL_BASED_ROUTING_ANNOTATION = "serving.kserve.io/model-based-routing-enabled"
POOL_MIGRATED_ANNOTATION = "serving.kserve.io/inference-pool-migrated"
POOL_KIND = "InferencePool"


class LoRAAdapter(KubeModel):
    name: str | None = None


class LoRASpec(KubeModel):
    adapters: list[LoRAAdapter] | None = None


class ModelSpec(KubeModel):
    name: str | None = None
    lora: LoRASpec | None = None


class NamedRef(KubeModel):
    name: str = ""


class GatewayRef(KubeModel):
    name: str = ""
    namespace: str | None = None
    section_name: str | None = None


class HTTPRouteSettings(KubeModel):
    refs: list[NamedRef] | None = None
    spec: HTTPRouteSpec | None = None

    def has_refs(self) -> bool:
        return bool(self.refs)

    def has_spec(self) -> bool:
        return self.spec is not None


class RouteSpec(KubeModel):
    http: HTTPRouteSettings | None = None
    #: Traffic splitting (KServe #5727): the routing group this service is a member of, and its share.
    group: str | None = None
    weight: int | None = None


class GatewaySettings(KubeModel):
    refs: list[GatewayRef] | None = None

    def has_refs(self) -> bool:
        return bool(self.refs)


class PoolSettings(KubeModel):
    ref: NamedRef | None = None
    spec: InferencePoolSpec | None = None

    def has_ref(self) -> bool:
        return self.ref is not None and self.ref.name != ""


class ContainerPort(KubeModel):
    name: str | None = None
    container_port: int = 0
    protocol: str | None = None


class Container(KubeModel):
    name: str = ""
    #: Read for a ``--config-text`` scheduler config (the tokenizer and latency-predictor rules).
    args: list[str] | None = None
    ports: list[ContainerPort] | None = None


class PodTemplate(KubeModel):
    """The scheduler's pod spec; only container ports and args and the service account are read."""

    containers: list[Container] | None = None
    service_account_name: str | None = None


class TokenizerSpec(KubeModel):
    """``scheduler.tokenizer`` (KServe #5712): its presence asks for the standalone tokenizer; the pod
    template is the workload reconciler's and is carried, not read."""

    template: dict[str, Any] | None = None


class SchedulerSpec(KubeModel):
    pool: PoolSettings | None = None
    template: PodTemplate | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    replicas: int | None = None
    config: dict[str, Any] | None = None
    tokenizer: TokenizerSpec | None = None

    def has_pool_ref(self) -> bool:
        return self.pool is not None and self.pool.has_ref()


class RouterSpec(KubeModel):
    route: RouteSpec | None = None
    gateway: GatewaySettings | None = None
    scheduler: SchedulerSpec | None = None


class LLMInferenceServiceSpec(KubeModel):
    model: ModelSpec | None = None
    # The workload's pod-template annotations are inlined into the spec (WorkloadSpec).
    annotations: dict[str, str] | None = None
    router: RouterSpec | None = None


class ServiceCondition(KubeModel):
    """A knative condition (apis.Condition): like metav1's but with a severity and no observedGeneration."""

    type: str = ""
    status: str = ""
    severity: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class ObjectReference(KubeModel):
    """Gateway API ObjectReference: ``group`` is always written, even when empty."""

    group: str = ""
    kind: str = ""
    name: str = ""
    namespace: str | None = None


class AddressModel(KubeModel):
    name: str = ""


class SourcedAddress(KubeModel):
    name: str | None = None
    url: str | None = None
    ca_certs: str | None = Field(default=None, alias="CACerts")
    audience: str | None = None
    origin: ObjectReference | None = None
    models: list[AddressModel] | None = None


class ObservedGateway(ObjectReference):
    listeners: list[str] | None = None
    http_routes: list[ObjectReference] | None = None


class SchedulerStatus(KubeModel):
    inference_pool: ObjectReference | None = None
    service: ObjectReference | None = None


class GroupMemberStatus(KubeModel):
    """One member of the routing group as this service routes it (Go: ``GroupMemberStatus``)."""

    name: str = ""
    weight: int = 0  # always written, 0 included (Go has no omitempty on it)
    stopped: bool | None = None  # only when True (omitempty)
    backend_ref: dict[str, Any] | None = None


class GroupStatus(KubeModel):
    name: str = ""
    members: list[GroupMemberStatus] | None = None


class RouterStatus(KubeModel):
    gateways: list[ObservedGateway] | None = None
    scheduler: SchedulerStatus | None = None
    group: GroupStatus | None = None


class LLMInferenceServiceStatus(KubeModel):
    observed_generation: int | None = None
    conditions: list[ServiceCondition] | None = None
    url: str | None = None
    address: dict[str, Any] | None = None
    addresses: list[SourcedAddress] | None = None
    router: RouterStatus | None = None
    #: The LLMInferenceServiceConfigs the last successful merge applied: ``{name, namespace, source}``.
    applied_configs: list[dict[str, Any]] | None = None


class LLMInferenceService(KubeObject):
    api_version: str = LLMISVC.api_version
    kind: str = LLMISVC.kind
    spec: LLMInferenceServiceSpec = Field(default_factory=LLMInferenceServiceSpec)
    status: LLMInferenceServiceStatus = Field(default_factory=LLMInferenceServiceStatus)

    # --- predicates (spec 1.2) -------------------------------------------------------------------
    def is_stopped(self) -> bool:
        """R-STOP-1: the stop annotation equals "true", ignoring case."""
        value = (self.metadata.annotations or {}).get(STOP_ANNOTATION)
        return value is not None and value.lower() == "true"

    @property
    def router(self) -> RouterSpec | None:
        return self.spec.router

    def route_settings(self) -> HTTPRouteSettings | None:
        router = self.spec.router
        if router is None or router.route is None:
            return None
        return router.route.http

    def http_has_refs(self) -> bool:
        http = self.route_settings()
        return http is not None and http.has_refs()

    def http_has_spec(self) -> bool:
        http = self.route_settings()
        return http is not None and http.has_spec()

    def routing_group(self) -> str | None:
        """``spec.router.route.group`` (Go: ``RouterSpec.Group``); None when the service is not grouped."""
        router = self.spec.router
        return router.route.group if router is not None and router.route is not None else None

    def routing_weight(self) -> int:
        """``spec.router.route.weight``, 0 when absent (Go: ``ptr.Deref(Weight(), 0)``)."""
        router = self.spec.router
        weight = router.route.weight if router is not None and router.route is not None else None
        return weight if weight is not None else 0

    def gateway_has_refs(self) -> bool:
        router = self.spec.router
        return router is not None and router.gateway is not None and router.gateway.has_refs()

    def scheduler(self) -> SchedulerSpec | None:
        return self.spec.router.scheduler if self.spec.router is not None else None

    def pool_has_ref(self) -> bool:
        scheduler = self.scheduler()
        return scheduler is not None and scheduler.has_pool_ref()

    def epp_service_name(self) -> str:
        """The EPP Service: the pool spec's endpointPickerRef name, else the derived default."""
        scheduler = self.scheduler()
        if scheduler is not None and scheduler.pool is not None and not scheduler.has_pool_ref():
            spec = scheduler.pool.spec
            if spec is not None and spec.endpoint_picker_ref is not None and spec.endpoint_picker_ref.name:
                return spec.endpoint_picker_ref.name
        return naming.epp_service_name(self.name)

    def controller_reference(self) -> OwnerReference:
        """The owner reference placed on every managed object (Go: metav1.NewControllerRef)."""
        return OwnerReference(
            api_version=LLMISVC.api_version,
            kind=LLMISVC.kind,
            name=self.name,
            uid=self.metadata.uid or "",
            controller=True,
            block_owner_deletion=True,
        )

    def managed_pool_name(self) -> str:
        return naming.pool_name(self.name)

    def model_name(self) -> str:
        """R-ADDR-3: spec.model.name, defaulted to the object's name (Go: only when absent, not "")."""
        model = self.spec.model
        return model.name if model is not None and model.name is not None else self.name

    def lora_adapter_names(self) -> list[str]:
        """Names of the LoRA adapters, skipping adapters with no name (Go: absent, not "")."""
        model = self.spec.model
        if model is None or model.lora is None:
            return []
        return [a.name for a in model.lora.adapters or [] if a.name is not None]


class LLMInferenceServiceConfig(KubeObject):
    """A layer of the configuration merge: a spec of the same shape as the service's (all optional)."""

    api_version: str = LLMISVC_CONFIG.api_version
    kind: str = LLMISVC_CONFIG.kind
    spec: LLMInferenceServiceSpec = Field(default_factory=LLMInferenceServiceSpec)


def is_default_pool_backend_ref(ref: HTTPBackendRef, svc: LLMInferenceService) -> bool:
    """R-EXP-10: an InferencePool backend named like the managed pool; group and namespace do not matter."""
    return ref.kind == POOL_KIND and ref.name == svc.managed_pool_name()
