"""Request URLs read as kube-apiserver's RequestInfoFactory reads them."""

from __future__ import annotations

import pytest

from llmisvc_devstack.proxy.requestinfo import RequestInfo, is_watch_query, parse

NS = "/api/v1/namespaces"
CASES = {
    "get a core object": (
        ("GET", f"{NS}/ns/configmaps/a", False),
        RequestInfo("get", f"{NS}/ns/configmaps/a", True, "", "v1", "configmaps", "", "ns", "a"),
    ),
    "list": (
        ("GET", f"{NS}/ns/configmaps", False),
        RequestInfo("list", f"{NS}/ns/configmaps", True, "", "v1", "configmaps", "", "ns"),
    ),
    "watch by query": (
        ("GET", f"{NS}/ns/configmaps", True),
        RequestInfo("watch", f"{NS}/ns/configmaps", True, "", "v1", "configmaps", "", "ns"),
    ),
    "watch by the deprecated path prefix": (
        ("GET", "/api/v1/watch/namespaces/ns/configmaps", False),
        RequestInfo(
            "watch", "/api/v1/watch/namespaces/ns/configmaps", True, "", "v1", "configmaps", "", "ns"
        ),
    ),
    "create in a group": (
        ("POST", "/apis/gateway.networking.k8s.io/v1/namespaces/ns/httproutes", False),
        RequestInfo(
            "create",
            "/apis/gateway.networking.k8s.io/v1/namespaces/ns/httproutes",
            True,
            "gateway.networking.k8s.io",
            "v1",
            "httproutes",
            "",
            "ns",
        ),
    ),
    "update a status subresource": (
        ("PUT", "/apis/g.io/v1/namespaces/ns/things/t/status", False),
        RequestInfo(
            "update",
            "/apis/g.io/v1/namespaces/ns/things/t/status",
            True,
            "g.io",
            "v1",
            "things",
            "status",
            "ns",
            "t",
        ),
    ),
    "patch": (
        ("PATCH", f"{NS}/ns/services/s", False),
        RequestInfo("patch", f"{NS}/ns/services/s", True, "", "v1", "services", "", "ns", "s"),
    ),
    "delete": (
        ("DELETE", f"{NS}/ns/services/s", False),
        RequestInfo("delete", f"{NS}/ns/services/s", True, "", "v1", "services", "", "ns", "s"),
    ),
    "deletecollection": (
        ("DELETE", f"{NS}/ns/services", False),
        RequestInfo("deletecollection", f"{NS}/ns/services", True, "", "v1", "services", "", "ns"),
    ),
    "a cluster-scoped object": (
        ("GET", "/api/v1/nodes/n", False),
        RequestInfo("get", "/api/v1/nodes/n", True, "", "v1", "nodes", "", None, "n"),
    ),
    "a namespace is a cluster-scoped object": (
        ("GET", f"{NS}/ns", False),
        RequestInfo("get", f"{NS}/ns", True, "", "v1", "namespaces", "", None, "ns"),
    ),
    "a namespace's finalize subresource": (
        ("PUT", f"{NS}/ns/finalize", False),
        RequestInfo("update", f"{NS}/ns/finalize", True, "", "v1", "namespaces", "finalize", None, "ns"),
    ),
    "discovery is not a resource": (("GET", "/apis/g.io/v1", False), RequestInfo("get", "/apis/g.io/v1")),
    "healthz is not a resource": (("GET", "/healthz", False), RequestInfo("get", "/healthz")),
}


@pytest.mark.parametrize(("request_", "info"), CASES.values(), ids=CASES.keys())
def test_a_url_reads_as_the_real_server_reads_it(request_: tuple[str, str, bool], info: RequestInfo) -> None:
    assert parse(*request_) == info


@pytest.mark.parametrize(
    ("value", "watch"), [("true", True), ("1", True), ("True", True), ("false", False), ("", False)]
)
def test_the_watch_parameter_reads_as_go_parses_a_bool(value: str, watch: bool) -> None:
    assert is_watch_query(value) is watch
