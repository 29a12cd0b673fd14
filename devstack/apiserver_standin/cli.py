"""``llmisvc-router apiserver``: run the stand-in in the foreground for other processes and kubectl.

Serves until SIGINT/SIGTERM (exit 0) and writes a kubeconfig pointing at itself. With
``--gateway-controller`` it also runs the simulated gateway controller, as a dev stack needs, and with
``--workload-controller`` the simulated KServe workload controller (``WorkloadsReady`` and the scheduler
Deployments), as the benchmarks need.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType
from typing import Any

from apiserver_standin.kubeconfig import write_kubeconfig
from apiserver_standin.server import StandinApiServer
from llmisvc_devstack.controlplane import crds

POOL_GROUP_CHOICES = {
    "v1": (crds.POOL_V1_GROUP,),
    "v1alpha2": (crds.POOL_V1ALPHA2_GROUP,),
    "both": (crds.POOL_V1_GROUP, crds.POOL_V1ALPHA2_GROUP),
}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "apiserver",
        help="serve a local Kubernetes API server stand-in (for the worker, tests and kubectl)",
        description="Serve a local Kubernetes API server stand-in over HTTP until SIGINT/SIGTERM.",
        epilog="examples:\n"
        "  llmisvc-router apiserver --port 6443 --kubeconfig /tmp/standin.kubeconfig\n"
        "  llmisvc-router apiserver --kubeconfig kc --crds all --gateway-controller\n"
        "  kubectl --kubeconfig /tmp/standin.kubeconfig get crds",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    parser.add_argument("--kubeconfig", required=True, help="write a kubeconfig for this server here")
    parser.add_argument(
        "--crds",
        default="all",
        help="the real (vendored) CRDs to install: all, none, or a comma list "
        "(llmisvc, llmisvcconfig, kserve, gateway-api, pools, pool-v1, ...)",
    )
    parser.add_argument("--watch-log-size", type=int, default=10_000, help="events kept for watch resumption")
    parser.add_argument(
        "--gateway-controller",
        action="store_true",
        help="also run the simulated gateway controller (marks Gateways Programmed, routes Accepted)",
    )
    parser.add_argument(
        "--workload-controller",
        action="store_true",
        help="also run the simulated KServe workload controller (WorkloadsReady, scheduler Deployments)",
    )
    parser.add_argument(
        "--pool-groups",
        choices=sorted(POOL_GROUP_CHOICES),
        default="both",
        help="InferencePool API groups the simulated gateway controller accepts",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        crds.select(args.crds)
    except ValueError as exc:
        print(f"apiserver: {exc}", file=sys.stderr)
        return 2
    try:
        server = StandinApiServer(args.host, args.port, crds=args.crds, watch_log_size=args.watch_log_size)
    except OSError as exc:
        print(f"apiserver: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous: dict[int, Any] = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    controllers: list[Any] = []
    try:
        # Written before serving (the port is bound already): whoever sees the server healthy can use it.
        path = write_kubeconfig(args.kubeconfig, server.url)
        server.start()
        if args.gateway_controller:
            from llmisvc_devstack.controllers.gateway import ControllerConfig, SimulatedGatewayController

            config = ControllerConfig(accepted_pool_groups=frozenset(POOL_GROUP_CHOICES[args.pool_groups]))
            controllers.append(
                SimulatedGatewayController(server.api_client("standin-gateway-controller"), config).start()
            )
        if args.workload_controller:
            from llmisvc_devstack.controllers.workload import SimulatedWorkloadController

            controllers.append(
                SimulatedWorkloadController(server.api_client("standin-workload-controller")).start()
            )
        print(f"apiserver stand-in serving at {server.url}; kubeconfig: {path}", flush=True)
        while not stop.wait(0.2):
            pass
    finally:
        for controller in controllers:
            controller.stop()
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("apiserver stand-in stopped", flush=True)
    return 0
