"""The long-running processes wired together: the worker, the watcher, or both, over one cluster cache.

``llmisvc-router worker`` lists and watches what its passes read; ``llmisvc-router run`` (and the dev
stack) lets the watcher start the same cache's loops, in the order its start-up rule needs, so the
process watches the cluster once and a pass never reads older state than the signal that started it.
"""

from __future__ import annotations

import asyncio

from temporalio.client import Client

from llmisvc_cache.cache import ClusterCache
from llmisvc_cache.model import Tuning
from llmisvc_cache.targets import start_worker_cache
from llmisvc_core.world.config import Environment
from llmisvc_kube.api import ClusterApi
from llmisvc_kube.client import ApiClient
from llmisvc_runtime.probes import Probes
from llmisvc_runtime.settings import OrchestratorSettings
from llmisvc_watcher.runner import run_watcher, stop_cache
from worker.process import run_worker


async def serve(
    temporal: Client,
    api_client: ApiClient,
    api: ClusterApi,
    settings: OrchestratorSettings,
    env: Environment,
    stop: asyncio.Event,
    *,
    watch: bool,
    tuning: Tuning | None = None,
    probes: Probes | None = None,
) -> None:
    """Run the worker (and the watcher when ``watch``) until ``stop`` is set; with ``probes``, the cache's
    loops and the worker are readiness checks."""
    if watch:
        cache = ClusterCache(api_client, tuning)  # the watcher starts its loops, in its order
        tasks = [run_watcher(cache, temporal, settings, env, stop, tuning)]
    else:
        cache = start_worker_cache(api_client, settings.namespaces, env, tuning, settings.service_selector)
        tasks = []
    if probes is not None:
        probes.watch_cache(cache)
    tasks.append(run_worker(temporal, api, cache, settings, env, stop, probes))
    try:
        await asyncio.gather(*tasks)
    finally:
        await stop_cache(cache)
