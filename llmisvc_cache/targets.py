"""Which collections the cache lists and watches: exactly what a pass reads, and no more.

Kinds the router owns are narrowed by label (``app.kubernetes.io/part-of=llminferenceservice``), the
config by name, and Services to the router's own plus those labelled for a Gateway (where URL discovery
looks); a read outside these selectors goes to the API and is remembered briefly
(:mod:`activities.cached_reader`). Namespaced kinds follow the deployment's namespace list, except
Gateways and gateway Services: a service may use a Gateway in any namespace.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmisvc_cache.cache import ClusterCache
from llmisvc_cache.model import Tuning, WatchTarget
from llmisvc_core import naming
from llmisvc_core.models import kube
from llmisvc_core.world.config import CONFIGMAP_NAME, Environment
from llmisvc_kube.client import ApiClient


def dependent_targets(namespaces: Sequence[str], env: Environment) -> list[WatchTarget]:
    """The objects that affect routing: listed before the services, so a first pass sees them."""
    targets = [
        WatchTarget(kube.CRD),
        WatchTarget(kube.CONFIGMAP, env.kserve_namespace, field_selector=f"metadata.name={CONFIGMAP_NAME}"),
        WatchTarget(kube.GATEWAY),
        WatchTarget(kube.GATEWAYCLASS),
        WatchTarget(kube.SERVICE, label_selector=naming.GATEWAY_NAME_LABEL),
    ]
    for namespace in _spaces(namespaces):
        targets += [
            WatchTarget(kube.HTTPROUTE, namespace),
            WatchTarget(kube.LLMISVC_CONFIG, namespace),
            WatchTarget(kube.POOL_V1, namespace),
            WatchTarget(kube.POOL_V1ALPHA2, namespace),
            WatchTarget(kube.SERVICE, namespace, label_selector=naming.PART_OF_SELECTOR),
            WatchTarget(kube.DEPLOYMENT, namespace, label_selector=naming.PART_OF_SELECTOR),
        ]
    if "" not in _spaces(namespaces) and env.kserve_namespace not in namespaces:
        # The system namespace's LLMInferenceServiceConfigs serve every namespace.
        targets.append(WatchTarget(kube.LLMISVC_CONFIG, env.kserve_namespace))
    return targets


def service_targets(namespaces: Sequence[str], selector: str = "") -> list[WatchTarget]:
    """The LLMInferenceServices themselves: those this deployment manages (``selector``: a label selector,
    the API server's to apply, so a service whose labels leave it arrives as deleted)."""
    return [
        WatchTarget(kube.LLMISVC, namespace, label_selector=selector or None)
        for namespace in _spaces(namespaces)
    ]


def _spaces(namespaces: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(namespaces)) or [""]


def start_worker_cache(
    api_client: ApiClient,
    namespaces: Sequence[str],
    env: Environment,
    tuning: Tuning | None = None,
    selector: str = "",
) -> ClusterCache:
    """A cache with every collection a pass reads, its loops started (a worker without a watcher)."""
    cache = ClusterCache(api_client, tuning)
    cache.add([*dependent_targets(namespaces, env), *service_targets(namespaces, selector)])
    return cache
