"""The router-relevant rules of KServe's LLMInferenceService validator, applied to the merged spec.

KServe validates the spec that the configuration merge produced with its admission validator
(``LLMInferenceServiceValidator``) and refuses to reconcile a spec it rejects, reporting
``PresetsCombined=False(CombineBaseError, …)``. The rules kept here are those about the router and the
model names it routes: HTTPRoute refs and spec, refs with a managed gateway, parentRefs against gateway
refs, the traffic-splitting fields (``route.group``/``weight``, KServe #5727), the scheduler's replicas and
config, and the LoRA adapters. The workload-only rules (parallelism,
scaling, DRA, confidential computing, immutability) are left to KServe's workload controller.

The error reads like the API server's ``Invalid`` error: ``LLMInferenceService.serving.kserve.io "<name>"
is invalid: <field errors>``; a structured value is shown as compact JSON.
"""

from __future__ import annotations

import json
from typing import Any

from llmisvc_core.errors import InvalidInputError

Wire = dict[str, Any]


class SpecInvalidError(InvalidInputError):
    """The merged spec is refused."""


def validate(name: str, spec: Wire) -> None:
    """Raise :class:`SpecInvalidError` listing every broken rule, in the validator's order."""
    errors = [
        *_router_errors(spec),
        *_traffic_errors(spec),
        *_scheduler_errors(spec),
        *_lora_errors(name, spec),
    ]
    if not errors:
        return
    listed = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    raise SpecInvalidError(f'LLMInferenceService.serving.kserve.io "{name}" is invalid: {listed}')


def _invalid(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {_render(value)}: {detail}"


def _required(path: str, detail: str) -> str:
    return f"{path}: Required value: {detail}"


def _render(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _router_errors(spec: Wire) -> list[str]:
    router = spec.get("router") or {}
    http = (router.get("route") or {}).get("http") if isinstance(router.get("route"), dict) else None
    if not isinstance(http, dict):
        return []
    base = "spec.router.route.http"
    gateway = router.get("gateway")
    gateway_refs = (gateway or {}).get("refs") or [] if isinstance(gateway, dict) else []
    route_refs, route_spec = http.get("refs") or [], http.get("spec")
    errors = []
    if route_refs and route_spec is not None:
        errors.append(
            _invalid(
                base,
                http,
                f"unsupported configuration: cannot use both custom HTTPRoute refs ('{base}.refs') and an "
                f"inline route spec ('{base}.spec'); choose one",
            )
        )
    if route_refs and isinstance(gateway, dict) and not gateway_refs:
        errors.append(
            _invalid(
                f"{base}.refs",
                route_refs,
                f"unsupported configuration: custom HTTP routes ('{base}.refs') cannot be used with a "
                f"managed gateway ('spec.router.gateway'); either remove '{base}.refs' or set "
                "'spec.router.gateway.refs'",
            )
        )
    parents = (route_spec or {}).get("parentRefs") or [] if isinstance(route_spec, dict) else []
    if parents and gateway_refs and not _same_gateways(parents, gateway_refs):
        errors.append(
            _invalid(
                f"{base}.spec",
                route_spec,
                f"unsupported configuration: managed HTTP route spec ('{base}.spec') has parentRefs that "
                f"conflict with custom gateway refs ('spec.router.gateway.refs'); either remove "
                f"'spec.router.gateway.refs' or '{base}.spec.parentRefs'",
            )
        )
    return errors


def _same_gateways(parents: list[Wire], refs: list[Wire]) -> bool:
    def keys(items: list[Wire]) -> list[tuple[str, str, str]]:
        return sorted(
            (str(i.get("namespace") or ""), str(i.get("name") or ""), str(i.get("sectionName") or ""))
            for i in items
        )

    return len(parents) == len(refs) and keys(parents) == keys(refs)


TRAFFIC_NEEDS_GATEWAY_API = (
    "traffic splitting requires Gateway API routing; the controller manages HTTPRoutes, not Ingress resources"
)
TRAFFIC_NEEDS_MANAGED_ROUTE = (
    "traffic splitting cannot be used with custom HTTPRoute refs; controller-managed routes "
    "(route.http.spec or route.http: {}) are required"
)


def _traffic_errors(spec: Wire) -> list[str]:
    """KServe's ``validateTrafficFields`` (#5727): group and weight go together, only with Gateway API
    routing (no ``router.ingress``) and only with a controller-managed route (no ``http.refs``)."""
    router = spec.get("router")
    route = router.get("route") if isinstance(router, dict) else None
    if not isinstance(route, dict):
        return []
    base = "spec.router.route"
    group, weight = route.get("group"), route.get("weight")
    if group is None and weight is None:
        return []
    if router.get("ingress") is not None:  # type: ignore[union-attr]
        return [_invalid(f"{base}.group", group if group is not None else "", TRAFFIC_NEEDS_GATEWAY_API)]
    errors = []
    if group is None:
        errors.append(_required(f"{base}.group", "weight requires group"))
    if weight is None:
        errors.append(_required(f"{base}.weight", "group requires weight"))
    if errors:
        return errors
    http = route.get("http")
    if isinstance(http, dict) and http.get("refs"):
        errors.append(_invalid(f"{base}.group", group, TRAFFIC_NEEDS_MANAGED_ROUTE))
    return errors


def _scheduler_errors(spec: Wire) -> list[str]:
    scheduler = (spec.get("router") or {}).get("scheduler")
    if not isinstance(scheduler, dict):
        return []
    base = "spec.router.scheduler"
    errors = []
    replicas = scheduler.get("replicas")
    if isinstance(replicas, int) and replicas <= 0:
        errors.append(_invalid(f"{base}.replicas", replicas, "scheduler replicas must be greater than zero"))
    config = scheduler.get("config")
    if not isinstance(config, dict):
        return errors
    inline, ref = config.get("inline"), config.get("ref")
    if inline is None and ref is None:
        errors.append(_invalid(f"{base}.config", config, "either inline or ref is required"))
    if inline is not None and ref is not None:
        errors.append(
            _invalid(f"{base}.config", config, "both inline and ref are set, either specify inline or ref")
        )
    if inline is not None and len(json.dumps(inline, separators=(",", ":"))) < 3:
        errors.append(_invalid(f"{base}.config.inline", inline, "inline configuration is invalid"))
    if isinstance(ref, dict) and not ref.get("name"):
        errors.append(_invalid(f"{base}.config.ref.name", ref, "name is empty"))
    return errors


def _lora_errors(name: str, spec: Wire) -> list[str]:
    model = spec.get("model") or {}
    lora = model.get("lora")
    if not isinstance(lora, dict):
        return []
    base = "spec.model.lora"
    errors = []
    for limit in ("maxRank", "maxAdapters", "maxCpuAdapters"):
        value = lora.get(limit)
        if isinstance(value, int) and value < 1:
            errors.append(_invalid(f"{base}.{limit}", value, f"{limit} must be at least 1"))
    base_model = model.get("name") if model.get("name") is not None else name
    seen: dict[str, int] = {}
    for index, adapter in enumerate(lora.get("adapters") or []):
        path = f"{base}.adapters[{index}].name"
        adapter_name = adapter.get("name") if isinstance(adapter, dict) else None
        if not adapter_name:
            errors.append(_required(path, "adapter name is required"))
            continue
        if adapter_name in (".", ".."):
            errors.append(
                _invalid(
                    path, adapter_name, 'adapter name must not include "." or ".." (path traversal risk)'
                )
            )
            continue
        if adapter_name in seen:
            errors.append(
                _invalid(path, adapter_name, f"duplicate name (same as adapters[{seen[adapter_name]}])")
            )
        else:
            seen[adapter_name] = index
        if adapter_name == base_model:
            errors.append(
                _invalid(path, adapter_name, f'adapter name must differ from base model name "{base_model}"')
            )
    return errors
