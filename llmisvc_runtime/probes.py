"""The probe endpoint of the worker and watcher processes: ``/healthz`` and ``/readyz`` on
``LLMISVC_ROUTER_PROBE_PORT`` (default 8081, as controller-runtime's operators serve them; 0: off).

The HTTP server runs in a thread of its own, so it answers while the event loop is blocked, and says so
(``event-loop``) instead of timing out. What the answers mean is decided in :mod:`llmisvc_runtime.health`;
this module gathers the state: an event-loop heartbeat, a periodic Temporal health check, and the checks the
process's parts register (the cluster cache's loops, the worker).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from temporalio.client import Client

from llmisvc_cache.cache import ClusterCache
from llmisvc_runtime import exit_codes, health
from llmisvc_runtime.errors import StartupError, first_line
from llmisvc_runtime.health import CheckResult, ConnectionHealth

log = logging.getLogger(__name__)

DEFAULT_PORT = 8081
ALL_INTERFACES = "0.0.0.0"  # the kubelet probes the pod's IP
#: The parts of each kind of process, registered as they start (:meth:`Probes.watch_temporal`, ...).
WORKER_PARTS = ("temporal", "watches", "worker")
WATCHER_PARTS = ("temporal", "watches")
#: The event loop ticks every second; liveness fails when it has not for this long.
LOOP_STALL_SECONDS = 30.0
HEARTBEAT_SECONDS = 1.0
SOURCE = "LLMISVC_ROUTER_PROBE_PORT or --probe-port"

Check = Callable[[float], list[CheckResult]]


class RunningWorker(Protocol):
    @property
    def is_running(self) -> bool: ...


class Probes:
    """The checks of one process and the state they read; served by :func:`serving`."""

    def __init__(self, grace: float, expected: Iterable[str] = (), stall: float = LOOP_STALL_SECONDS) -> None:
        self.grace = grace
        #: The parts the process will register (``temporal``, ``watches``, ``worker``): not ready until
        #: each has, or the probe would pass in the moments before the cache and the worker exist.
        self._pending = frozenset(expected)  # replaced whole: the probe thread reads it
        self._stall = stall
        self._tick = time.monotonic()
        self._checks: list[Check] = []
        self._tasks: list[asyncio.Task[None]] = []

    def liveness(self, now: float) -> list[CheckResult]:
        return [CheckResult("ping"), health.event_loop(self._tick, now, self._stall)]

    def readiness(self, now: float) -> list[CheckResult]:
        results = self.liveness(now)
        results += [CheckResult(part, "not started yet") for part in sorted(self._pending)]
        for check in self._checks:
            results += check(now)
        return results

    # --- what the process's parts register -----------------------------------------------------------

    def watch_cache(self, cache: ClusterCache) -> None:
        self._register("watches", lambda now: health.watches(cache.health(), now, self.grace))

    def watch_worker(self, worker: RunningWorker) -> None:
        def running(now: float) -> list[CheckResult]:
            return [CheckResult("worker", None if worker.is_running else "not running (stopping or stopped)")]

        self._register("worker", running)

    def watch_temporal(self, client: Client) -> None:
        """Check the Temporal frontend's gRPC health every few seconds (a few times per grace)."""
        state = [ConnectionHealth()]  # connected just now: the process checked its namespace
        target = f"Temporal at {client.service_client.config.target_host}"
        self._register(
            "temporal", lambda now: [health.connection("temporal", target, state[0], now, self.grace)]
        )
        self._tasks.append(asyncio.create_task(self._check_temporal(client, state)))

    def _register(self, part: str, check: Check) -> None:
        self._checks.append(check)
        self._pending = self._pending - {part}

    async def _check_temporal(self, client: Client, state: list[ConnectionHealth]) -> None:
        interval = min(5.0, self.grace / 3)
        timeout = timedelta(seconds=min(5.0, max(self.grace / 2, 0.2)))
        while True:
            try:
                served = await client.service_client.check_health(timeout=timeout)
                error = "" if served else "the frontend reports NOT_SERVING"
            except Exception as err:  # unreachable, deadline exceeded, refused: all the same here
                error = first_line(err)
            state[0] = state[0].failed(time.monotonic(), error) if error else state[0].passed()
            await asyncio.sleep(interval)

    async def _heartbeat(self) -> None:
        while True:
            self._tick = time.monotonic()
            await asyncio.sleep(HEARTBEAT_SECONDS)

    async def _close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


@contextlib.asynccontextmanager
async def serving(
    port: int, grace: float, expected: Iterable[str], host: str = ALL_INTERFACES
) -> AsyncIterator[Probes]:
    """The process's :class:`Probes`, served on ``host:port`` until the block ends (``port`` 0: checks
    kept, nothing served); not ready before the ``expected`` parts are registered. A port that cannot be
    bound is a :class:`StartupError` naming the setting."""
    probes = Probes(grace, expected)
    probes._tasks.append(asyncio.create_task(probes._heartbeat()))
    server = _bind(probes, host, port) if port else None
    thread = None
    if server is not None:
        thread = threading.Thread(target=server.serve_forever, name="probes", daemon=True)
        thread.start()
        log.info("serving /healthz and /readyz on %s:%s", host, server.server_address[1])
    try:
        yield probes
    finally:
        if server is not None and thread is not None:
            server.shutdown()
            server.server_close()
        await probes._close()


def _bind(probes: Probes, host: str, port: int) -> ThreadingHTTPServer:
    handler = type("ProbeHandler", (_Handler,), {"probes": probes})
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as err:
        raise StartupError(
            f"cannot serve the probes on {host}:{port}: {err.strerror or err} "
            f"(choose another port with {SOURCE}; 0 turns the probes off)",
            exit_codes.UNAVAILABLE,
        ) from err
    server.daemon_threads = True
    return server


class _Handler(BaseHTTPRequestHandler):
    probes: Probes
    server_version = "llmisvc-router-probes"

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        verbose = "verbose" in parse_qs(url.query, keep_blank_values=True)
        endpoints = {"/healthz": self.probes.liveness, "/readyz": self.probes.readiness}
        checks = endpoints.get(url.path.rstrip("/") or "/")
        if checks is None:
            self._send(404, "not found: the probes are /healthz and /readyz\n")
            return
        status, body = health.answer(url.path.strip("/"), checks(time.monotonic()), verbose)
        self._send(status, body)

    def _send(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("probe %s", format % args)  # the kubelet asks every few seconds: not worth a line each
