"""InferencePool shapes: v1 (``inference.networking.k8s.io``), v1alpha2 (``inference.networking.x-k8s.io``).

The two kinds share a name but differ in layout (see spec 1.4.5); the v1alpha2 spec is derived from the
v1 spec by :func:`to_v1alpha2_spec`.
"""

from __future__ import annotations

from pydantic import Field

from llmisvc_core.errors import StepFailedError
from llmisvc_core.models.kube import POOL_V1_GROUP, POOL_V1ALPHA2_GROUP, Condition, KubeModel, KubeObject


class LabelSelector(KubeModel):
    match_labels: dict[str, str] | None = None


class Port(KubeModel):
    number: int = 0


class EndpointPickerRef(KubeModel):
    group: str | None = None
    kind: str | None = None
    name: str = ""
    port: Port | None = None
    failure_mode: str | None = None


class InferencePoolSpec(KubeModel):
    selector: LabelSelector | None = None
    target_ports: list[Port] | None = None
    app_protocol: str | None = None
    endpoint_picker_ref: EndpointPickerRef | None = None


class PoolParentReference(KubeModel):
    group: str | None = None
    kind: str | None = None
    name: str = ""
    namespace: str | None = None


class PoolParentStatus(KubeModel):
    parent_ref: PoolParentReference = Field(default_factory=PoolParentReference)
    controller_name: str | None = None
    conditions: list[Condition] | None = None


class InferencePoolStatus(KubeModel):
    parents: list[PoolParentStatus] | None = None


class InferencePool(KubeObject):
    api_version: str = f"{POOL_V1_GROUP}/v1"
    kind: str = "InferencePool"
    spec: InferencePoolSpec = Field(default_factory=InferencePoolSpec)
    status: InferencePoolStatus | None = None

    def parents(self) -> list[PoolParentStatus]:
        return list(self.status.parents or []) if self.status else []


class ExtensionRef(KubeModel):
    group: str | None = None
    kind: str | None = None
    name: str = ""
    port_number: int | None = None
    failure_mode: str | None = None


class InferencePoolV1Alpha2Spec(KubeModel):
    selector: dict[str, str] | None = None
    target_port_number: int | None = None
    extension_ref: ExtensionRef | None = None


class InferencePoolV1Alpha2Status(KubeModel):
    # The v1alpha2 CRD names its list ``parent`` (singular) on the wire.
    parent: list[PoolParentStatus] | None = Field(default=None, alias="parent")


class InferencePoolV1Alpha2(KubeObject):
    api_version: str = f"{POOL_V1ALPHA2_GROUP}/v1alpha2"
    kind: str = "InferencePool"
    spec: InferencePoolV1Alpha2Spec = Field(default_factory=InferencePoolV1Alpha2Spec)
    status: InferencePoolV1Alpha2Status | None = None

    def parents(self) -> list[PoolParentStatus]:
        return list(self.status.parent or []) if self.status else []


class EmptyTargetPortsError(StepFailedError):
    """The v1 spec has no target port, so there is nothing to put in v1alpha2's targetPortNumber."""


def to_v1alpha2_spec(spec: InferencePoolSpec) -> InferencePoolV1Alpha2Spec:
    """Convert a v1 pool spec to the v1alpha2 layout (R-SCH-7).

    ``appProtocol`` is dropped; ``kind`` and ``failureMode`` are always set, possibly to "" (quirk Q31).
    An empty ``targetPorts`` raises :class:`EmptyTargetPortsError` instead of crashing (decision P7).
    """
    if not spec.target_ports:
        raise EmptyTargetPortsError("the InferencePool spec has no targetPorts")
    converted = InferencePoolV1Alpha2Spec(target_port_number=spec.target_ports[0].number)
    if spec.selector is not None and spec.selector.match_labels is not None:
        converted.selector = dict(spec.selector.match_labels)
    # Go's v1 endpointPickerRef is a value, not a pointer: an absent one converts as all-empty.
    picker = spec.endpoint_picker_ref or EndpointPickerRef()
    converted.extension_ref = ExtensionRef(
        group=picker.group,
        kind=picker.kind or "",
        name=picker.name,
        port_number=picker.port.number if picker.port is not None else None,
        failure_mode=picker.failure_mode or "",
    )
    return converted
