"""Requests and answers pass through unchanged: headers, identity, bodies, keep-alive connections."""

from __future__ import annotations

import base64
import http.client
import socket
import ssl
import threading
from pathlib import Path

import pytest

from llmisvc_devstack.proxy import ApiProxy

from .clients import Client
from .tls import Pki
from .upstream import FakeUpstream, configmap

ECHO = "/apis/echo.test/v1/namespaces/ns/echoes"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io"


def test_a_get_is_answered_by_the_upstream(client: Client, upstream: FakeUpstream) -> None:
    upstream.objects[("ns", "a")] = configmap("a", k="v")
    answer = client.get("/api/v1/namespaces/ns/configmaps/a")
    assert answer.status == 200
    assert answer.json()["data"] == {"k": "v"}


@pytest.mark.parametrize(
    "accept", ["application/json", "application/vnd.kubernetes.protobuf, application/json", TABLE]
)
def test_the_clients_headers_reach_the_upstream_unchanged(
    client: Client, upstream: FakeUpstream, accept: str
) -> None:
    sent = {
        "Authorization": "Bearer secret-token",
        "User-Agent": "llmisvc-router/worker v1",
        "Accept": accept,
        "X-Custom": "kept",
    }
    echoed = client.request("GET", f"{ECHO}/a?labelSelector=a%3Db", headers=sent).json()
    received = dict(echoed["headers"])
    assert {k: received.get(k) for k in sent} == sent
    assert echoed["path"] == f"{ECHO}/a?labelSelector=a%3Db"  # the target as sent, not re-quoted
    assert received["Host"] == upstream.url.removeprefix("https://")


def test_hop_by_hop_headers_stay_on_their_own_connection(client: Client) -> None:
    sent = {"Connection": "keep-alive, X-Local", "Keep-Alive": "timeout=5", "TE": "trailers", "X-Local": "1"}
    received = {k.lower() for k, _ in client.request("GET", ECHO, headers=sent).json()["headers"]}
    assert not received & {"connection", "keep-alive", "te", "x-local"}


def test_a_request_body_reaches_the_upstream_byte_for_byte(client: Client) -> None:
    body = bytes(range(256)) * 40  # a protobuf body is binary
    headers = {"Content-Type": "application/vnd.kubernetes.protobuf"}
    echoed = client.request("POST", ECHO, body=body, headers=headers).json()
    assert base64.b64decode(echoed["body"]) == body
    assert dict(echoed["headers"])["Content-Type"] == "application/vnd.kubernetes.protobuf"


def test_a_chunked_request_body_is_forwarded_whole(proxy: ApiProxy, ca_file: str) -> None:
    context = ssl.create_default_context(cafile=ca_file)
    with socket.create_connection((proxy.host, proxy.port)) as raw:
        sock = context.wrap_socket(raw, server_hostname="127.0.0.1")
        head = f"PATCH {ECHO}/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        sock.sendall(head + b'4\r\n{"a"\r\n3;ext=1\r\n:1}\r\n0\r\nX-Trailer: t\r\n\r\n')
        response = http.client.HTTPResponse(sock, method="PATCH")
        response.begin()
        echoed = __import__("json").loads(response.read())
    assert base64.b64decode(echoed["body"]) == b'{"a":1}'
    assert "Transfer-Encoding" not in dict(echoed["headers"])


def test_the_upstreams_answer_headers_and_code_reach_the_client(client: Client) -> None:
    answer = client.get("/api/v1/namespaces/ns/configmaps/absent")
    assert answer.status == 404
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.headers["X-Upstream-Connection"]


def test_keep_alive_requests_share_one_upstream_connection(client: Client) -> None:
    seen = {client.get(ECHO).headers["X-Upstream-Connection"] for _ in range(5)}
    assert len(seen) == 1


def test_each_client_connection_has_its_own_upstream_connection(proxy: ApiProxy, ca_file: str) -> None:
    clients = [Client(proxy.url, ca_file) for _ in range(3)]
    seen = {c.get(ECHO).headers["X-Upstream-Connection"] for c in clients}
    for c in clients:
        c.close()
    assert len(seen) == 3


@pytest.mark.parametrize("chunked", [False, True], ids=["length-delimited", "chunked"])
def test_a_large_body_arrives_whole(client: Client, chunked: bool) -> None:
    size = 3_000_000
    answer = client.get(f"/big?size={size}&chunked={int(chunked)}")
    assert answer.body == (bytes(range(251)) * (size // 251 + 1))[:size]
    assert client.get(ECHO).status == 200  # and the connection serves the next request


def test_a_head_request_gets_the_headers_only(client: Client, upstream: FakeUpstream) -> None:
    upstream.objects[("ns", "a")] = configmap("a")
    answer = client.request("HEAD", "/api/v1/namespaces/ns/configmaps/a")
    assert answer.status == 200 and answer.body == b""
    assert int(answer.headers["Content-Length"]) > 0
    assert client.get(ECHO).status == 200


def test_an_upstream_that_hung_up_an_idle_connection_is_reconnected(client: Client) -> None:
    first = client.get("/hangup").headers["X-Upstream-Connection"]
    second = client.get(ECHO)
    assert second.status == 200
    assert second.headers["X-Upstream-Connection"] != first


def test_an_upstream_broken_mid_body_breaks_the_clients_answer_too(client: Client, proxy: ApiProxy) -> None:
    with pytest.raises(http.client.IncompleteRead):
        client.get("/broken")
    client.close()
    assert client.get(ECHO).status == 200  # the proxy itself goes on


def test_an_unreachable_upstream_is_answered_with_a_503_status(pki: Pki) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    cert = pki.serving("proxy")
    with ApiProxy(
        f"https://127.0.0.1:{port}", ca_file=pki.ca_file, certfile=cert.certfile, keyfile=cert.keyfile
    ).start() as proxy:
        c = Client(proxy.url, pki.ca_file)
        answer = c.get("/api/v1/namespaces/ns/configmaps/a")
        c.close()
    assert answer.status == 503
    assert answer.json()["reason"] == "ServiceUnavailable" and answer.json()["kind"] == "Status"


def test_an_upstream_certificate_the_ca_does_not_sign_is_refused(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    other = Pki(tmp_path, "another-ca")
    cert = other.serving("proxy")
    with ApiProxy(
        upstream.url, ca_file=other.ca_file, certfile=cert.certfile, keyfile=cert.keyfile
    ).start() as proxy:
        c = Client(proxy.url, other.ca_file)
        answer = c.get(ECHO)
        c.close()
    assert answer.status == 503
    assert "CERTIFICATE_VERIFY_FAILED" in answer.json()["message"]
    assert upstream.requests == []


def test_a_client_not_speaking_tls_is_turned_away_and_the_proxy_goes_on(
    client: Client, proxy: ApiProxy
) -> None:
    with socket.create_connection((proxy.host, proxy.port)) as raw:
        raw.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        raw.settimeout(5)
        assert not raw.recv(1024).startswith(b"HTTP/1.1 200")
    assert client.get(ECHO).status == 200


def test_many_concurrent_connections_are_served(
    proxy: ApiProxy, ca_file: str, upstream: FakeUpstream
) -> None:
    upstream.objects[("ns", "a")] = configmap("a")
    failures: list[object] = []

    def work() -> None:
        c = Client(proxy.url, ca_file)
        try:
            for _ in range(20):
                answer = c.get("/api/v1/namespaces/ns/configmaps/a")
                if answer.status != 200:
                    failures.append(answer.status)
        except Exception as exc:  # collected: a thread's exception would vanish
            failures.append(exc)
        finally:
            c.close()

    threads = [threading.Thread(target=work) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert failures == []
    assert proxy.counter.count(verb="get", code=200) == 800


def test_the_official_kubernetes_client_keeps_one_connection_through_the_proxy(
    proxy: ApiProxy, upstream: FakeUpstream, ca_file: str
) -> None:
    from kubernetes import client as k8s

    configuration = k8s.Configuration()
    configuration.host = proxy.url
    configuration.ssl_ca_cert = ca_file
    configuration.api_key = {"authorization": "Bearer t0ken"}
    with k8s.ApiClient(configuration) as api:
        core = k8s.CoreV1Api(api)
        core.create_namespaced_config_map(
            "ns", k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="a"), data={"k": "v"})
        )
        for _ in range(10):
            assert core.read_namespaced_config_map("a", "ns").data == {"k": "v"}
        assert [c.metadata and c.metadata.name for c in core.list_namespaced_config_map("ns").items] == ["a"]
    assert next(upstream.connections) == 2  # urllib3 kept its connection, and so did the proxy
    assert proxy.counter.count(verb="get", resource="configmaps", code=200) == 10
