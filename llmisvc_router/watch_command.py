"""``llmisvc-router watch``: wiring only — settings, a Kubernetes client, a Temporal client, signals.

Bad settings or kubeconfig exit 2 and an unreachable Kubernetes API or Temporal exit 4
(``llmisvc_runtime.exit_codes``), each with one line on stderr; SIGINT or SIGTERM stop the watcher cleanly
(exit 0).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Mapping

from llmisvc_cache.cache import ClusterCache
from llmisvc_router.orchestrator_commands import probe_options
from llmisvc_runtime import exit_codes, logs, probes
from llmisvc_runtime.environment import environment_from
from llmisvc_runtime.process import connect_process
from llmisvc_runtime.settings import OrchestratorSettings
from llmisvc_runtime.signals import stop_event
from llmisvc_watcher.runner import run_watcher, stop_cache

DESCRIPTION = """\
Watch LLMInferenceServices and the objects that change their routing, and signal their workflows.

Every LLMInferenceService seen gets its workflow started (signal-with-start); changes to its managed
HTTPRoutes, InferencePools, Services and Deployments, to the Gateways and HTTPRoutes it uses, to the
Gateway API / Inference Extension / KServe CRDs and to the inferenceservice-config ConfigMap signal
the workflows they affect. Several watchers may run at once: signals are idempotent.

Environment: LLMISVC_ROUTER_TASK_QUEUE, LLMISVC_ROUTER_CLUSTER (this install's cluster name when
several share the Temporal namespace: the workflow ids carry it), LLMISVC_ROUTER_RESYNC_SECONDS,
LLMISVC_ROUTER_NAMESPACES (comma-separated; empty = all), LLMISVC_ROUTER_SERVICE_SELECTOR (a label
selector: only the services it selects get a workflow; one that leaves it is handed off),
KUBECONFIG, LLMISVC_ROUTER_KUBE_CONTEXT, LLMISVC_ROUTER_KUBE_CONNECTIONS (connections kept open to
the API), POD_NAMESPACE (the KServe namespace), LLMISVC_ROUTER_METRICS_PORT (Prometheus metrics),
LLMISVC_ROUTER_PROBE_PORT (/healthz and /readyz, default 8081; 0: off),
LLMISVC_ROUTER_READINESS_GRACE_SECONDS (how long a watch may fail or Temporal not answer before
/readyz answers 503, default 30), OpenTelemetry's OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_*,
OTEL_SERVICE_NAME, and Temporal's TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
TEMPORAL_TLS_*.

examples:
  llmisvc-router watch
  llmisvc-router watch --namespace llm --kubeconfig ~/.kube/config
  llmisvc-router watch --service-selector 'router=llmisvc'
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
        "--service-selector",
        metavar="SELECTOR",
        help="watch only services with these labels, e.g. 'router=llmisvc' "
        "(default: $LLMISVC_ROUTER_SERVICE_SELECTOR, else all)",
    )
    parser.add_argument(
        "--task-queue",
        metavar="QUEUE",
        help="task queue of the workflows (default: $LLMISVC_ROUTER_TASK_QUEUE, else llmisvc-router)",
    )
    probe_options(parser)
    parser.add_argument(
        "--cluster",
        metavar="NAME",
        help="this install's cluster name among those sharing the Temporal namespace, in the workflow ids "
        "(default: $LLMISVC_ROUTER_CLUSTER, else none)",
    )
    logs.add_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    logs.configure(getattr(args, "log_format", "text"), getattr(args, "log_level", "info"))
    return asyncio.run(_watch(settings_from(args)))


def settings_from(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> OrchestratorSettings:
    """The environment's settings, overridden by the flags given."""
    return OrchestratorSettings.from_env(env).with_flags(
        kubeconfig=args.kubeconfig,
        kube_context=args.context,
        task_queue=args.task_queue,
        cluster=getattr(args, "cluster", None),
        namespaces=[n for n in args.namespace if n.strip()],
        service_selector=getattr(args, "service_selector", None),
        probe_port=getattr(args, "probe_port", None),
    )


async def _watch(settings: OrchestratorSettings) -> int:
    api_client, temporal = await connect_process(settings, "watcher")
    try:
        grace = settings.readiness_grace_seconds
        async with probes.serving(settings.probe_port, grace, probes.WATCHER_PARTS) as health:
            health.watch_temporal(temporal)
            stop = stop_event()
            where = ", ".join(settings.namespaces) or "all namespaces"
            logging.getLogger(__name__).info(
                "watching LLMInferenceServices in %s; signalling task queue %s", where, settings.task_queue
            )
            cache = ClusterCache(api_client)
            health.watch_cache(cache)
            try:
                await run_watcher(cache, temporal, settings, environment_from(), stop)
            finally:
                await stop_cache(cache)
    finally:
        api_client.close()
    return exit_codes.OK
