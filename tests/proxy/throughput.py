"""How many small GETs a second pass through the proxy, against the same upstream asked directly.

    python -m tests.proxy.throughput [--control-plane] [--seconds 5] [--connections 4]

Starts an upstream (the real control plane with ``--control-plane``, else the small TLS upstream of
these tests) and the proxy in front of it (its command line), each a process of its own, then loads
both with the same keep-alive clients, one process per connection, so the numbers are not the
clients' GIL.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from llmisvc_devstack.proxy import ControlClient

from .tls import Pki

PATH = "/api/v1/namespaces/ns/configmaps/a"


def _load(url: str, ca_file: str, path: str, seconds: float, headers: dict[str, str]) -> int:
    parts = urlsplit(url)
    context = ssl.create_default_context(cafile=ca_file)
    connection = http.client.HTTPSConnection(parts.hostname or "", parts.port, context=context, timeout=30)
    done, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"GET {path}: {response.status}")
        done += 1
    connection.close()
    return done


def requests_per_second(
    url: str,
    ca_file: str,
    path: str = PATH,
    connections: int = 4,
    seconds: float = 5.0,
    headers: dict[str, str] | None = None,
) -> float:
    """Sequential keep-alive GETs of ``path`` on ``connections`` connections at once, per second."""
    args = (url, ca_file, path, seconds, {"User-Agent": "throughput", **(headers or {})})
    with multiprocessing.get_context("spawn").Pool(connections) as pool:
        counts = pool.starmap(_load, [args] * connections)
    # Each worker counts over its own window of ``seconds`` (the windows overlap but for the workers'
    # start-up), so the pool's start-up is not charged to the server.
    return sum(counts) / seconds


def _serve_upstream(certfile: str, keyfile: str, ready: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from .upstream import FakeUpstream, configmap

    upstream = FakeUpstream(certfile, keyfile)
    upstream.objects[("ns", "a")] = configmap("a", key="value")
    ready.put(upstream.url)
    upstream.serve_forever()


@dataclass
class Target:
    """What to measure: an upstream, its CA, the path to GET and the headers that authorize it."""

    url: str
    ca_file: str
    cert: tuple[str, str]  # the proxy's serving certificate and key, signed by the same CA
    path: str = PATH
    headers: dict[str, str] = field(default_factory=dict)


@contextmanager
def fake_upstream() -> Iterator[Target]:
    with tempfile.TemporaryDirectory() as directory:
        pki = Pki(Path(directory))
        up, proxy_cert = pki.serving("upstream"), pki.serving("proxy")
        spawn = multiprocessing.get_context("spawn")
        ready = spawn.Queue()
        server = spawn.Process(target=_serve_upstream, args=(up.certfile, up.keyfile, ready), daemon=True)
        server.start()
        try:
            yield Target(ready.get(timeout=30), pki.ca_file, (proxy_cert.certfile, proxy_cert.keyfile))
        finally:
            server.terminate()


@contextmanager
def control_plane() -> Iterator[Target]:
    from kubernetes import client as k8s

    from llmisvc_devstack.controlplane import ControlPlane, pki

    with ControlPlane.start(crd_selection="none") as plane:
        with plane.admin("throughput-setup") as api:
            body = k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="a"), data={"key": "value"})
            k8s.CoreV1Api(api).create_namespaced_config_map("default", body)
        cert, key = pki.sign_serving(plane.pki, plane.workdir / "pki", "proxy")
        yield Target(
            plane.url,
            str(plane.ca_file),
            (str(cert), str(key)),
            "/api/v1/namespaces/default/configmaps/a",
            {"Authorization": f"Bearer {plane.admin_token}"},
        )


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def proxy_process(target: Target) -> Iterator[tuple[str, int]]:
    argv = [sys.executable, "-m", "llmisvc_devstack.proxy", "--upstream", target.url]
    argv += ["--ca-file", target.ca_file, "--cert", target.cert[0], "--key", target.cert[1]]
    proxy = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert proxy.stdout is not None
        yield proxy.stdout.readline().strip(), proxy.pid
    finally:
        proxy.terminate()
        proxy.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.proxy.throughput")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument(
        "--control-plane", action="store_true", help="measure against the real kube-apiserver"
    )
    parser.add_argument("--query", default="", help="added to the path, e.g. resourceVersion=0")
    args = parser.parse_args(argv)
    with control_plane() if args.control_plane else fake_upstream() as target:
        path = f"{target.path}?{args.query}" if args.query else target.path
        load = (target.ca_file, path, args.connections, args.seconds, target.headers)
        direct = requests_per_second(target.url, *load)
        with proxy_process(target) as (url, pid):
            before = cpu_seconds(pid)
            proxied = requests_per_second(url, *load)
            cpu = cpu_seconds(pid) - before
            counted = ControlClient(url, ca_file=target.ca_file).requests()["total"]
    print(f"GET {path} on {args.connections} keep-alive connections, {args.seconds:.0f} s each:")
    print(f"  direct   {direct:8.0f} requests/s")
    print(f"  proxied  {proxied:8.0f} requests/s; the proxy spent {1e6 * cpu / counted:.0f} us CPU a request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
