"""The command line's options, each defined once, in groups: a command takes the groups it needs whole, so
the same flag has the same name, help and default on every command, and :func:`settings` reads them all
into the settings model (``llmisvc_runtime.settings``) the same way. Each flag's variable and default are
in docs/operations.md (Configuration)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from llmisvc_runtime.settings import OrchestratorSettings

#: The settings field each option sets (its ``dest`` on the left); an option not given leaves the
#: environment's value.
FIELD_OF_OPTION = {
    "kubeconfig": "kubeconfig",
    "context": "kube_context",
    "task_queue": "task_queue",
    "cluster": "cluster",
    "namespace": "namespaces",
    "service_selector": "service_selector",
    "mode": "mode",
    "deployment_name": "deployment_name",
    "build_id": "build_id",
    "shutdown_grace_seconds": "shutdown_grace_seconds",
    "probe_port": "probe_port",
    "activity_threads": "activity_threads",
    "max_cached_workflows": "max_cached_workflows",
    "workflow_task_pollers": "workflow_task_pollers",
    "activity_task_pollers": "activity_task_pollers",
    "kube_connections": "kube_connections",
}


def settings(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> OrchestratorSettings:
    """The environment's settings (``env``, else the process's), overridden by the options given."""
    flags = {field: getattr(args, option, None) for option, field in FIELD_OF_OPTION.items()}
    flags["namespaces"] = [n for n in flags["namespaces"] or () if n.strip()]
    return OrchestratorSettings.from_env(env).with_flags(**flags)


def connection(parser: argparse.ArgumentParser) -> None:
    """Where the cluster and the workflows are: ``--kubeconfig``, ``--context``, ``--task-queue`` and
    ``--cluster``, for every command that reaches both."""
    parser.add_argument(
        "--kubeconfig", metavar="FILE", help="kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)"
    )
    parser.add_argument(
        "--context",
        metavar="NAME",
        help="kubeconfig context (default: $LLMISVC_ROUTER_KUBE_CONTEXT, else the kubeconfig's current one)",
    )
    parser.add_argument(
        "--task-queue",
        metavar="QUEUE",
        help="Temporal task queue of the workers (default: $LLMISVC_ROUTER_TASK_QUEUE, else llmisvc-router)",
    )
    cluster(parser)


def cluster(parser: argparse._ActionsContainer, help_text: str | None = None) -> None:
    """``--cluster``; ``help_text`` says what it selects on a command where it is a choice (``uninstall``)."""
    parser.add_argument(
        "--cluster",
        metavar="NAME",
        help=help_text
        or "this install's cluster name among those sharing the Temporal namespace, in the workflow ids "
        "(default: $LLMISVC_ROUTER_CLUSTER, else none; docs/operations.md, Many clusters)",
    )


def selection(parser: argparse.ArgumentParser, *, mode: bool) -> None:
    """Which services the process manages (``--namespace``, ``--service-selector``) and, for one that
    writes (``mode``), whether it does (``--mode``)."""
    group = parser.add_argument_group("managed services and mode (docs/operations.md)")
    group.add_argument(
        "--namespace",
        action="append",
        metavar="NS",
        help="manage only services in NS (repeat; default: $LLMISVC_ROUTER_NAMESPACES, else all)",
    )
    group.add_argument(
        "--service-selector",
        metavar="SELECTOR",
        help="manage only services with these labels, e.g. 'router=llmisvc' "
        "(default: $LLMISVC_ROUTER_SERVICE_SELECTOR, else all)",
    )
    if mode:
        group.add_argument(
            "--mode",
            metavar="MODE",
            help="write (carry out the passes) or shadow (write nothing, report the drift) "
            "(default: $LLMISVC_ROUTER_MODE, else write)",
        )


def sizing(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("worker sizing (docs/operations.md)")
    for flag, variable, text, default in _SIZING_FLAGS:
        group.add_argument(flag, type=int, metavar="N", help=f"{text} (default: ${variable}, else {default})")


_SIZING_FLAGS = (
    ("--activity-threads", "LLMISVC_ROUTER_ACTIVITY_THREADS", "activities run at once", "16"),
    ("--max-cached-workflows", "LLMISVC_ROUTER_MAX_CACHED_WORKFLOWS", "workflows kept in memory", "1000"),
    ("--workflow-task-pollers", "LLMISVC_ROUTER_WORKFLOW_TASK_POLLERS", "workflow task polls at once", "5"),
    ("--activity-task-pollers", "LLMISVC_ROUTER_ACTIVITY_TASK_POLLERS", "activity task polls at once", "5"),
    (
        "--kube-connections",
        "LLMISVC_ROUTER_KUBE_CONNECTIONS",
        "Kubernetes API connections kept open, at least the activity threads",
        "the threads + 12",
    ),
)


def versioning(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Worker Versioning (docs/operations.md, Versioned rollouts)")
    group.add_argument(
        "--deployment-name",
        metavar="NAME",
        help="register as a version of this Temporal Worker Deployment (default: "
        "$LLMISVC_ROUTER_DEPLOYMENT_NAME, else $TEMPORAL_DEPLOYMENT_NAME, else unversioned)",
    )
    group.add_argument(
        "--build-id",
        metavar="ID",
        help="this worker's build ID (default: $LLMISVC_ROUTER_BUILD_ID, else $TEMPORAL_WORKER_BUILD_ID, "
        "else the package version and $LLMISVC_ROUTER_IMAGE_TAG)",
    )


def shutdown(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("stopping (docs/operations.md, Upgrades and workflow versioning)")
    group.add_argument(
        "--shutdown-grace-seconds",
        type=int,
        metavar="S",
        help="on SIGTERM, stop polling and give running activities S seconds to finish before cancelling "
        "them; keep it below the pod's terminationGracePeriodSeconds "
        "(default: $LLMISVC_ROUTER_SHUTDOWN_GRACE_SECONDS, else 30)",
    )


def probes(parser: argparse.ArgumentParser) -> None:
    """``--probe-port``, for every long-running process (``worker``, ``run``, ``watch``)."""
    group = parser.add_argument_group("probes (docs/operations.md, Health and readiness)")
    group.add_argument(
        "--probe-port",
        type=int,
        metavar="PORT",
        help="serve /healthz and /readyz on PORT, 0 for none "
        "(default: $LLMISVC_ROUTER_PROBE_PORT, else 8081)",
    )
