"""Shared helpers for the stand-in tests: raw HTTP calls, polling, object builders."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

from kubernetes import client, config, dynamic, watch

from tests import builders as b
from tests.builders import kube

GATEWAY = ("gateway.networking.k8s.io", "v1")
T = TypeVar("T")


def http(
    url: str, method: str = "GET", body: Any = None, content_type: str = "application/json"
) -> tuple[int, Any, dict[str, str]]:
    """(code, decoded JSON body or text, headers) of one raw request; errors are answers too."""
    data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw, code, headers = response.read(), response.status, dict(response.headers)
    except urllib.error.HTTPError as exc:
        raw, code, headers = exc.read(), exc.code, dict(exc.headers)
    try:
        return code, json.loads(raw), headers
    except ValueError:
        return code, raw.decode(), headers


def new_watch() -> Any:
    """A ``kubernetes.watch.Watch`` (the package leaves it unannotated; typed as Any here)."""
    return watch.Watch()  # type: ignore[no-untyped-call]


def dynamic_client(api_client: client.ApiClient) -> Any:
    return dynamic.DynamicClient(api_client)  # type: ignore[no-untyped-call]


def load_kubeconfig(path: str, configuration: client.Configuration) -> None:
    config.load_kube_config(config_file=path, client_configuration=configuration)  # type: ignore[no-untyped-call]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def eventually(check: Callable[[], T | None], timeout: float = 5.0, interval: float = 0.02) -> T:
    """Poll ``check`` until it returns a truthy value; fail with the last value after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s (last value: {last!r})")


# The stand-in's tests create objects in the namespace of the request path: bodies carry no namespace,
# uid, generation or status (the server sets them), over the one set of builders.


def route(
    name: str, gateway: str = "gw", pool_group: str = "inference.networking.k8s.io", pool: str = "pool"
) -> dict[str, Any]:
    rules = [b.pool_backend(pool, pool_group)]
    return b.http_route(name, None, parent_refs=[{"name": gateway}], rules=rules, generation=None, rv=None)


def gateway(name: str) -> dict[str, Any]:
    return b.gateway(name, None, status=False)


def llmisvc(name: str, **spec: Any) -> dict[str, Any]:
    return b.service(name, None, uid=None, generation=None, **(spec or {"model": {"uri": b.ORG_MODEL}}))


def configmap(name: str, labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    return kube.configmap(name, labels=labels or {}, **data)


def gateway_class(name: str) -> dict[str, Any]:
    return b.gateway_class(name, "example.com/gateway-controller")
