"""The worker process: connect to Temporal and Kubernetes, run the worker until told to stop, shut down
gracefully (polling stops at once, running activities get ``LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS`` to
finish, then are cancelled; ``/readyz`` says not ready from then on). Its activities read the cluster from the
process's cache (:class:`~llmisvc_cache.cache.ClusterCache`) and write through the API."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from temporalio.client import Client

from activities.cluster_view import ClusterView
from activities.router_activities import RouterActivities
from llmisvc_core.world.config import Environment
from llmisvc_kube.api import ClusterApi
from llmisvc_runtime.probes import Probes
from llmisvc_runtime.settings import OrchestratorSettings
from worker import versioning
from worker.factory import build_worker

log = logging.getLogger(__name__)


async def run_worker(
    client: Client,
    api: ClusterApi,
    view: ClusterView,
    settings: OrchestratorSettings,
    env: Environment,
    stop: asyncio.Event,
    probes: Probes | None = None,
) -> None:
    """Run the worker until ``stop`` is set; with ``probes``, its running is a readiness check."""
    activities = RouterActivities(api, view, env, settings.management())
    sizing = settings.sizing()
    with ThreadPoolExecutor(max_workers=sizing.executor_threads, thread_name_prefix="activity") as executor:
        worker = build_worker(
            client,
            settings.task_queue,
            activities,
            executor,
            sizing,
            versioning.deployment_config(settings.deployment_name, settings.build_id),
            timedelta(seconds=settings.shutdown_grace_seconds),
        )
        runner = asyncio.create_task(worker.run())
        if probes is not None:
            probes.watch_worker(worker)
        log.info(
            "worker polling task queue %s (%s mode)%s",
            settings.task_queue,
            settings.mode,
            _version_note(settings),
        )
        stopping = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({runner, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if runner in done:
            stopping.cancel()
            runner.result()  # a worker that died on its own: let its error surface
            return
        log.info(
            "stopping the worker: polling stopped, running activities have %ss to finish",
            settings.shutdown_grace_seconds,
        )
        await worker.shutdown()
        await runner


def _version_note(settings: OrchestratorSettings) -> str:
    if settings.deployment_name is None:
        return " (unversioned)"
    return (
        f" as build {settings.build_id} of Worker Deployment {settings.deployment_name}; it gets tasks once "
        "that version is current (temporal worker deployment set-current-version, or the controller)"
    )
