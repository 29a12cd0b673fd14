"""One control-plane process: its command line, a log file, start, wait for health, SIGKILL, restart.

Each component is started as a child process with its output in ``<workdir>/logs/<name>.log``; a start
that does not become healthy in time fails with the end of that log, since that is where etcd and
kube-apiserver say why. Ports are chosen once (free loopback ports) and kept across restarts, so clients
reconnect to the same address as they would to a restarted static pod.

On Linux a component is also SIGKILLed when the process that started it dies, however it dies (a
SIGKILLed test run, pytest-timeout ending the process, a crashed ``dev``): no etcd or kube-apiserver is
left running on its ports for the next run to trip over.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


_PR_SET_PDEATHSIG = 1
# Resolved now, not in the child between fork and exec, where only an async-signal-safe call belongs.
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL me when my parent dies."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _death_signal() -> Callable[[], None] | None:
    """The ``preexec_fn`` that ties a child to this process, or None where it cannot be tied: Linux sends
    the signal when the *thread* that started the child ends, so only children of the main thread, which
    lives as long as the process, get it."""
    if _prctl is None or threading.current_thread() is not threading.main_thread():
        return None
    return _die_with_parent


@dataclass
class Component:
    """A control-plane binary: ``command`` is fixed at creation; ``healthy`` probes it."""

    name: str
    command: Sequence[str]
    log: Path
    healthy: Callable[[], bool]
    start_timeout: float = 60.0
    env: Mapping[str, str] | None = None  # the child's environment (default: this process's)
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> float:
        """Start and wait until healthy; the seconds it took."""
        started = time.monotonic()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                list(self.command),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=None if self.env is None else dict(self.env),
                start_new_session=True,  # Ctrl-C in a terminal reaches us, and we stop it in order
                preexec_fn=_death_signal(),  # noqa: PLW1509 - one prctl call, resolved before the fork
            )
        deadline = started + self.start_timeout
        while not self.healthy():
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.process.returncode} while starting; "
                    f"{self.log}:\n{log_tail(self.log)}"
                )
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError(
                    f"{self.name} was not healthy {self.start_timeout:.0f}s after starting; "
                    f"{self.log}:\n{log_tail(self.log)}"
                )
            time.sleep(0.05)
        return time.monotonic() - started

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL, as a crashed node or an OOM kill would end it."""
        self._signal(signal.SIGKILL, wait=10)

    def stop(self) -> None:
        """SIGTERM and wait a little, then SIGKILL."""
        if not self._signal(signal.SIGTERM, wait=10):
            self.kill()

    def restart(self) -> float:
        self.kill()
        return self.start()

    def _signal(self, sig: signal.Signals, wait: float) -> bool:
        if self.process is None or self.process.poll() is not None:
            return True
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            return True
        try:
            self.process.wait(timeout=wait)
            return True
        except subprocess.TimeoutExpired:
            return False


def https_ok(url: str, ca_file: Path | None, token: str | None = None) -> bool:
    """GET ``url`` answers 200 (``ca_file`` None: the certificate is not checked, for a component's own
    self-signed health port)."""
    context = ssl.create_default_context(cafile=str(ca_file)) if ca_file else ssl._create_unverified_context()
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=2, context=context) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False
