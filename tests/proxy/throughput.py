"""How many small GETs a second pass through the proxy, against the same upstream asked directly.

    python -m tests.proxy.throughput [--seconds 5] [--connections 4]

Starts the small TLS upstream of these tests and the proxy (its command line) as processes of their
own, then loads each with the same keep-alive clients, one process per connection, so the numbers
are not the clients' GIL. :func:`requests_per_second` also serves measurements against a real
kube-apiserver.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

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
        started = time.monotonic()
        counts = pool.starmap(_load, [args] * connections)
        elapsed = time.monotonic() - started
    return sum(counts) / max(elapsed, seconds)


def _serve_upstream(certfile: str, keyfile: str, ready: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from .upstream import FakeUpstream, configmap

    upstream = FakeUpstream(certfile, keyfile)
    upstream.objects[("ns", "a")] = configmap("a", key="value")
    ready.put(upstream.url)
    upstream.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.proxy.throughput")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=4)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        pki = Pki(Path(directory))
        up, proxy_cert = pki.serving("upstream"), pki.serving("proxy")
        spawn = multiprocessing.get_context("spawn")
        ready = spawn.Queue()
        server = spawn.Process(target=_serve_upstream, args=(up.certfile, up.keyfile, ready), daemon=True)
        server.start()
        upstream_url = ready.get(timeout=30)
        argv_ = [sys.executable, "-m", "llmisvc_devstack.proxy", "--upstream", upstream_url]
        argv_ += ["--ca-file", pki.ca_file, "--cert", proxy_cert.certfile, "--key", proxy_cert.keyfile]
        proxy = subprocess.Popen(argv_, stdout=subprocess.PIPE, text=True)
        try:
            assert proxy.stdout is not None
            proxy_url = proxy.stdout.readline().strip()
            direct = requests_per_second(
                upstream_url, pki.ca_file, connections=args.connections, seconds=args.seconds
            )
            proxied = requests_per_second(
                proxy_url, pki.ca_file, connections=args.connections, seconds=args.seconds
            )
        finally:
            proxy.terminate()
            proxy.wait()
            server.terminate()
    print(f"direct:  {direct:8.0f} requests/s")
    print(f"proxied: {proxied:8.0f} requests/s ({args.connections} keep-alive connections)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
