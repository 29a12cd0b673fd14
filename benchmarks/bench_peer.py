"""KServe's own controller and this router side by side (issue 21): the same N services (default 100), each
on a fresh control plane with the same gateways, configs and simulated controllers
(:mod:`benchmarks.kube_stack`); for each, the seconds until every service is ``RouterReady``, the API
requests it made (counted by the proxy it talks through), its CPU seconds and peak RSS (for the router: its
worker and watcher processes together; the Temporal server is not counted). Then what the two wrote for
every service (the HTTPRoute, both InferencePools, the EPP Service, the router's conditions and URLs) is
compared field by field (:mod:`benchmarks.peer_mix`, ``llmisvc_devstack.fidelity``) and each difference
printed; ``--mix`` gives the services five shapes in turn and adds the samples of ``config/samples/``.

    .venv/bin/python -m benchmarks.bench_peer --services 20 --mix --json peer.json

Only the services both sides made RouterReady are compared. It exits 1 when a side did not make every
service RouterReady within ``--timeout``, or when the two wrote different objects.

KServe's controller is ``.tools/bin/kserve-llmisvc`` (``scripts/build-kserve``: v0.20.0, see
``devstack/kserve/go.mod``); it reconciles the workloads too, so its figures include that work. Not part
of the test suite; do not run it at large N on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from benchmarks import peer_mix, procs
from benchmarks.kube_stack import KSERVE_NAMESPACE, KubeStack
from benchmarks.scale_stack import NS, Fleet, cpu_seconds, free_port, kube_stack, peak_rss_mib, product
from llmisvc_core import naming
from llmisvc_core.merge import wellknown
from llmisvc_core.models.kube import CONFIGMAP, DEPLOYMENT, LLMISVC_CONFIG
from llmisvc_devstack import fidelity
from llmisvc_devstack.controlplane import write_kubeconfig
from llmisvc_devstack.kserve_peer import PEER_CONFIG_DATA, KServePeer
from worker.factory import DATA_CONVERTER
from workflows import search_attributes

TEMPORAL = Path(sys.executable).parent / "temporal"
TASK_QUEUE = "bench-peer"
SHOWN = 20  # differences printed (all of them go to --json)
Figures = dict[str, float]
Wire = dict[str, Any]
Snapshot = dict[str, Wire]
AVAILABLE = {
    "replicas": 1,
    "readyReplicas": 1,
    "availableReplicas": 1,
    "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}],
}


def configure(fleet: Fleet) -> None:
    """What both get: ``inferenceservice-config`` and the well-known presets in the KServe namespace, and
    the user's Gateways and HTTPRoutes that the mix's services refer to."""
    ingress = json.dumps(
        {
            "ingressGateway": "knative-serving/knative-ingress-gateway",
            "enableGatewayApi": True,
            "kserveIngressGateway": "kserve/kserve-ingress-gateway",
        }
    )
    data = {"ingress": ingress, **PEER_CONFIG_DATA}
    meta = {"name": "inferenceservice-config", "namespace": KSERVE_NAMESPACE}
    fleet.kube.create(CONFIGMAP, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
    for preset in wellknown.shipped_configs("kserve-", KSERVE_NAMESPACE):
        fleet.kube.create(LLMISVC_CONFIG, preset)
    for type_, body in peer_mix.user_objects(fleet.namespace):
        fleet.kube.create(type_, body)


def converge(fleet: Fleet, bodies: list[Wire], pids: list[int], timeout: float) -> tuple[Figures, Snapshot]:
    """Create the services, wait until all are RouterReady (or ``timeout``) and the controller is quiet;
    the figures, and what it wrote for each service."""
    names = [body["metadata"]["name"] for body in bodies]
    cpu_before = sum(cpu_seconds(pid) for pid in pids)
    started = time.monotonic()
    fleet.create_all(names, bodies)
    seen = fleet.watch_ready(names, started, timeout)
    settled = fleet.wait_settled(names, started, timeout) if len(seen) == len(names) else float("nan")
    reads, writes = fleet.product_requests()
    figures: Figures = {
        "seconds_all_ready": max(seen.values()) if len(seen) == len(names) else float("nan"),
        "seconds_settled": settled,
        "ready": float(len(seen)),
        "api_reads": float(reads),
        "api_writes": float(writes),
        "cpu_seconds": sum(cpu_seconds(pid) for pid in pids) - cpu_before,
        "peak_rss_mib": sum(peak_rss_mib(pid) for pid in pids),
    }
    return figures, peer_mix.snapshot(fleet.kube, fleet.namespace, sorted(seen))


def make_schedulers_available(fleet: Fleet, names: list[str], stop: threading.Event) -> None:
    """The kubelet's part for the scheduler Deployments KServe's controller creates: the simulated
    workload controller keeps Deployments of its own, which KServe's controller would rewrite forever."""
    while not stop.wait(0.5):
        for name in names:
            deployment = fleet.kube.get(DEPLOYMENT, fleet.namespace, naming.scheduler_name(name))
            if deployment is not None and not (deployment.get("status") or {}).get("availableReplicas"):
                fleet.kube.replace_status(DEPLOYMENT, {**deployment, "status": AVAILABLE})


def kserve_side(workdir: Path, bodies: list[Wire], timeout: float) -> tuple[Figures, Snapshot]:
    with kube_stack(workdir, controller_args=["--no-workload"]) as stack:
        fleet = Fleet(stack)
        try:
            fleet.seed()
            configure(fleet)
            kubeconfig = _proxied_admin(stack, workdir / "kserve.kubeconfig")
            stop = threading.Event()
            names = [body["metadata"]["name"] for body in bodies]
            kubelet = threading.Thread(
                target=make_schedulers_available, args=(fleet, names, stop), daemon=True
            )
            with KServePeer(kubeconfig, KSERVE_NAMESPACE, workdir / "peer", stack.plane.pki) as peer:
                assert peer.component is not None and peer.component.process is not None
                kubelet.start()
                try:
                    return converge(fleet, bodies, [peer.component.process.pid], timeout)
                finally:
                    stop.set()
                    kubelet.join()
        finally:
            fleet.close()


def _proxied_admin(stack: KubeStack, path: Path) -> Path:
    """The admin's credentials through the proxy, so the peer's requests are counted as the product's."""
    return write_kubeconfig(path, stack.url, stack.ca_file, stack.admin_token, user="admin")


async def router_side(workdir: Path, bodies: list[Wire], timeout: float) -> tuple[Figures, Snapshot]:
    port = free_port()
    env = await WorkflowEnvironment.start_local(
        port=port,
        dev_server_existing_path=str(TEMPORAL),
        data_converter=DATA_CONVERTER,
        search_attributes=search_attributes.ALL,
        dev_server_log_level="error",
    )
    try:
        with kube_stack(workdir) as stack, ExitStack() as processes:
            fleet = Fleet(stack)
            try:
                fleet.seed()
                configure(fleet)
                address = f"127.0.0.1:{port}"
                pids = [
                    processes.enter_context(
                        product(role, stack.kubeconfig(kind), address, TASK_QUEUE, workdir / f"{role}.log")
                    )
                    for role, kind in (("worker", "worker"), ("watch", "watcher"))
                ]
                return await asyncio.to_thread(converge, fleet, bodies, pids, timeout)
            finally:
                fleet.close()
    finally:
        await env.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--services", type=int, default=100, help="services created at once (default 100)")
    parser.add_argument("--json", type=Path, help="write the figures to this JSON file")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds each side may take to converge")
    parser.add_argument(
        "--mix",
        action="store_true",
        help=f"services of {len(peer_mix.SHAPES)} shapes in turn ({', '.join(peer_mix.SHAPES)}) and the "
        "samples of config/samples/ (default: every service managed, as in bench_scale.py)",
    )
    parser.add_argument(
        "--only",
        choices=("kserve", "router"),
        help="run one side alone (its figures, no comparison), e.g. to profile it",
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep the run's files (logs) here (default: a temporary directory)"
    )
    args = parser.parse_args(argv)
    procs.exit_on_sigterm()
    if args.services < 1:
        parser.error("--services must be at least 1")
    bodies = peer_mix.services([f"svc-{i:05d}" for i in range(args.services)], NS, args.mix)
    with ExitStack() as scope:
        tmp = args.workdir or Path(scope.enter_context(tempfile.TemporaryDirectory(prefix="bench-peer-")))
        print(f"logs under {tmp}", flush=True)
        sides: dict[str, tuple[Figures, Snapshot]] = {}
        if args.only in (None, "kserve"):
            print(f"KServe's controller: {len(bodies)} services", flush=True)
            sides["kserve"] = kserve_side(Path(tmp) / "kserve", bodies, args.timeout)
        if args.only in (None, "router"):
            print(f"llmisvc-router: {len(bodies)} services", flush=True)
            sides["llmisvc-router"] = asyncio.run(router_side(Path(tmp) / "router", bodies, args.timeout))
    if args.only:
        return report_one(args, bodies, *sides.popitem())
    kserve, kserve_wrote = sides["kserve"]
    router, router_wrote = sides["llmisvc-router"]
    # Only what both made RouterReady is compared: a service one side has not finished differs by design.
    both = kserve_wrote.keys() & router_wrote.keys()
    differences = fidelity.differences(
        {name: kserve_wrote[name] for name in both}, {name: router_wrote[name] for name in both}
    )
    print(f"{'figure':<20}{'kserve':>12}{'llmisvc-router':>16}")
    for key in kserve:
        print(f"{key:<20}{kserve[key]:>12.1f}{router[key]:>16.1f}")
    print(
        f"objects compared for the {len(both)} services both made RouterReady: {len(differences)} differences"
    )
    for line in differences[:SHOWN]:
        print(f"  {line[:300]}")
    if len(differences) > SHOWN:
        print(f"  ... and {len(differences) - SHOWN} more (every one in --json)")
    if args.json:
        report: dict[str, Any] = {
            "services": len(bodies),
            "mix": args.mix,
            "kserve": kserve,
            "llmisvc-router": router,
            "compared": sorted(both),
            "differences": differences,
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if kserve["ready"] == router["ready"] == len(bodies) and not differences else 1


def report_one(args: argparse.Namespace, bodies: list[Wire], side: str, run: tuple[Figures, Snapshot]) -> int:
    """``--only``: one side's figures, printed and written as the two sides' are, without a comparison."""
    figures = run[0]
    print(f"{'figure':<20}{side:>16}")
    for key, value in figures.items():
        print(f"{key:<20}{value:>16.1f}")
    if args.json:
        report = {"services": len(bodies), "mix": args.mix, side: figures}
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if figures["ready"] == len(bodies) else 1


if __name__ == "__main__":
    sys.exit(main())
