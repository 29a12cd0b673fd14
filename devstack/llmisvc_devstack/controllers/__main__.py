"""``python -m llmisvc_devstack.controllers``: the simulated gateway and workload controllers as a process
of their own, against any API server a kubeconfig names (the control plane of the tests, or a real
cluster that has no gateway implementation, a kind cluster say). Runs until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from types import FrameType
from typing import Any

from kubernetes import config as k8s_config

from llmisvc_devstack.controllers.gateway import ControllerConfig, SimulatedGatewayController
from llmisvc_devstack.controllers.workload import SimulatedWorkloadController
from llmisvc_devstack.controlplane.crds import POOL_V1_GROUP, POOL_V1ALPHA2_GROUP

POOL_GROUPS = {
    "both": frozenset({POOL_V1_GROUP, POOL_V1ALPHA2_GROUP}),
    "v1": frozenset({POOL_V1_GROUP}),
    "v1alpha2": frozenset({POOL_V1ALPHA2_GROUP}),
}
GATEWAY_AGENT = "simulated-gateway-controller"
WORKLOAD_AGENT = "simulated-workload-controller"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m llmisvc_devstack.controllers",
        description="The simulated Gateway API controller (Gateway, HTTPRoute and InferencePool status) and "
        "KServe workload controller (WorkloadsReady, the scheduler Deployment), against a cluster.",
    )
    parser.add_argument("--kubeconfig", help="the cluster (default: $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--no-gateway", action="store_true", help="do not run the gateway controller")
    parser.add_argument("--no-workload", action="store_true", help="do not run the workload controller")
    parser.add_argument(
        "--pool-groups",
        choices=sorted(POOL_GROUPS),
        default="both",
        help="which InferencePool API groups the simulated gateway accepts as backends (default: both)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        gateway_client = k8s_config.new_client_from_config(config_file=args.kubeconfig)  # type: ignore[no-untyped-call]
        workload_client = k8s_config.new_client_from_config(config_file=args.kubeconfig)  # type: ignore[no-untyped-call]
    except (k8s_config.ConfigException, OSError) as err:
        print(
            f"controllers: cannot load the kubeconfig {args.kubeconfig or '(default)'}: {err}",
            file=sys.stderr,
        )
        return 2
    gateway_client.user_agent, workload_client.user_agent = GATEWAY_AGENT, WORKLOAD_AGENT
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    running: list[Any] = []
    try:
        if not args.no_gateway:
            config = ControllerConfig(accepted_pool_groups=POOL_GROUPS[args.pool_groups])
            running.append(SimulatedGatewayController(gateway_client, config).start())
        if not args.no_workload:
            running.append(SimulatedWorkloadController(workload_client).start())
        print(f"controllers running: {len(running)}", flush=True)
        stop.wait()
    finally:
        for controller in running:
            controller.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
