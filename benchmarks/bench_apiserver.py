"""Throughput of the API server stand-in through the official ``kubernetes`` client.

Stores 10,000 HTTPRoutes (1,000 in each of 10 namespaces), then measures, on one keep-alive client:
GET/s, create/s, merge-patch/s and LIST/s of a 1,000-object namespace. By default the server runs in a
child process (as the worker and kubectl use it), so client and server do not share one interpreter
lock; ``--in-process`` serves from a thread of this process instead. Every write goes through the
real HTTPRoute CRD's schema and CEL rules (pruning, defaults, validation), as on a real server.

    .venv/bin/python benchmarks/bench_apiserver.py [--in-process] [--objects 10000]
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kubernetes import client

from apiserver_standin.server import make_api_client
from apiserver_standin.testing import running_apiserver, running_apiserver_process

GROUP, VERSION, PLURAL = "gateway.networking.k8s.io", "v1", "httproutes"
NAMESPACES = 10


def route(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "HTTPRoute",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "spec": {
            "parentRefs": [{"name": "gateway"}],
            "rules": [
                {
                    "backendRefs": [
                        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "p"}
                    ]
                }
            ],
        },
    }


def rate(label: str, count: int, action: Callable[[int], object]) -> float:
    started = time.perf_counter()
    for i in range(count):
        action(i)
    per_second = count / (time.perf_counter() - started)
    print(f"{label:<34} {per_second:>9.0f}/s  ({count} requests)", flush=True)
    return per_second


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def served(in_process: bool) -> Iterator[str]:
    if in_process:
        with running_apiserver(crds="gateway-api") as server:
            yield server.url
        return
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_apiserver_process(Path(tmp) / "kubeconfig", free_port(), crds="gateway-api") as process,
    ):
        yield process.url


def populate(custom: client.CustomObjectsApi, objects: int) -> None:
    started = time.perf_counter()
    for i in range(objects):
        custom.create_namespaced_custom_object(
            GROUP, VERSION, f"bench-{i % NAMESPACES}", PLURAL, route(f"route-{i:05d}")
        )
    print(f"stored {objects} HTTPRoutes in {time.perf_counter() - started:.1f}s", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--gets", type=int, default=3_000)
    parser.add_argument("--writes", type=int, default=1_000)
    parser.add_argument("--lists", type=int, default=30)
    parser.add_argument("--in-process", action="store_true", help="serve from a thread of this process")
    args = parser.parse_args(argv)
    with served(args.in_process) as url:
        api_client = make_api_client(url)
        custom = client.CustomObjectsApi(api_client)
        populate(custom, args.objects)
        per_ns = args.objects // NAMESPACES
        print(f"server: {url} ({'in-process thread' if args.in_process else 'child process'})")
        rate(
            "GET (one object)",
            args.gets,
            lambda i: custom.get_namespaced_custom_object(
                GROUP, VERSION, f"bench-{i % NAMESPACES}", PLURAL, f"route-{i % args.objects:05d}"
            ),
        )
        rate(
            "create",
            args.writes,
            lambda i: custom.create_namespaced_custom_object(
                GROUP, VERSION, "bench-new", PLURAL, route(f"new-{i:05d}")
            ),
        )
        rate(
            "patch (merge, spec change)",
            args.writes,
            lambda i: custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                "bench-new",
                PLURAL,
                f"new-{i:05d}",
                {"spec": {"hostnames": [f"h{i}.example.com"]}},
            ),
        )
        lists = rate(
            f"LIST ({per_ns} objects)",
            args.lists,
            lambda i: custom.list_namespaced_custom_object(GROUP, VERSION, f"bench-{i % NAMESPACES}", PLURAL),
        )
        print(f"LIST objects/s                     {lists * per_ns:>9.0f}/s")
        api_client.close()  # type: ignore[no-untyped-call]
    return 0


if __name__ == "__main__":
    sys.exit(main())
