"""The watcher assembled: watch loops -> one asyncio queue -> trigger rules -> coalesced signals.

Start-up follows the informer rule "sync before you act": the loops of the objects that affect routing
list first, so the world the rules consult is complete and every later change arrives as an event;
only then are the LLMInferenceServices listed, each one found getting signal-with-start. A change made
between a service's first pass reading the world and the watch starting is therefore either in the
listed state (which that pass reads) or an event (which signals the service).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

from temporalio.client import Client
from temporalio.common import MetricMeter

from router_core import kube
from router_core.config import CONFIGMAP_NAME, Environment
from watcher import mapping
from watcher.coalescing import SignalCoalescer
from watcher.kube_watch import ApiClient, ResourceWatch
from watcher.model import DELETED, Tuning, WatchEvent, WatchTarget
from watcher.service_gauge import ServiceGauge
from watcher.signaller import Signaller, TemporalSignaller
from worker import telemetry
from worker.settings import OrchestratorSettings
from worker.starting import WorkflowStarter

log = logging.getLogger(__name__)

MANAGED_SELECTOR = f"{mapping.PART_OF_LABEL}={mapping.PART_OF_VALUE}"
STOP_GRACE = 3.0  # seconds to wait for the watch threads, then for pending signals, at shutdown


async def run_watcher(
    api_client: ApiClient,
    temporal_client: Client,
    settings: OrchestratorSettings,
    env: Environment,
    stop: asyncio.Event,
    tuning: Tuning | None = None,
) -> None:
    """Watch the cluster and signal the workflows on ``settings.task_queue`` until ``stop`` is set; the
    services gauge goes to the metrics endpoint of the client's runtime."""
    starter = await WorkflowStarter.create(temporal_client, settings.task_queue, settings.resync_seconds)
    signaller = TemporalSignaller(starter)
    meter = telemetry.metric_meter(temporal_client)
    await watch_and_signal(api_client, signaller, settings.namespaces, env, stop, tuning or Tuning(), meter)


def watch_targets(namespaces: Sequence[str], env: Environment) -> tuple[list[WatchTarget], list[WatchTarget]]:
    """(the objects that affect routing, the LLMInferenceServices). Namespaced kinds follow the
    namespace list, except Gateways: a service may use one in any namespace."""
    spaces = list(dict.fromkeys(namespaces)) or [""]
    dependents = [
        WatchTarget(kube.CRD),
        WatchTarget(kube.CONFIGMAP, env.kserve_namespace, field_selector=f"metadata.name={CONFIGMAP_NAME}"),
        WatchTarget(kube.GATEWAY),
    ]
    for namespace in spaces:
        dependents += [
            WatchTarget(kube.HTTPROUTE, namespace),
            WatchTarget(kube.LLMISVC_CONFIG, namespace),
            WatchTarget(kube.POOL_V1, namespace),
            WatchTarget(kube.POOL_V1ALPHA2, namespace),
            WatchTarget(kube.SERVICE, namespace, label_selector=MANAGED_SELECTOR),
            WatchTarget(kube.DEPLOYMENT, namespace, label_selector=MANAGED_SELECTOR),
        ]
    if "" not in spaces and env.kserve_namespace not in spaces:
        # The system namespace's configs serve every namespace.
        dependents.append(WatchTarget(kube.LLMISVC_CONFIG, env.kserve_namespace))
    return dependents, [WatchTarget(kube.LLMISVC, namespace) for namespace in spaces]


async def watch_and_signal(
    api_client: ApiClient,
    signaller: Signaller,
    namespaces: Sequence[str],
    env: Environment,
    stop: asyncio.Event,
    tuning: Tuning,
    meter: MetricMeter = MetricMeter.noop,
) -> None:
    """The watcher with any :class:`Signaller` (tests record the signals instead of sending them)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[WatchEvent] = asyncio.Queue()

    def emit(event: WatchEvent) -> None:  # called from the watch threads
        with contextlib.suppress(RuntimeError):  # the loop is closed: we are shutting down
            loop.call_soon_threadsafe(queue.put_nowait, event)

    coalescer = SignalCoalescer(signaller, tuning)
    world = mapping.WatchedWorld.empty(env)
    dependents, services = watch_targets(namespaces, env)
    watches = [ResourceWatch(api_client, target, emit, tuning).start() for target in dependents]
    consumer = asyncio.create_task(_consume(queue, world, coalescer, watches, ServiceGauge(meter)))
    try:
        await _wait_synced(watches, tuning.sync_timeout, stop)
        if not stop.is_set():
            watches += [ResourceWatch(api_client, target, emit, tuning).start() for target in services]
            await stop.wait()
    finally:
        await _stop_watches(watches)
        consumer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
        await coalescer.drain(STOP_GRACE)


async def _consume(
    queue: asyncio.Queue[WatchEvent],
    world: mapping.WatchedWorld,
    coalescer: SignalCoalescer,
    watches: list[ResourceWatch],
    gauge: ServiceGauge,
) -> None:
    while True:
        event = await queue.get()
        try:
            handle_event(event, world, coalescer, watches)
            gauge.observe(event, world)
        except Exception:  # one odd object must not stop the watcher
            log.exception("could not handle %s", event.describe())


def handle_event(
    event: WatchEvent, world: mapping.WatchedWorld, coalescer: SignalCoalescer, watches: list[ResourceWatch]
) -> None:
    affected = mapping.affected_services(event, world)
    world.apply(event)
    start = (event.type != DELETED) if event.resource == kube.LLMISVC else None
    for item in affected:
        coalescer.add(item, start)
    if event.resource == kube.CRD and event.type != DELETED and not event.initial:
        for watch in watches:
            watch.wake()  # a kind a loop is polling for may be served now: list it without waiting


async def _wait_synced(watches: list[ResourceWatch], timeout: float, stop: asyncio.Event) -> None:
    deadline = time.monotonic() + timeout
    while not stop.is_set() and time.monotonic() < deadline:
        if all(watch.synced.is_set() for watch in watches):
            return
        await asyncio.sleep(0.05)
    late = [str(w.target) for w in watches if not w.synced.is_set()]
    if late and not stop.is_set():
        log.warning("starting without a first list of %s (still retrying)", ", ".join(late))


async def _stop_watches(watches: list[ResourceWatch]) -> None:
    for watch in watches:
        watch.stop()
    deadline = time.monotonic() + STOP_GRACE

    def join_all() -> None:
        for watch in watches:
            watch.join(max(0.0, deadline - time.monotonic()))

    await asyncio.to_thread(join_all)
