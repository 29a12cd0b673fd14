"""``/healthz`` and ``/readyz`` of the real processes (``llmisvc-router worker``, ``watch``, ``run``) against
the session's control plane (through the test's faulting proxy) and a Temporal dev server, with the
readiness grace shortened to a second so each test takes seconds:

- ready once up and synced; a watch the API server refuses turns ``/readyz`` 503 naming the watch, and
  its recovery turns it 200 again; so does a Temporal server that stops answering (paused: SIGSTOP);
- ``/healthz`` stays 200 through both: a dependency's outage is not the process's;
- the probe port is off with 0, and a port already in use is one line naming the setting (exit 4).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from temporalio.client import Client

from llmisvc_core.models.kube import HTTPROUTE
from tests.cluster import Cluster
from tests.integration.harness import until
from tests.integration.test_worker_process import logged, product_env, product_process
from tests.tools import TEMPORAL

pytestmark = pytest.mark.asyncio(loop_scope="session")
ROOT = Path(__file__).resolve().parents[2]
GRACE = "1"  # LLMISVC_ROUTER_READINESS_GRACE_SECONDS: failures show within seconds


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=3) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError as err:
        return 0, str(err)  # not listening (yet)


async def probe(port: int, path: str) -> tuple[int, str]:
    return await asyncio.to_thread(_get, port, path)


async def answers(port: int, path: str, status: int, text: str = "", timeout: float = 60) -> str:
    """Wait until ``path`` answers ``status`` with a line containing ``text``; the body."""

    async def check() -> str | None:
        got, body = await probe(port, path)
        return body if got == status and any(text in line for line in body.splitlines() or [""]) else None

    return await until(check, f"{path} answering {status} {text!r}", timeout, interval=0.2)


def probed_env(
    temporal: Client, cluster: Cluster, tmp_path: Path, port: int, identity: str = "worker"
) -> dict[str, str]:
    """A product process's environment: the test's own task queue, ``identity``'s kubeconfig, the probes
    on ``port`` and the short readiness grace."""
    return product_env(
        temporal,
        cluster,
        f"health-{cluster.namespace}",
        cluster.kubeconfig(tmp_path / "k", identity),
        LLMISVC_ROUTER_PROBE_PORT=str(port),
        LLMISVC_ROUTER_READINESS_GRACE_SECONDS=GRACE,
    )


def routes_watch(cluster: Cluster) -> str:
    return f"watch {HTTPROUTE} in {cluster.namespace}"


async def test_the_worker_is_ready_once_synced_and_a_failing_watch_turns_it_unready_until_it_recovers(
    temporal: Client, cluster: Cluster, tmp_path: Path
) -> None:
    port = free_port()
    env = probed_env(temporal, cluster, tmp_path, port)
    with product_process("worker", env, tmp_path / "worker.log"):
        verbose = await answers(port, "/readyz?verbose", 200)
        for check in ("ping", "event-loop", "temporal", "worker", routes_watch(cluster)):
            assert f"[+]{check} ok" in verbose.splitlines(), verbose
        assert await probe(port, "/readyz") == (200, "ok\n")
        assert await probe(port, "/healthz") == (200, "ok\n")

        cluster.faults.inject(resource="httproutes", verb="list,watch", status=500, message="etcd is away")
        cluster.proxy.cut_watches()  # the open stream ends; every retry of it is refused
        body = await answers(port, "/readyz", 503, f"{routes_watch(cluster)}: failing for", timeout=30)
        assert "HTTP 500: etcd is away" in body, body
        assert body.count("\n") == 1, body  # only the failing watch is named
        assert await probe(port, "/healthz") == (200, "ok\n")

        cluster.faults.clear()
        await answers(port, "/readyz", 200, timeout=30)  # within one backoff (at most 8 s)
        assert await probe(port, "/healthz") == (200, "ok\n")


async def test_the_watcher_is_unready_while_a_kind_cannot_be_listed_and_ready_once_it_is(
    temporal: Client, cluster: Cluster, tmp_path: Path
) -> None:
    cluster.faults.inject(resource="httproutes", verb="list", status=403, message="no list for you")
    port = free_port()
    env = probed_env(temporal, cluster, tmp_path, port, "watcher")
    log = tmp_path / "watcher.log"
    with product_process("watch", env, log) as watcher:
        await logged(watcher, log, "watching LLMInferenceServices")
        refused = f"{routes_watch(cluster)}: not listed for"
        body = await answers(port, "/readyz", 503, "HTTP 403: no list for you")
        assert next(line for line in body.splitlines() if "no list for you" in line).startswith(refused), body
        assert await probe(port, "/healthz") == (200, "ok\n")
        cluster.faults.clear()
        await answers(port, "/readyz", 200, timeout=30)


@asynccontextmanager
async def own_temporal_server(log: Path) -> AsyncIterator[tuple[subprocess.Popen[bytes], str]]:
    """A dev server of the test's own, so that pausing it harms no other test, its output kept in ``log``."""
    server, address = await _started_temporal_server(log)
    try:
        yield server, address
    finally:
        server.send_signal(signal.SIGCONT)
        server.terminate()
        server.wait(15)


async def _started_temporal_server(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Its ports are picked free and bound by the server a moment later: a server that ends at once (another
    process took a port in between) is started again on others. CI once saw one never answer in 60 s, its
    output thrown away; the failure now carries it."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    for attempt in range(1, 4):
        address = f"127.0.0.1:{free_port()}"
        host, port = address.split(":")
        command = [TEMPORAL, "server", "start-dev", "--headless", "--ip", host, "--port", port]
        command += ["--http-port", str(free_port()), "--metrics-port", str(free_port())]
        command += ["--log-level", "warn"]
        with log.open("ab") as out:
            out.write(f"--- attempt {attempt}: {' '.join(command)}\n".encode())
            out.flush()
            server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)

        async def started(server: subprocess.Popen[bytes] = server, address: str = address) -> str | None:
            if server.poll() is not None:
                return "ended"
            try:
                await Client.connect(address)
            except RuntimeError:
                return None
            return "up"

        try:
            if await until(started, f"a Temporal dev server at {address}", 60, interval=0.2) == "up":
                return server, address
        except AssertionError as err:
            server.kill()
            server.wait(15)
            raise AssertionError(f"{err}; its output:\n{_tail(log)}") from None
    raise AssertionError(f"a Temporal dev server ended at start 3 times; its output:\n{_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]


async def test_run_is_unready_while_temporal_does_not_answer_and_ready_once_it_does(
    temporal: Client, cluster: Cluster, tmp_path: Path
) -> None:
    port = free_port()
    async with own_temporal_server(tmp_path / "temporal.log") as (server, address):
        env = probed_env(temporal, cluster, tmp_path, port)
        env["TEMPORAL_ADDRESS"] = address
        with product_process("run", env, tmp_path / "run.log"):
            await answers(port, "/readyz", 200)
            os.kill(server.pid, signal.SIGSTOP)  # connections stay open; nothing answers on them
            body = await answers(port, "/readyz", 503, f"temporal: Temporal at {address} unreachable for", 30)
            assert body.count("\n") == 1, body
            assert await probe(port, "/healthz") == (200, "ok\n")
            os.kill(server.pid, signal.SIGCONT)
            await answers(port, "/readyz", 200, timeout=30)
            assert await probe(port, "/healthz") == (200, "ok\n")


async def test_a_probe_port_in_use_is_one_line_naming_the_setting_and_0_turns_the_probes_off(
    temporal: Client, cluster: Cluster, tmp_path: Path
) -> None:
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = probed_env(temporal, cluster, tmp_path, port)
        refused = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "llmisvc_router", "worker"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 4, refused.stderr
        assert refused.stderr.strip().splitlines() == [
            f"llmisvc-router worker: cannot serve the probes on 0.0.0.0:{port}: Address already in use "
            "(choose another port with LLMISVC_ROUTER_PROBE_PORT or --probe-port; 0 turns the probes off)"
        ]

        # The flag overrides the variable: with 0 the worker starts beside the busy port, serving no probes.
        log = tmp_path / "worker.log"
        with product_process("worker", env, log, "--probe-port", "0") as worker:
            await logged(worker, log, "worker polling task queue")
            assert "/healthz" not in log.read_text()
