"""Which LLMInferenceServiceConfigs a service uses. Pure; the rule is :mod:`llmisvc_core.triggers.rules`'.

A service uses a config when its ``status.appliedConfigs`` names it (what the last successful merge
applied), when its ``spec.baseRefs`` names it (a missing baseRef must be retried when it appears), or,
before any successful merge, when the name is one of the well-known configs. A config in the system
namespace can serve every namespace; a namespace-local one only its own, where it may newly shadow the
system namespace's copy — so the services of that namespace that use the name are signalled.
"""

from __future__ import annotations

from collections.abc import Iterable

from llmisvc_core.merge.config_merge import SCHEDULER, TEMPLATE
from llmisvc_core.triggers.change import Wire
from llmisvc_core.world.config import Environment

#: Every well-known config suffix (config_merge's selection can name any of them).
WELL_KNOWN_SUFFIXES = (
    SCHEDULER,
    TEMPLATE,
    "config-llm-router-route",
    "config-llm-scheduler-latency-predictor",
    "config-llm-tokenizer",
    "config-llm-tracing",
    "config-llm-decode-template",
    "config-llm-prefill-template",
    "config-llm-worker-data-parallel",
    "config-llm-decode-worker-data-parallel",
    "config-llm-prefill-worker-data-parallel",
    "config-llm-worker-pipeline-parallel",
    "config-llm-decode-worker-pipeline-parallel",
    "config-llm-prefill-worker-pipeline-parallel",
)


def named_configs(svc: Wire, env: Environment) -> set[str]:
    """The names of the configs ``svc`` uses, read loosely: a status or spec of the wrong shape counts
    as naming nothing."""
    status, spec = svc.get("status"), svc.get("spec")
    applied = _list((status if isinstance(status, dict) else {}).get("appliedConfigs"))
    base_refs = _list((spec if isinstance(spec, dict) else {}).get("baseRefs"))
    names = _names(applied) | _names(base_refs)
    return names if applied else names | {env.config_prefix + s for s in WELL_KNOWN_SUFFIXES}


def serves(config_namespace: str, service_namespace: str, env: Environment) -> bool:
    """Whether a config of ``config_namespace`` can be one a service of ``service_namespace`` uses."""
    return config_namespace in (env.kserve_namespace, service_namespace)


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _names(items: Iterable[object]) -> set[str]:
    return {str(i.get("name")) for i in items if isinstance(i, dict)}
