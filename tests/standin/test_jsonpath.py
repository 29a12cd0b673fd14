"""Kubernetes' JSONPath dialect, as printer columns and ``kubectl -o jsonpath`` use it."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver_standin import jsonpath, tables

SERVICE: dict[str, Any] = {
    "metadata": {"name": "llm", "labels": {"app.kubernetes.io/name": "x"}},
    "spec": {"hostnames": ["a.example", "b.example"], "replicas": 2},
    "status": {
        "url": "http://llm.example",
        "conditions": [
            {"type": "PresetsCombined", "status": "True", "reason": "Ok"},
            {"type": "Ready", "status": "False", "reason": "RouterNotReady"},
        ],
        "addresses": [{"url": "http://a"}, {"url": "http://b"}],
    },
}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (".status.url", ["http://llm.example"]),
        ("{.status.url}", ["http://llm.example"]),
        ("$.status.url", ["http://llm.example"]),
        (".status.conditions[?(@.type=='Ready')].status", ["False"]),
        ('.status.conditions[?(@.type=="Ready")].reason', ["RouterNotReady"]),
        (".status.conditions[?(@.type!='Ready')].type", ["PresetsCombined"]),
        (".status.addresses[*].url", ["http://a", "http://b"]),
        (".status.addresses.*.url", ["http://a", "http://b"]),
        (".status.addresses[1].url", ["http://b"]),
        (".status.addresses[-1].url", ["http://b"]),
        (".status.addresses[0:1].url", ["http://a"]),
        (".status.addresses[5].url", []),
        (".metadata['labels']['app.kubernetes.io/name']", ["x"]),
        ("..url", ["http://llm.example", "http://a", "http://b"]),
        (".spec.missing.deeper", []),
        (".status.conditions[?(@.reason)].type", ["PresetsCombined", "Ready"]),
        (".spec[?(@ > 1)]", [2]),
    ],
)
def test_kubernetes_jsonpath_selects_every_match_in_document_order(expression, expected):
    assert jsonpath.find(SERVICE, expression) == expected


def test_an_expression_outside_the_dialect_is_an_error():
    with pytest.raises(jsonpath.JSONPathError):
        jsonpath.find(SERVICE, ".status.conditions[?(type = Ready)]")


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ({"type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready')].status"}, "False"),
        ({"type": "string", "jsonPath": ".status.addresses[*].url"}, "http://a"),  # the first match
        ({"type": "string", "jsonPath": ".spec.hostnames"}, '["a.example","b.example"]'),
        ({"type": "integer", "jsonPath": ".spec.replicas"}, 2),
        ({"type": "string", "jsonPath": ".status.missing"}, None),
    ],
)
def test_a_printer_column_cell_is_its_first_match_printed_as_the_real_server_does(column, expected):
    assert tables.cell(column, SERVICE) == expected
