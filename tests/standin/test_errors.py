"""Errors are Status objects with the real reason and code; never a Python traceback."""

from __future__ import annotations

import pytest

from .helpers import configmap, http


def test_malformed_json_is_400_bad_request(standin):
    code, body, _ = http(f"{standin.url}/api/v1/namespaces/default/configmaps", "POST", b"{not json")
    assert code == 400
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure"
    assert body["reason"] == "BadRequest" and body["code"] == 400


def test_not_found_names_the_resource_like_a_real_server(standin):
    code, body, _ = http(f"{standin.url}/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/r")
    assert code == 404
    assert body["reason"] == "NotFound"
    assert body["message"] == 'httproutes.gateway.networking.k8s.io "r" not found'
    assert body["details"] == {"name": "r", "group": "gateway.networking.k8s.io", "kind": "httproutes"}


def test_already_exists_is_409_with_reason_already_exists(standin):
    url = f"{standin.url}/api/v1/namespaces/default/configmaps"
    http(url, "POST", configmap("a"))
    code, body, _ = http(url, "POST", configmap("a"))
    assert (code, body["reason"], body["code"]) == (409, "AlreadyExists", 409)


def test_a_missing_name_is_422_invalid(standin):
    code, body, _ = http(f"{standin.url}/api/v1/namespaces/default/configmaps", "POST", {"metadata": {}})
    assert code == 422 and body["reason"] == "Invalid"
    assert body["details"]["causes"][0]["field"] == "metadata.name"


def test_an_unknown_url_is_404_status(standin):
    for path in ("/apis/nope.example.com/v1/things", "/api/v1/nothings", "/whatever"):
        code, body, _ = http(standin.url + path)
        assert code == 404 and body["kind"] == "Status"


def test_a_429_carries_retry_after(standin):
    standin.faults.inject(verb="list", resource="configmaps", status=429, retry_after=3, times=1)
    code, body, headers = http(f"{standin.url}/api/v1/namespaces/default/configmaps")
    assert code == 429 and body["reason"] == "TooManyRequests" and headers["Retry-After"] == "3"
    assert body["details"]["retryAfterSeconds"] == 3


def test_an_internal_failure_is_a_500_status_not_a_traceback(standin, monkeypatch, capsys):
    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(standin.store, "get", explode)
    code, body, _ = http(f"{standin.url}/api/v1/namespaces/default/configmaps/a")
    assert code == 500 and body["kind"] == "Status" and body["reason"] == "InternalError"
    assert "Traceback" not in body["message"] and "boom" not in body["message"]
    assert "RuntimeError: boom" in capsys.readouterr().err  # the server's own log keeps it


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_a_body_that_is_not_an_object_is_400(standin, method):
    url = f"{standin.url}/api/v1/namespaces/default/configmaps"
    http(url, "POST", configmap("a"))
    target = url if method == "POST" else f"{url}/a"
    code, body, _ = http(
        target, method, [1, 2], "application/merge-patch+json" if method == "PATCH" else "application/json"
    )
    assert code == 400 and body["kind"] == "Status"
