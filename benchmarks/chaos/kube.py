"""kubectl-like HTTPS calls to kube-apiserver, by hand: JSON over urllib as the admin (a bearer token,
the control plane's CA), a ``chaos`` User-Agent, and retries on 5xx, 429 and connection errors, because
the faults the suite causes (a restarted kube-apiserver, a killed etcd) must not trip the suite itself.
The suite talks to kube-apiserver directly, not through the fault proxy the product talks through.

Deliberately independent of the product's own client code: the suite measures the product from outside.
"""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from typing import Any

Obj = dict[str, Any]
AGENT = "chaos-suite"

#: (group path, plural) of the kinds the suite touches.
KINDS = {
    "LLMInferenceService": ("apis/serving.kserve.io/v1alpha2", "llminferenceservices"),
    "HTTPRoute": ("apis/gateway.networking.k8s.io/v1", "httproutes"),
    "Gateway": ("apis/gateway.networking.k8s.io/v1", "gateways"),
    "GatewayClass": ("apis/gateway.networking.k8s.io/v1", "gatewayclasses"),
    "InferencePool": ("apis/inference.networking.k8s.io/v1", "inferencepools"),
    "InferencePoolV1alpha2": ("apis/inference.networking.x-k8s.io/v1alpha2", "inferencepools"),
    "LLMInferenceServiceConfig": ("apis/serving.kserve.io/v1alpha2", "llminferenceserviceconfigs"),
    "Service": ("api/v1", "services"),
    "ConfigMap": ("api/v1", "configmaps"),
    "Namespace": ("api/v1", "namespaces"),
    "ClusterRole": ("apis/rbac.authorization.k8s.io/v1", "clusterroles"),
}
CLUSTER_SCOPED = {"GatewayClass", "Namespace", "ClusterRole"}
ATTEMPTS = 10  # about 10 s of retries: longer than kube-apiserver takes to answer again after etcd is back


class KubeError(Exception):
    def __init__(self, code: int, body: str) -> None:
        super().__init__(f"HTTP {code}: {body[:300]}")
        self.code = code


class Kube:
    def __init__(self, url: str, ca_file: str, token: str, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._token = token
        self._context = ssl.create_default_context(cafile=ca_file)

    def path(self, kind: str, namespace: str = "", name: str = "") -> str:
        prefix, plural = KINDS[kind]
        where = "" if kind in CLUSTER_SCOPED or not namespace else f"/namespaces/{namespace}"
        return f"{prefix}{where}/{plural}" + (f"/{name}" if name else "")

    def call(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        last = ATTEMPTS - 1
        for attempt in range(ATTEMPTS):
            request = urllib.request.Request(f"{self.url}/{path}", data=data, method=method)
            request.add_header("User-Agent", AGENT)
            request.add_header("Content-Type", content_type)
            request.add_header("Authorization", f"Bearer {self._token}")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout, context=self._context) as response:
                    return json.loads(response.read() or b"null")
            except urllib.error.HTTPError as exc:
                text = exc.read().decode(errors="replace")
                if (exc.code < 500 and exc.code != 429) or attempt == last:
                    raise KubeError(exc.code, text) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if attempt == last:
                    raise
            time.sleep(min(0.2 * (attempt + 1), 1.0))
        raise AssertionError("unreachable")

    def watch_once(self, kind: str, namespace: str, resource_version: str, seconds: int = 1) -> list[Obj]:
        """The events of a watch from ``resource_version`` that the server ends after ``seconds``, read
        whole; one try (a refusal raises :class:`KubeError`). kube-apiserver answers a watch it cannot
        resume with 200 and an ``ERROR`` event of code 410, not with an HTTP 410."""
        query = f"?watch=true&timeoutSeconds={seconds}&resourceVersion={resource_version}"
        request = urllib.request.Request(f"{self.url}/{self.path(kind, namespace)}{query}")
        request.add_header("User-Agent", AGENT)
        request.add_header("Authorization", f"Bearer {self._token}")
        try:
            with urllib.request.urlopen(request, timeout=seconds + 5, context=self._context) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raise KubeError(exc.code, exc.read().decode(errors="replace")) from None
        return [json.loads(line) for line in body.splitlines() if line.strip()]

    def version(self, kind: str, namespace: str = "") -> str:
        """The collection's resourceVersion now."""
        listed: Obj = self.call("GET", self.path(kind, namespace) + "?limit=1")
        return str(listed["metadata"]["resourceVersion"])

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        try:
            found: Obj = self.call("GET", self.path(kind, namespace, name))
        except KubeError as exc:
            if exc.code == 404:
                return None
            raise
        return found

    def list(self, kind: str, namespace: str = "") -> list[Obj]:
        return list(self.call("GET", self.path(kind, namespace))["items"])

    def create(self, kind: str, body: Obj) -> Obj:
        namespace = body["metadata"].get("namespace", "")
        created: Obj = self.call("POST", self.path(kind, namespace), body)
        return created

    def patch(self, kind: str, namespace: str, name: str, patch: Obj) -> Obj:
        path = self.path(kind, namespace, name)
        patched: Obj = self.call("PATCH", path, patch, "application/merge-patch+json")
        return patched

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        try:
            self.call("DELETE", self.path(kind, namespace, name))
        except KubeError as exc:
            if exc.code == 404:
                return False
            raise
        return True
