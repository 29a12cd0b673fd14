"""KServe's configuration merge: LLMInferenceServiceConfig presets and ``spec.baseRefs`` (config_merge.go).

Before the router sees a service, KServe builds its spec from layers, each strategically merged over
the previous one (:mod:`llmisvc_core.gocompat.strategic_merge`):

1. the well-known configs that apply to the spec's shape (:func:`well_known_names`), chosen on the
   service's spec with its ``baseRefs`` merged in, so a baseRef can switch a component on;
2. the configs of ``spec.baseRefs``, in order;
3. the service's own spec.

Every config is looked up in the service's namespace first, then in the system namespace
(``POD_NAMESPACE``), through the pass's :class:`~llmisvc_core.world.snapshot.Reader`. A well-known config
found in neither falls back to the copy of KServe's shipped config in :mod:`llmisvc_core.merge.wellknown`
(a product decision; a baseRef never falls back). Template variables are rendered
(:mod:`llmisvc_core.gocompat.templating`) for the fields the router reads, KServe's merge-time adjustments
follow (:mod:`llmisvc_core.merge.presets`) and the result is validated
(:mod:`llmisvc_core.merge.spec_validation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from llmisvc_core import naming
from llmisvc_core.errors import InvalidInputError
from llmisvc_core.gocompat import strategic_merge, templating
from llmisvc_core.merge import wellknown
from llmisvc_core.models import scheduler_plugins
from llmisvc_core.models.kube import LLMISVC_CONFIG
from llmisvc_core.models.llmisvc import LLMInferenceService
from llmisvc_core.world.config import Environment, RouterConfig
from llmisvc_core.world.snapshot import Reader

Wire = dict[str, Any]

TEMPLATE = "config-llm-template"
DECODE_TEMPLATE = "config-llm-decode-template"
PREFILL_TEMPLATE = "config-llm-prefill-template"
WORKER_PIPELINE_PARALLEL = "config-llm-worker-pipeline-parallel"
DECODE_WORKER_PIPELINE_PARALLEL = "config-llm-decode-worker-pipeline-parallel"
PREFILL_WORKER_PIPELINE_PARALLEL = "config-llm-prefill-worker-pipeline-parallel"
WORKER_DATA_PARALLEL = "config-llm-worker-data-parallel"
DECODE_WORKER_DATA_PARALLEL = "config-llm-decode-worker-data-parallel"
PREFILL_WORKER_DATA_PARALLEL = "config-llm-prefill-worker-data-parallel"
SCHEDULER = "config-llm-scheduler"
ROUTER_ROUTE = "config-llm-router-route"
SCHEDULER_LATENCY_PREDICTOR = "config-llm-scheduler-latency-predictor"
#: The standalone tokenizer (KServe #5712, ``configTokenizerName``).
TOKENIZER = "config-llm-tokenizer"
TRACING = "config-llm-tracing"
#: The fields of the merged spec the router reads: only these are rendered (the workload's pod
#: templates use workload-only template functions and are never read by the router).
RENDERED_FIELDS = ("model", "annotations", "labels", "router", "baseRefs")


class Source(StrEnum):
    """How a config was selected, as ``status.appliedConfigs[].source`` says it."""

    PRESET = "Preset"
    USER_REF = "UserRef"


class Origin(StrEnum):
    """Where a config was found."""

    NAMESPACE = "service namespace"
    SYSTEM = "system namespace"
    BUILT_IN = "built-in"


@dataclass(frozen=True)
class AppliedConfig:
    name: str
    namespace: str
    source: Source
    origin: Origin

    def to_wire(self) -> Wire:
        return {"name": self.name, "namespace": self.namespace, "source": self.source.value}


class CombineError(InvalidInputError):
    """The layers cannot be combined (reason ``CombineBaseError``)."""


class ConfigNotFoundError(CombineError):
    """A config exists in none of the namespaces searched (reason ``ConfigNotFound``)."""

    def __init__(self, name: str, namespaces: list[str]) -> None:
        super().__init__(
            f'LLMInferenceServiceConfig "{name}" not found in namespaces [{" ".join(namespaces)}]'
        )
        self.name = name


@dataclass
class Combined:
    """The merged spec and the configs it came from, in the order they were applied."""

    spec: Wire
    applied: list[AppliedConfig] = field(default_factory=list)

    def built_ins(self) -> list[str]:
        return [a.name for a in self.applied if a.origin is Origin.BUILT_IN]


@dataclass(frozen=True)
class _Found:
    spec: Wire
    namespace: str
    origin: Origin


def combine(svc: LLMInferenceService, reader: Reader, env: Environment, config: RouterConfig) -> Combined:
    """The service's spec merged with its well-known configs and baseRefs, rendered, not yet adjusted."""
    # What the user wrote, not the model's defaults: a default would override a config's value.
    own = svc.spec.model_dump(by_alias=True, exclude_unset=True, mode="json")
    base_refs = [str(ref.get("name") or "") for ref in own.get("baseRefs") or [] if isinstance(ref, dict)]
    resolved = own
    for name in base_refs:
        resolved = _merge(resolved, _find(reader, env, svc.namespace, name, builtin=False).spec)
    if (resolved.get("model") or {}).get("name") is not None:
        # A baseRef may name the model; templates then see that name (Go copies it into the service).
        own.setdefault("model", {})["name"] = resolved["model"]["name"]
    presets = well_known_names(resolved, env.config_prefix)
    layers: list[tuple[str, _Found]] = []
    applied: list[AppliedConfig] = []
    for index, name in enumerate([*presets, *base_refs]):
        found = _find(reader, env, svc.namespace, name, builtin=index < len(presets))
        source = Source.PRESET if index < len(presets) else Source.USER_REF
        layers.append((f"LLMInferenceServiceConfig {found.namespace}/{name}", found))
        applied.append(AppliedConfig(name, found.namespace, source, found.origin))
    service_source = f"LLMInferenceService {svc.namespace}/{svc.name}"
    raw = _merge_all([found.spec for _, found in layers] + [own])
    data = _template_data(svc, own, raw, env, config)
    rendered = [_render(found.spec, data, source) for source, found in layers]
    return Combined(_merge_all([*rendered, _render(own, data, service_source)]), applied)


def well_known_names(spec: Wire, prefix: str) -> list[str]:
    """The well-known configs KServe applies to a spec of this shape, in KServe's order."""
    names: list[str] = []
    router = spec.get("router")
    router = router if isinstance(router, dict) else None
    scheduler = router.get("scheduler") if router is not None else None
    if isinstance(scheduler, dict) and not _has_pool_ref(scheduler):
        names.append(SCHEDULER)
    # With a pool ref too, as in Go: the preset is merged though no tokenizer is then looked for.
    if scheduler_plugins.is_tokenizer_enabled(scheduler):
        names.append(TOKENIZER)
    if scheduler_plugins.has_plugin(scheduler, scheduler_plugins.PREDICTED_LATENCY_PRODUCER):
        names.append(SCHEDULER_LATENCY_PREDICTOR)
    route = router.get("route") if router is not None else None
    if isinstance(route, dict) and not ((route.get("http") or {}).get("refs")):
        names.append(ROUTER_ROUTE)
    if spec.get("tracing") is not None:
        names.append(TRACING)
    prefill = spec.get("prefill")
    if isinstance(prefill, dict):
        names += _workload_preset(
            prefill, PREFILL_TEMPLATE, PREFILL_WORKER_DATA_PARALLEL, PREFILL_WORKER_PIPELINE_PARALLEL
        )
        names += _workload_preset(
            spec, DECODE_TEMPLATE, DECODE_WORKER_DATA_PARALLEL, DECODE_WORKER_PIPELINE_PARALLEL
        )
    else:
        names += _workload_preset(spec, TEMPLATE, WORKER_DATA_PARALLEL, WORKER_PIPELINE_PARALLEL)
    return [prefix + name for name in names]


def _workload_preset(workload: Wire, single: str, data: str, pipeline: str) -> list[str]:
    if workload.get("worker") is None:
        return [single]
    parallelism = workload.get("parallelism") or {}
    if parallelism.get("data") is not None or parallelism.get("dataLocal") is not None:
        return [data]
    if parallelism.get("pipeline") is not None:
        return [pipeline]
    return []


def _has_pool_ref(scheduler: Wire) -> bool:
    return bool(((scheduler.get("pool") or {}).get("ref") or {}).get("name"))


def _find(reader: Reader, env: Environment, namespace: str, name: str, *, builtin: bool) -> _Found:
    """The config ``name`` from the service's namespace, else the system namespace, else (well-known
    configs only) KServe's shipped copy."""
    for ns, origin in ((namespace, Origin.NAMESPACE), (env.kserve_namespace, Origin.SYSTEM)):
        raw = reader.get(LLMISVC_CONFIG, ns, name)
        if raw is not None:
            spec = raw.get("spec") or {}
            if not isinstance(spec, dict):
                raise CombineError(f"LLMInferenceServiceConfig {ns}/{name}: spec is not an object")
            return _Found(spec, ns, origin)
    shipped = wellknown.shipped_spec(name, env.config_prefix) if builtin else None
    if shipped is not None:
        return _Found(shipped, env.kserve_namespace, Origin.BUILT_IN)
    raise ConfigNotFoundError(name, [namespace, env.kserve_namespace])


def _merge(base: Wire, override: Wire) -> Wire:
    try:
        return strategic_merge.merge(base, override)
    except strategic_merge.MergeError as err:
        raise CombineError(f"failed to merge specs: {err}") from err


def _merge_all(specs: list[Wire]) -> Wire:
    try:
        return strategic_merge.merge_specs(*specs)
    except strategic_merge.MergeError as err:
        raise CombineError(f"failed to merge specs: {err}") from err


def _template_data(
    svc: LLMInferenceService, own: Wire, merged: Wire, env: Environment, config: RouterConfig
) -> templating.TemplateData:
    spec = dict(own)
    model = dict(spec.get("model") or {})
    if not model.get("name"):
        model["name"] = svc.name  # KServe's defaulting webhook names the model after the service
    spec["model"] = model
    pool_ref = (
        (((merged.get("router") or {}).get("scheduler") or {}).get("pool") or {}).get("ref") or {}
    ).get("name")
    pool = pool_ref or naming.pool_name(svc.name)
    global_config = {
        "SystemNamespace": env.kserve_namespace,
        "IngressGatewayName": config.ingress_gateway_name,
        "IngressGatewayNamespace": config.ingress_gateway_namespace,
        "EnableTLS": config.enable_tls,
        "ModelBasedRoutingHeaderName": config.model_based_routing_header_name,
        "InferencePoolNamespacedName": f"{svc.namespace}/{pool}",
    }
    return templating.TemplateData(svc.name, svc.namespace, spec, global_config)


def _render(spec: Wire, data: templating.TemplateData, source: str) -> Wire:
    try:
        return {
            k: templating.render_tree(v, data, source) if k in RENDERED_FIELDS else v for k, v in spec.items()
        }
    except templating.TemplateError as err:
        raise CombineError(f"failed to merge config: {err}") from err
