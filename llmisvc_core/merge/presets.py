"""KServe's merge-time adjustments of the merged spec (``config_merge.go``), and a built-in-only merge.

After the configuration merge (:mod:`llmisvc_core.merge.config_merge`) KServe adjusts the merged router spec
in this order: an empty pool selector selects the workload, an empty scheduler service account gets the
``-epp-sa`` name, ``gateway.refs`` become the managed route's parentRefs, default pool backends point at
the workload Service when there is no scheduler or at the referenced pool, and an EPP reference without
a port gets 9002. :func:`adjust` does exactly that.

:func:`apply_router_presets` runs the whole merge against KServe's shipped configs only (no cluster
reads), to see what a spec asks for without a cluster.
"""

from __future__ import annotations

from typing import Any

from llmisvc_core import naming
from llmisvc_core.merge import config_merge
from llmisvc_core.models.gateway_api import HTTPRouteSpec, ParentReference
from llmisvc_core.models.inference_pool import LabelSelector, Port
from llmisvc_core.models.kube import GATEWAY_GROUP, ResourceType
from llmisvc_core.models.llmisvc import (
    GatewayRef,
    LLMInferenceService,
    RouterSpec,
    is_default_pool_backend_ref,
)
from llmisvc_core.world.config import Environment, RouterConfig

EPP_PORT = 9002


class _NoConfigs:
    """A reader that has no LLMInferenceServiceConfig: every well-known config falls back to KServe's copy."""

    def get(self, type_: ResourceType, namespace: str, name: str) -> dict[str, Any] | None:
        return None

    def list(self, type_: ResourceType, namespace: str, labels: Any) -> list[dict[str, Any]]:
        return []

    def is_installed(self, type_: ResourceType) -> bool:
        return False


def apply_router_presets(
    svc: LLMInferenceService, config: RouterConfig, env: Environment | None = None
) -> LLMInferenceService:
    """``svc`` merged with KServe's shipped well-known configs and adjusted; unchanged if that fails
    (a baseRef cannot be resolved without the cluster)."""
    try:
        combined = config_merge.combine(svc, _NoConfigs(), env or Environment(), config)
    except config_merge.CombineError:
        return svc.model_copy(deep=True)
    return adjust(svc, combined.spec)


def adjust(svc: LLMInferenceService, merged_spec: dict[str, Any]) -> LLMInferenceService:
    """A copy of ``svc`` with ``merged_spec`` and KServe's merge-time adjustments made to it."""
    result = svc.model_copy(deep=True)
    result.spec = type(svc.spec).model_validate(merged_spec)
    router = result.spec.router
    if router is None:
        return result
    _default_pool_selector(svc, router)
    _default_service_account(svc, router)
    _parent_refs_from_gateway_refs(router)
    _point_default_backends(svc, router)
    _default_epp_port(router)
    return result


def _default_pool_selector(svc: LLMInferenceService, router: RouterSpec) -> None:
    """An empty ``pool.spec.selector.matchLabels`` selects the service's workload pods."""
    scheduler = router.scheduler
    if scheduler is None or scheduler.pool is None or scheduler.pool.spec is None:
        return
    spec = scheduler.pool.spec
    if spec.selector is None:
        spec.selector = LabelSelector()
    if not spec.selector.match_labels:
        spec.selector.match_labels = naming.workload_selector(svc.name)


def _default_service_account(svc: LLMInferenceService, router: RouterSpec) -> None:
    scheduler = router.scheduler
    if (
        scheduler is not None
        and scheduler.template is not None
        and not scheduler.template.service_account_name
    ):
        scheduler.template.service_account_name = naming.epp_service_account_name(svc.name)


def _default_epp_port(router: RouterSpec) -> None:
    """A Service EPP reference without a port gets 9002 (the v1 CRD requires one; old configs omit it)."""
    scheduler = router.scheduler
    if scheduler is None or scheduler.pool is None or scheduler.pool.spec is None:
        return
    ref = scheduler.pool.spec.endpoint_picker_ref
    if ref is None or (ref.port is not None and ref.port.number != 0):
        return
    if ref.kind in (None, "", "Service"):
        ref.port = Port(number=EPP_PORT)


def _managed_route_spec(router: RouterSpec) -> HTTPRouteSpec | None:
    if router.route is None or router.route.http is None:
        return None
    return router.route.http.spec


def _parent_refs_from_gateway_refs(router: RouterSpec) -> None:
    """With ``gateway.refs``, the managed route attaches to exactly those Gateways (and listeners)."""
    spec = _managed_route_spec(router)
    if spec is None or router.gateway is None or not router.gateway.has_refs():
        return
    spec.parent_refs = [_parent_ref(ref) for ref in router.gateway.refs or []]


def _parent_ref(ref: GatewayRef) -> ParentReference:
    # An omitted namespace lets Gateway API default it to the route's namespace, as validation assumes.
    return ParentReference(
        group=GATEWAY_GROUP,
        kind="Gateway",
        name=ref.name,
        namespace=ref.namespace or None,
        section_name=ref.section_name or None,
    )


def _point_default_backends(svc: LLMInferenceService, router: RouterSpec) -> None:
    """Default pool backends go to the workload Service without a scheduler, or to the external pool."""
    spec = _managed_route_spec(router)
    if spec is None:
        return
    scheduler = router.scheduler
    pool_ref = scheduler.pool.ref if scheduler is not None and scheduler.pool is not None else None
    for rule in spec.rules or []:
        for ref in rule.backend_refs or []:
            if not is_default_pool_backend_ref(ref, svc):
                continue
            if scheduler is None:
                ref.group, ref.kind = "", "Service"
                ref.name = naming.workload_service_name(svc.name)
            elif pool_ref is not None and scheduler.has_pool_ref():
                ref.name = pool_ref.name
