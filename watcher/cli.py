"""``llmisvc-router watch``: wiring only — settings, a Kubernetes client, a Temporal client, signals.

Bad settings exit 2 and an unreachable Kubernetes API or Temporal exit 1, each with one line on stderr;
SIGINT or SIGTERM stop the watcher cleanly (exit 0).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Mapping

from activities.kube_api import load_api_client
from cluster_cache.cache import ClusterCache
from cluster_cache.watch_loop import ApiClient, KubernetesUnreachable, check_reachable
from router_core.config import Environment
from watcher.runner import run_watcher, stop_cache
from worker import telemetry
from worker.environment import environment_from
from worker.settings import OrchestratorSettings, SettingsError, connect_temporal

PROG = "llmisvc-router watch"
EXIT_BAD_SETTINGS = 2
EXIT_UNREACHABLE = 1

DESCRIPTION = """\
Watch LLMInferenceServices and the objects that change their routing, and signal their workflows.

Every LLMInferenceService seen gets its workflow started (signal-with-start); changes to its managed
HTTPRoutes, InferencePools, Services and Deployments, to the Gateways and HTTPRoutes it uses, to the
Gateway API / Inference Extension / KServe CRDs and to the inferenceservice-config ConfigMap signal
the workflows they affect. Several watchers may run at once: signals are idempotent.

Environment: LLMISVC_ROUTER_TASK_QUEUE, LLMISVC_ROUTER_RESYNC_SECONDS, LLMISVC_ROUTER_NAMESPACES
(comma-separated; empty = all), KUBECONFIG, LLMISVC_ROUTER_KUBE_CONTEXT, LLMISVC_ROUTER_KUBE_CONNECTIONS
(connections kept open to the API), POD_NAMESPACE (the KServe
namespace), LLMISVC_ROUTER_METRICS_PORT (Prometheus metrics), OpenTelemetry's OTEL_TRACES_EXPORTER,
OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME, and Temporal's TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
TEMPORAL_API_KEY, TEMPORAL_TLS_*.
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "watch",
        help="watch the cluster and signal the per-service workflows",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig (default: $KUBECONFIG, in-cluster)")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context")
    parser.add_argument(
        "--namespace",
        action="append",
        default=[],
        metavar="NS",
        help="watch LLMInferenceServices in this namespace (repeatable; default: all namespaces)",
    )
    parser.add_argument("--task-queue", metavar="QUEUE", help="task queue of the workflows")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # urllib3 logs each connection retry; the watch loops report failures once, in their own words.
    logging.getLogger("urllib3").setLevel(logging.ERROR)
    try:
        settings = settings_from(args, env)
        api_client = load_api_client(settings.kubeconfig, settings.kube_context, settings.kube_connections)
    except SettingsError as err:
        return _fail(str(err), EXIT_BAD_SETTINGS)
    except Exception as err:  # the kubernetes config loader raises several kinds; all mean "fix the config"
        return _fail(f"cannot load the Kubernetes configuration: {err}", EXIT_BAD_SETTINGS)
    try:
        return asyncio.run(_watch(api_client, settings, environment_from(env), env))
    finally:
        api_client.close()  # type: ignore[no-untyped-call]


def settings_from(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> OrchestratorSettings:
    """The environment's settings, overridden by the flags given."""
    return OrchestratorSettings.from_env(env).with_flags(
        kubeconfig=args.kubeconfig,
        kube_context=args.context,
        task_queue=args.task_queue,
        namespaces=[n for n in args.namespace if n.strip()],
    )


async def _watch(
    api_client: ApiClient,
    settings: OrchestratorSettings,
    environment: Environment,
    env: Mapping[str, str] | None,
) -> int:
    try:
        await asyncio.to_thread(check_reachable, api_client)
    except KubernetesUnreachable as err:
        return _fail(str(err), EXIT_UNREACHABLE)
    try:
        runtime = telemetry.start(settings)
    except telemetry.TelemetryError as err:
        return _fail(str(err), EXIT_UNREACHABLE)
    try:
        temporal = await connect_temporal(env, runtime)
    except Exception as err:  # the SDK reports connection problems as RuntimeError and friends
        return _fail(f"cannot connect to Temporal: {_first_line(err)}", EXIT_UNREACHABLE)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    where = ", ".join(settings.namespaces) or "all namespaces"
    logging.getLogger(__name__).info(
        "watching LLMInferenceServices in %s; signalling task queue %s", where, settings.task_queue
    )
    cache = ClusterCache(api_client)
    try:
        await run_watcher(cache, temporal, settings, environment, stop)
    finally:
        await stop_cache(cache)
    return 0


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return code


def _first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]
