"""``llmisvc-router watch``: wiring only — settings, a Kubernetes client, a Temporal client, signals.

Bad settings or kubeconfig exit 2 and an unreachable Kubernetes API or Temporal exit 4
(``worker.exit_codes``), each with one line on stderr; SIGINT or SIGTERM stop the watcher cleanly (exit 0).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Mapping

from cluster_cache.cache import ClusterCache
from cluster_cache.watch_loop import ApiClient, KubernetesUnreachable, check_reachable
from router_core.world.config import Environment
from watcher.runner import run_watcher, stop_cache
from worker import connections, exit_codes, logs, telemetry
from worker.environment import environment_from
from worker.settings import OrchestratorSettings, SettingsError

PROG = "llmisvc-router watch"
EXIT_BAD_SETTINGS = exit_codes.USAGE
EXIT_UNREACHABLE = exit_codes.UNAVAILABLE

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

examples:
  llmisvc-router watch
  llmisvc-router watch --namespace llm --kubeconfig ~/.kube/config
  llmisvc-router watch --log-format json
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "watch",
        help="watch the cluster and signal the per-service workflows",
        description=DESCRIPTION,
        epilog=exit_codes.EPILOG,
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
    parser.add_argument(
        "--task-queue",
        metavar="QUEUE",
        help="task queue of the workflows (default: $LLMISVC_ROUTER_TASK_QUEUE, else llmisvc-router)",
    )
    logs.add_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> int:
    logs.configure(getattr(args, "log_format", "text"), getattr(args, "log_level", "info"))
    try:
        settings = settings_from(args, env)
        api_client = connections.load_kube(
            settings.kubeconfig, settings.kube_context, settings.kube_connections, env
        )
    except SettingsError as err:
        return _fail(str(err), EXIT_BAD_SETTINGS)
    except connections.ConnectionProblem as err:
        return _fail(str(err), err.code)
    try:
        return asyncio.run(_watch(api_client, settings, environment_from(env), env))
    finally:
        api_client.close()


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
        return _fail(f"{err} (check the kubeconfig's server and the network)", EXIT_UNREACHABLE)
    try:
        runtime = telemetry.start(settings)
    except telemetry.TelemetryError as err:
        return _fail(str(err), EXIT_UNREACHABLE)
    try:
        temporal = await connections.connect(env, runtime)
    except connections.ConnectionProblem as err:
        return _fail(str(err), err.code)
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
