"""The watcher assembled: the cluster cache's watch loops -> one asyncio queue -> trigger rules ->
coalesced signals.

The rules (:mod:`llmisvc_core.triggers`) read the cluster through the cache, after the change, through
the cache's index of what each service uses (added here, before the loops start); the watcher keeps no
copy of the world of its own.

Start-up follows the informer rule "sync before you act": the loops of the objects that affect routing
list first, so the world the rules consult is complete and every later change arrives as an event;
only then are the LLMInferenceServices listed, each one found getting signal-with-start. A change made
between a service's first pass reading the world and the watch starting is therefore either in the
listed state (which that pass reads) or an event (which signals the service).

The watcher starts the loops of the :class:`~llmisvc_cache.cache.ClusterCache` it is given; in
``llmisvc-router run`` the worker's activities read the same cache, so the process lists and watches
the cluster once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Protocol

from temporalio.client import Client
from temporalio.common import MetricMeter

from llmisvc_cache.cache import ClusterCache
from llmisvc_cache.model import SeenVersion
from llmisvc_cache.targets import dependent_targets, service_targets
from llmisvc_core.models import kube
from llmisvc_core.triggers import rules
from llmisvc_core.world.config import Environment
from llmisvc_runtime import telemetry
from llmisvc_watcher.coalescing import SignalCoalescer
from llmisvc_watcher.model import DELETED, Affected, Tuning, WatchEvent
from llmisvc_watcher.service_gauge import ServiceGauge
from llmisvc_watcher.signaller import Signaller, TemporalSignaller
from workflows import ending
from workflows.starting import WorkflowStarter

log = logging.getLogger(__name__)

STOP_GRACE = 3.0  # seconds to wait for the watch threads, then for pending signals, at shutdown


class WatcherSettings(Protocol):
    """What the watcher reads of its settings (``llmisvc_runtime.settings.OrchestratorSettings``)."""

    @property
    def task_queue(self) -> str: ...

    @property
    def cluster(self) -> str: ...

    @property
    def resync_seconds(self) -> int: ...

    @property
    def namespaces(self) -> Sequence[str]: ...

    @property
    def service_selector(self) -> str: ...

    @property
    def mode(self) -> str: ...


async def run_watcher(
    cache: ClusterCache,
    temporal_client: Client,
    settings: WatcherSettings,
    env: Environment,
    stop: asyncio.Event,
    tuning: Tuning | None = None,
) -> None:
    """Watch the cluster and signal the workflows on ``settings.task_queue`` until ``stop`` is set; the
    services gauge goes to the metrics endpoint of the client's runtime."""
    starter = await WorkflowStarter.create(
        temporal_client, settings.task_queue, settings.resync_seconds, settings.cluster
    )
    if settings.cluster:
        await _move_to_cluster_ids(temporal_client, settings.task_queue, settings.cluster)
    signaller = TemporalSignaller(starter)
    meter = telemetry.metric_meter(temporal_client)
    await watch_and_signal(
        cache,
        signaller,
        settings.namespaces,
        env,
        stop,
        tuning or Tuning(),
        meter,
        settings.service_selector,
        shadow=settings.mode == "shadow",
    )


async def _move_to_cluster_ids(client: Client, task_queue: str, cluster: str) -> None:
    """An install newly given a cluster name: its workflows under the unnamed ids end here, before the
    services are listed and each gets its workflow under the new id, so no service has two writers
    (``workflows.ending.end_unnamed_workflows``)."""
    ended = await ending.end_unnamed_workflows(client, task_queue, cluster)
    for running in ended:
        log.info("ended %s: %s", running.id, ending.migration_reason(running.service, cluster))
    if ended:
        log.warning("moved %d workflows to the ids of cluster %s", len(ended), cluster)


async def watch_and_signal(
    cache: ClusterCache,
    signaller: Signaller,
    namespaces: Sequence[str],
    env: Environment,
    stop: asyncio.Event,
    tuning: Tuning,
    meter: MetricMeter = MetricMeter.noop,
    selector: str = "",
    shadow: bool = False,
) -> None:
    """The watcher with any :class:`Signaller` (tests record the signals instead of sending them). It
    starts ``cache``'s loops; whoever made the cache stops it. Only the services ``selector`` selects are
    watched: one that leaves the selection arrives as deleted and its workflow is signalled, and its next
    pass hands it off (``activities.management``). ``shadow``: the deployment's mode is shadow, so a
    service's status changes are other writers' and signal it (``llmisvc_core.triggers.rules``)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[WatchEvent] = asyncio.Queue()

    def emit(event: WatchEvent) -> None:  # called from the watch threads
        with contextlib.suppress(RuntimeError):  # the loop is closed: we are shutting down
            loop.call_soon_threadsafe(queue.put_nowait, event)

    coalescer = SignalCoalescer(signaller, tuning)
    add_indexes(cache, env)
    cache.subscribe(emit)
    triggers = Triggers(cache, env, shadow)
    consumer = asyncio.create_task(_consume(queue, triggers, coalescer, ServiceGauge(meter)))
    try:
        cache.add(dependent_targets(namespaces, env))
        await _wait_synced(cache, tuning.sync_timeout, stop)
        if not stop.is_set():
            cache.add(service_targets(namespaces, selector))
            await stop.wait()
    finally:
        consumer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
        await coalescer.drain(STOP_GRACE)


def add_indexes(cache: ClusterCache, env: Environment) -> None:
    """The indexes the trigger rules look up, on ``cache`` (read through what its watch delivered)."""
    for type_, name, fn in rules.indexes(cache.watched(), env, log.warning):
        cache.add_index(type_, name, fn)


class Triggers:
    """The trigger rules over the cache: the services an event affects, with the cache's index of what
    they use brought up to date when the event changed what it was read through."""

    def __init__(self, cache: ClusterCache, env: Environment, shadow: bool = False) -> None:
        self.cache = cache
        self.env = env
        self.shadow = shadow

    def affected(self, event: WatchEvent) -> list[Affected]:
        affected = rules.affected_services(event, self.cache.watched(), self.env, self.shadow, log.warning)
        self.cache.reindex(kube.LLMISVC, rules.to_reindex(event, affected))
        return affected


async def _consume(
    queue: asyncio.Queue[WatchEvent],
    triggers: Triggers,
    coalescer: SignalCoalescer,
    gauge: ServiceGauge,
) -> None:
    while True:
        event = await queue.get()
        try:
            handle_event(event, triggers, coalescer)
            gauge.observe(event)
        except Exception:  # one odd object must not stop the watcher
            log.exception("could not handle %s", event.describe())


def handle_event(event: WatchEvent, triggers: Triggers, coalescer: SignalCoalescer) -> None:
    affected = triggers.affected(event)
    start = (event.type != DELETED) if event.resource == kube.LLMISVC else None
    seen = None if event.resource == kube.CRD else SeenVersion.of(event)
    for item in affected:
        coalescer.add(item, start, seen)


async def _wait_synced(cache: ClusterCache, timeout: float, stop: asyncio.Event) -> None:
    deadline = time.monotonic() + timeout
    while not stop.is_set() and time.monotonic() < deadline:
        if cache.is_synced():
            return
        await asyncio.sleep(0.05)
    late = cache.unsynced()
    if late and not stop.is_set():
        log.warning("starting without a first list of %s (still retrying)", ", ".join(late))


async def stop_cache(cache: ClusterCache) -> None:
    """Stop the loops and wait for their threads a little (they are daemons: none can hold up exit)."""
    cache.stop()
    await asyncio.to_thread(cache.join, STOP_GRACE)
