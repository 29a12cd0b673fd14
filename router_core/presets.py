"""Router presets and merge-time adjustments, applied to the spec before a pass (decision P10).

KServe merges the well-known configs ``kserve-config-llm-router-route`` and ``kserve-config-llm-scheduler``
under the user's spec and then adjusts the result (spec 1.1 "Merge-time adjustments", Appendix F). This
module does the same as one pure defaulting step: the presets are rendered for the service, the user's
router spec is merged over them (a list the user gives replaces the preset's list; objects merge key by
key), and the adjustments run in KServe's order — pool selector, scheduler service account, parentRefs
from ``gateway.refs``, backends without a scheduler, backends of an external pool. The general
LLMInferenceServiceConfig / baseRefs merge is out of scope.
"""

from __future__ import annotations

import copy
from typing import Any

from router_core import naming
from router_core.config import RouterConfig
from router_core.gateway_api import HTTPRouteSpec, ParentReference
from router_core.inference_pool import LabelSelector
from router_core.kube import GATEWAY_GROUP, POOL_V1_GROUP
from router_core.llmisvc import GatewayRef, LLMInferenceService, PodTemplate, RouterSpec
from router_core.migration import is_default_pool_backend_ref

#: The pool-backed endpoints of the route preset, in order, with the stem of their rule names.
POOL_ENDPOINTS = (
    ("v1/completions", "v1-completions"),
    ("v1/chat/completions", "v1-chat-completions"),
    ("v1/responses", "v1-responses"),
    ("v1/messages", "v1-messages"),
)
WORKLOAD_PORT = 8000
#: The scheduler container's ports, named as the EPP Service expects them (R-SCH-5).
SCHEDULER_PORTS = (("grpc", 9002), ("grpc-health", 9003), ("metrics", 9090), ("zmq", 5557))
EPP_PORT = 9002


def apply_router_presets(svc: LLMInferenceService, config: RouterConfig) -> LLMInferenceService:
    """A copy of ``svc`` whose ``spec.router`` has the presets merged in and the 1.1 adjustments made."""
    result = svc.model_copy(deep=True)
    router = result.spec.router
    if router is None:
        return result
    router = _merge_presets(svc, config, router)
    _default_pool_selector(svc, router)
    _default_service_account(svc, router)
    _parent_refs_from_gateway_refs(router)
    _point_default_backends(svc, router)
    result.spec.router = router
    return result


def _merge_presets(svc: LLMInferenceService, config: RouterConfig, router: RouterSpec) -> RouterSpec:
    """Merge the applicable presets under the user's router spec (the same conditions as KServe's)."""
    base: dict[str, Any] = {}
    scheduler = router.scheduler
    uses_scheduler_preset = scheduler is not None and not scheduler.has_pool_ref()
    if uses_scheduler_preset:
        base["scheduler"] = {"pool": {"spec": _scheduler_pool_preset(svc)}}
    http = router.route.http if router.route is not None else None
    if router.route is not None and (http is None or not http.has_refs()):
        base["route"] = {"http": {"spec": _route_preset(svc, config)}}
    given = router.model_dump(by_alias=True, exclude_unset=True, exclude_none=True, mode="json")
    merged = RouterSpec.model_validate(_merge(base, given))
    if uses_scheduler_preset and merged.scheduler is not None and merged.scheduler.template is None:
        # The user's template replaces the preset's whole: container lists are not merged here.
        merged.scheduler.template = _scheduler_template_preset()
    return merged


def _merge(base: Any, override: Any) -> Any:
    """``override`` (what the user set) over ``base``: objects key by key, anything else replaced.

    Deviation (P10): KServe's patch drops an empty list from the user's JSON (``omitempty``), so the
    preset's list survives; here a list the user gives replaces the preset's, an empty one included.
    """
    if not isinstance(base, dict) or not isinstance(override, dict):
        return copy.deepcopy(override)
    merged = copy.deepcopy(base)
    for key, value in override.items():
        merged[key] = _merge(base[key], value) if key in base else copy.deepcopy(value)
    return merged


def _route_preset(svc: LLMInferenceService, config: RouterConfig) -> dict[str, Any]:
    """``kserve-config-llm-router-route`` rendered for ``svc`` (Appendix F)."""
    ns, name = svc.namespace, svc.name
    pool_backend = {
        "group": POOL_V1_GROUP,
        "kind": "InferencePool",
        "name": svc.managed_pool_name(),
        "port": WORKLOAD_PORT,
        "weight": 1,
    }
    service_backend = {
        "kind": "Service",
        "name": naming.child_name(name, naming.WORKLOAD_SERVICE_SUFFIX),
        "port": WORKLOAD_PORT,
        "weight": 1,
    }
    header = {
        "type": "Exact",
        "name": config.model_based_routing_header_name,
        "value": naming.publisher_model(ns, svc.model_name()),
    }
    rules: list[dict[str, Any]] = []
    for endpoint, stem in POOL_ENDPOINTS:
        rules.append(_path_rule(f"{stem}-path", pool_backend, f"/{ns}/{name}/{endpoint}", f"/{endpoint}"))
        exact_paths = (f"/{endpoint}", f"/{endpoint}/")
        matches = [{"path": {"type": "Exact", "value": p}, "headers": [header]} for p in exact_paths]
        rules.append(_rule(f"{stem}-model-routing", pool_backend, matches))
    rules.append(_path_rule("v1-catch-all-path", service_backend, f"/{ns}/{name}", "/"))
    rules.append(_rule("v1-catch-all-model-routing", service_backend, [{"headers": [header]}]))
    parent = {
        "group": GATEWAY_GROUP,
        "kind": "Gateway",
        "name": config.ingress_gateway_name,
        "namespace": config.ingress_gateway_namespace,
    }
    return {"parentRefs": [parent], "rules": rules}


def _rule(rule_name: str, backend: dict[str, Any], matches: list[dict[str, Any]]) -> dict[str, Any]:
    return copy.deepcopy(
        {
            "name": rule_name,
            "backendRefs": [backend],
            "matches": matches,
            "timeouts": {"backendRequest": "0s", "request": "0s"},
        }
    )


def _path_rule(rule_name: str, backend: dict[str, Any], prefix: str, replacement: str) -> dict[str, Any]:
    rule = _rule(rule_name, backend, [{"path": {"type": "PathPrefix", "value": prefix}}])
    rewrite = {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": replacement}}
    rule["filters"] = [{"type": "URLRewrite", "urlRewrite": rewrite}]
    return rule


def _scheduler_pool_preset(svc: LLMInferenceService) -> dict[str, Any]:
    """The pool spec of ``kserve-config-llm-scheduler`` rendered for ``svc`` (Appendix F)."""
    return {
        "endpointPickerRef": {
            "kind": "Service",
            "name": naming.child_name(svc.name, naming.EPP_SERVICE_SUFFIX),
            "port": {"number": EPP_PORT},
            "failureMode": "FailOpen",
        },
        "selector": {"matchLabels": naming.workload_selector(svc.name)},
        "targetPorts": [{"number": WORKLOAD_PORT}],
    }


def _scheduler_template_preset() -> PodTemplate:
    ports = [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in SCHEDULER_PORTS]
    return PodTemplate.model_validate({"containers": [{"name": "main", "ports": ports}]})


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
        scheduler.template.service_account_name = naming.child_name(
            svc.name, naming.EPP_SERVICE_ACCOUNT_SUFFIX
        )


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
                ref.name = naming.child_name(svc.name, naming.WORKLOAD_SERVICE_SUFFIX)
            elif pool_ref is not None and scheduler.has_pool_ref():
                ref.name = pool_ref.name
