"""The ``--help`` of the orchestrator commands: what each does, examples, and the exit statuses.

Plain text, as a terminal shows it (no reST markup)."""

from __future__ import annotations

import argparse

from llmisvc_runtime import exit_codes

ENVIRONMENT = """\
environment:
  Temporal: TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
  TEMPORAL_TLS*, TEMPORAL_PROFILE. Kubernetes: KUBECONFIG, LLMISVC_ROUTER_KUBE_CONTEXT. Traces:
  OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME. Payload encryption:
  LLMISVC_ROUTER_CODEC_KEYS_FILE.
"""

WORKER_HELP = "run the Temporal worker: the per-service workflows and their activities"
WORKER = """\
Run the Temporal worker: it executes the LLMInferenceService workflows and the activities that read
and write the cluster. Start the watcher (llmisvc-router watch) next to it, or use `run` for both.
It refuses to start when the Kubernetes API or Temporal cannot be reached.

Also: LLMISVC_ROUTER_TASK_QUEUE, LLMISVC_ROUTER_ACTIVITY_THREADS, LLMISVC_ROUTER_METRICS_PORT
(Prometheus metrics on :PORT/metrics), LLMISVC_ROUTER_PROBE_PORT (/healthz and /readyz, default 8081;
0: off) and LLMISVC_ROUTER_READINESS_GRACE_SECONDS (how long a watch may fail or Temporal not answer
before /readyz answers 503, default 30), POD_NAMESPACE (the KServe namespace), LLMISVC_ROUTER_MODE
(shadow: plan, write nothing, report the drift; see `llmisvc-router drift`), LLMISVC_ROUTER_NAMESPACES
and LLMISVC_ROUTER_SERVICE_SELECTOR (the services it manages; a pass of one outside them hands it off).
The mode and the selection are read by every pass: restart the worker to change them, not the workflows.

examples:
  llmisvc-router worker
  llmisvc-router worker --kubeconfig ~/.kube/config --log-format json
  TEMPORAL_ADDRESS=temporal.example:7233 LLMISVC_ROUTER_METRICS_PORT=9464 llmisvc-router worker
  llmisvc-router worker --mode shadow --service-selector 'router=llmisvc'
  llmisvc-router worker --deployment-name llmisvc-router --build-id 0.2.0
      a versioned worker: it gets tasks once `temporal worker deployment set-current-version` makes
      that build current (docs/operations.md, Versioned rollouts)
"""

RUN_HELP = "run the worker and the watcher in one process (small installs)"
RUN = """\
Run the worker and the watcher in one process: for a small install, or to try the router against a
cluster. It refuses to start when the Kubernetes API or Temporal cannot be reached. It serves
/healthz and /readyz as the worker does (LLMISVC_ROUTER_PROBE_PORT, default 8081; 0: off).

examples:
  llmisvc-router run
  llmisvc-router run --namespace llm --namespace team-a
  llmisvc-router run --mode shadow --service-selector 'router=llmisvc'
  llmisvc-router run --log-format json --log-level debug
"""

_DRIVE_EXAMPLES = """
The service must exist in Kubernetes (it is read first; nothing is started for one that does not).

examples:
  llmisvc-router {name} llm/facebook-opt-125m
  llmisvc-router {name} llm/facebook-opt-125m --kubeconfig .dev/kubeconfig
"""

RECONCILE = (
    "run a pass now and print its outcome",
    "Run a pass for the service now (starting its workflow if none runs) and print the pass's summary:\n"
    "outcome, conditions, URL, writes. The pass plans on the service as this command read it, or on a\n"
    "newer version: a change applied just before is not missed. Exits 1 when the pass did not reconcile.\n"
    + _DRIVE_EXAMPLES.format(name="reconcile"),
)
STOP = (
    "stop the service (sets serving.kserve.io/stop through its workflow)",
    "Stop the service: its workflow sets the serving.kserve.io/stop annotation and removes the routes\n"
    "and pools it manages on its next pass.\n" + _DRIVE_EXAMPLES.format(name="stop"),
)
RESUME = (
    "resume a stopped service",
    "Resume a stopped service: its workflow removes serving.kserve.io/stop on its next pass.\n"
    + _DRIVE_EXAMPLES.format(name="resume"),
)
STATUS = (
    "show the workflow's view of the service",
    "Show the workflow's view of the service as YAML (-o json for scripts): passes, the last outcome,\n"
    "conditions and URL, the last error; every key always present (docs/operations.md, Status output).\n"
    "(kubectl describe llminferenceservice shows the status and Events.)\n"
    + _DRIVE_EXAMPLES.format(name="status")
    + "  llmisvc-router status llm/facebook-opt-125m -o json\n",
)

UNINSTALL_HELP = (
    "end the router's workflows in the Temporal namespace (Kubernetes objects are left as they are)"
)
UNINSTALL = """\
End (terminate) the router's running workflows in the Temporal namespace: those of this install's
cluster (--cluster, default $LLMISVC_ROUTER_CLUSTER; with neither, the workflows of an install
without a cluster name), or of every cluster with --all-clusters. Prints one line per workflow and
a count. Idempotent: a second run finds nothing to end.

It never touches Kubernetes: HTTPRoutes, InferencePools, schedulers and the services' status stay as
the last passes left them. Stop the watcher and the worker first (scale their Deployments to zero, or
delete them): a running watcher starts the workflows again.

Without --yes nothing is ended: the workflows are listed as --dry-run lists them, and the command
exits 2.

examples:
  llmisvc-router uninstall --dry-run
  llmisvc-router uninstall --cluster eu-1 --yes
  llmisvc-router uninstall --all-clusters --yes
"""


def add_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help_text: str, description: str
) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` shows its description and examples as written, then the
    environment and the exit statuses."""
    return commands.add_parser(
        name,
        help=help_text,
        description=description,
        epilog=f"{ENVIRONMENT}\n{exit_codes.EPILOG}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
