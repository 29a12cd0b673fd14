"""``python -m llmisvc_devstack.proxy`` prints its URL, proxies, and ends cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys

from .clients import Client
from .tls import Pki
from .upstream import FakeUpstream, configmap


def test_the_command_prints_its_url_serves_and_stops_on_sigterm(pki: Pki, upstream: FakeUpstream) -> None:
    upstream.objects[("ns", "a")] = configmap("a")
    cert = pki.serving("proxy-cli")
    argv = [sys.executable, "-m", "llmisvc_devstack.proxy", "--upstream", upstream.url]
    argv += ["--ca-file", pki.ca_file, "--cert", cert.certfile, "--key", cert.keyfile]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("https://127.0.0.1:")
        client = Client(url, pki.ca_file)
        assert client.get("/api/v1/namespaces/ns/configmaps/a").status == 200
        assert client.get("/_proxy/requests").json()["total"] == 1
        client.close()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
        process.wait()
