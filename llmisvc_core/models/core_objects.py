"""The parts of built-in Kubernetes objects the router uses: Service, Deployment, ConfigMap and CRD."""

from __future__ import annotations

from pydantic import Field

from llmisvc_core.models.kube import Condition, KubeModel, KubeObject


class ServicePort(KubeModel):
    name: str | None = None
    port: int = 0
    target_port: int | str | None = None
    protocol: str | None = None


class ServiceSpec(KubeModel):
    ports: list[ServicePort] | None = None
    selector: dict[str, str] | None = None


class Service(KubeObject):
    api_version: str = "v1"
    kind: str = "Service"
    spec: ServiceSpec = Field(default_factory=ServiceSpec)


class DeploymentStatus(KubeModel):
    available_replicas: int | None = None
    conditions: list[Condition] | None = None


class Deployment(KubeObject):
    api_version: str = "apps/v1"
    kind: str = "Deployment"
    status: DeploymentStatus | None = None


class ConfigMap(KubeObject):
    api_version: str = "v1"
    kind: str = "ConfigMap"
    data: dict[str, str] | None = None


class CRDNames(KubeModel):
    kind: str = ""
    plural: str = ""


class CRDVersion(KubeModel):
    name: str = ""
    served: bool = True


class CRDSpec(KubeModel):
    group: str = ""
    names: CRDNames = Field(default_factory=CRDNames)
    versions: list[CRDVersion] | None = None


class CustomResourceDefinition(KubeObject):
    api_version: str = "apiextensions.k8s.io/v1"
    kind: str = "CustomResourceDefinition"
    spec: CRDSpec = Field(default_factory=CRDSpec)

    def served_versions(self) -> list[str]:
        return [v.name for v in self.spec.versions or [] if v.served]
