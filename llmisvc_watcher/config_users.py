"""Which services an LLMInferenceServiceConfig event affects. Pure; called by :mod:`llmisvc_watcher.mapping`.

A service uses a config when its ``status.appliedConfigs`` names it (what the last successful merge
applied), when its ``spec.baseRefs`` names it (a missing baseRef must be retried when it appears), or,
before any successful merge, when the name is one of the well-known configs. A config in the system
namespace can serve every namespace; a namespace-local one only its own, where it may newly shadow the
system namespace's copy — so the services of that namespace that use the name are signalled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from llmisvc_core.merge.config_merge import SCHEDULER, TEMPLATE
from llmisvc_core.world.config import Environment
from llmisvc_watcher.model import WatchEvent, Wire

Key = tuple[str, str]
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


def config_users(event: WatchEvent, services: Mapping[Key, Wire], env: Environment) -> list[Key]:
    """The services that use the config of ``event``, in the namespaces it can serve."""
    system = event.namespace == env.kserve_namespace
    return [
        key
        for key, svc in services.items()
        if (system or key[0] == event.namespace) and uses_config(svc, event.name, env)
    ]


def uses_config(svc: Wire, name: str, env: Environment) -> bool:
    """Read loosely: a status or spec of the wrong shape counts as naming nothing."""
    status, spec = svc.get("status"), svc.get("spec")
    applied = _list((status if isinstance(status, dict) else {}).get("appliedConfigs"))
    base_refs = _list((spec if isinstance(spec, dict) else {}).get("baseRefs"))
    if name in _names(applied) or name in _names(base_refs):
        return True
    return not applied and name in {env.config_prefix + s for s in WELL_KNOWN_SUFFIXES}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _names(items: Iterable[object]) -> set[str]:
    return {str(i.get("name")) for i in items if isinstance(i, dict)}
