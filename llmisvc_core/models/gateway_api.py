"""Gateway API shapes (``gateway.networking.k8s.io/v1``): Gateway, GatewayClass and HTTPRoute.

Only the fields the router reads or writes are declared; everything else (filters, timeouts, retry,
session persistence, future fields) rides along untouched thanks to ``extra="allow"``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from llmisvc_core.models.kube import GATEWAY_GROUP, Condition, KubeModel, KubeObject


class ParentReference(KubeModel):
    group: str | None = None
    kind: str | None = None
    namespace: str | None = None
    name: str = ""
    section_name: str | None = None
    port: int | None = None

    def gateway_namespace(self, default: str) -> str:
        """The Gateway's namespace: the explicit one, else ``default`` (the route's namespace)."""
        return self.namespace or default

    def identity(self, route_namespace: str) -> tuple[str, str, str, str, str, int]:
        """Gateway API identity with the defaults applied to absent fields (an explicit "" is kept)."""
        return (
            self.name,
            GATEWAY_GROUP if self.group is None else self.group,
            "Gateway" if self.kind is None else self.kind,
            route_namespace if self.namespace is None else self.namespace,
            self.section_name or "",
            self.port or 0,
        )

    def is_same_parent(self, other: ParentReference, route_namespace: str) -> bool:
        """Both name the same parent of a route in ``route_namespace`` (R-HR-4 step 2)."""
        return self.identity(route_namespace) == other.identity(route_namespace)


class HTTPHeaderMatch(KubeModel):
    type: str | None = None
    name: str = ""
    value: str = ""


class HTTPPathMatch(KubeModel):
    type: str | None = None
    value: str | None = None


class HTTPRouteMatch(KubeModel):
    path: HTTPPathMatch | None = None
    headers: list[HTTPHeaderMatch] | None = None
    query_params: list[dict[str, Any]] | None = None
    method: str | None = None


class HTTPBackendRef(KubeModel):
    group: str | None = None
    kind: str | None = None
    name: str = ""
    namespace: str | None = None
    port: int | None = None
    weight: int | None = None
    filters: list[dict[str, Any]] | None = None


class HTTPRouteRule(KubeModel):
    name: str | None = None
    matches: list[HTTPRouteMatch] | None = None
    filters: list[dict[str, Any]] | None = None
    backend_refs: list[HTTPBackendRef] | None = None


class HTTPRouteSpec(KubeModel):
    parent_refs: list[ParentReference] | None = None
    hostnames: list[str] | None = None
    rules: list[HTTPRouteRule] | None = None


class RouteParentStatus(KubeModel):
    parent_ref: ParentReference = Field(default_factory=ParentReference)
    controller_name: str | None = None
    conditions: list[Condition] | None = None


class HTTPRouteStatus(KubeModel):
    parents: list[RouteParentStatus] | None = None


class HTTPRoute(KubeObject):
    api_version: str = f"{GATEWAY_GROUP}/v1"
    kind: str = "HTTPRoute"
    spec: HTTPRouteSpec = Field(default_factory=HTTPRouteSpec)
    status: HTTPRouteStatus | None = None


class Listener(KubeModel):
    name: str = ""
    hostname: str | None = None
    port: int = 0
    protocol: str = ""


class GatewaySpec(KubeModel):
    gateway_class_name: str = ""
    listeners: list[Listener] | None = None


class GatewayStatusAddress(KubeModel):
    type: str | None = None
    value: str = ""


class GatewayStatus(KubeModel):
    addresses: list[GatewayStatusAddress] | None = None
    conditions: list[Condition] | None = None


class Gateway(KubeObject):
    api_version: str = f"{GATEWAY_GROUP}/v1"
    kind: str = "Gateway"
    spec: GatewaySpec = Field(default_factory=GatewaySpec)
    status: GatewayStatus | None = None


class GatewayClass(KubeObject):
    api_version: str = f"{GATEWAY_GROUP}/v1"
    kind: str = "GatewayClass"
