"""``llmisvc-router watch``: wiring only — settings, a Kubernetes client, a Temporal client, signals.

Bad settings or kubeconfig exit 2 and an unreachable Kubernetes API or Temporal exit 4
(``llmisvc_runtime.exit_codes``), each with one line on stderr; SIGINT or SIGTERM stop the watcher cleanly
(exit 0).
"""

from __future__ import annotations

import argparse
import asyncio
import logging

from llmisvc_cache.cache import ClusterCache
from llmisvc_router import options
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
    options.connection(parser)
    options.selection(parser, mode=False)
    options.probes(parser)
    logs.add_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    logs.configure(args.log_format, args.log_level)
    return asyncio.run(_watch(options.settings(args)))


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
