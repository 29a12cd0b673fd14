"""Which requests a rule matches: by the fields kube-apiserver's RequestInfo gives a request."""

from __future__ import annotations

import pytest

from llmisvc_devstack.proxy import FaultRule
from llmisvc_devstack.proxy.requestinfo import parse

ROUTE = "/apis/gateway.networking.k8s.io/v1/namespaces/ns/httproutes/r"
STATUS = "/apis/serving.kserve.io/v1alpha1/namespaces/ns/llminferenceservices/s/status"

CASES = {
    "any request": ({}, "GET", ROUTE, True),
    "verb": ({"verb": "get"}, "GET", ROUTE, True),
    "another verb": ({"verb": "update"}, "GET", ROUTE, False),
    "one of some verbs": ({"verb": "create, get"}, "GET", ROUTE, True),
    "resource": ({"resource": "httproutes"}, "GET", ROUTE, True),
    "resource and group": (
        {"resource": "httproutes", "group": "gateway.networking.k8s.io"},
        "GET",
        ROUTE,
        True,
    ),
    "another group": ({"group": "networking.k8s.io"}, "GET", ROUTE, False),
    "namespace": ({"namespace": "ns"}, "GET", ROUTE, True),
    "another namespace": ({"namespace": "other"}, "GET", ROUTE, False),
    "name": ({"name": "r"}, "GET", ROUTE, True),
    "main resource only": ({"subresource": ""}, "PUT", STATUS, False),
    "subresource": ({"resource": "llminferenceservices", "subresource": "status"}, "PUT", STATUS, True),
    "any subresource": ({"resource": "llminferenceservices"}, "PUT", STATUS, True),
    "cluster-scoped namespace rule": ({"namespace": ""}, "GET", "/api/v1/nodes/n", True),
}


@pytest.mark.parametrize(("fields", "method", "path", "matches"), CASES.values(), ids=CASES.keys())
def test_a_rule_matches_the_requests_its_fields_name(
    fields: dict[str, str], method: str, path: str, matches: bool
) -> None:
    assert FaultRule(**fields).matches(parse(method, path, watch=False), "agent") is matches  # type: ignore[arg-type]
