"""Child processes of a benchmark or chaos run: each one restartable (SIGKILL, start again on the same
command, ports and files), its output appended to a log file (a pipe nobody reads would block a chatty
process), and every wait bounded.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

#: Settings of the caller's environment a child must not inherit (a metrics port would clash).
UNSET = ("LLMISVC_ROUTER_METRICS_PORT",)
#: The longest a process may take to say it serves: four product processes starting at once on two
#: shared cores, each syncing its cache with a control plane that is still initializing its CRDs'
#: storage (429 "storage is (re)initializing"), took over a minute.
START_TIMEOUT = 180.0


def exit_on_sigterm() -> None:
    """A SIGTERM (``kill``, a CI job cancelled) unwinds the run like Ctrl-C does, so that its child
    processes are stopped on the way out instead of outliving it."""

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], object], what: str, timeout: float, period: float = 0.1) -> None:
    """Until ``check()`` is truthy (an OSError counts as not yet); TimeoutError naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(period)
    raise TimeoutError(f"{what} not ready within {timeout:.0f}s")


@dataclass
class Proc:
    """One restartable child process."""

    name: str
    argv: list[str]
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    def start(self) -> Proc:
        self.starts += 1
        self.log.parent.mkdir(parents=True, exist_ok=True)
        out = self.log.open("ab")
        out.write(f"--- start {self.starts} at {time.time():.3f}\n".encode())
        out.flush()
        env = {k: v for k, v in {**os.environ, **self.env}.items() if k not in UNSET}
        self.process = subprocess.Popen(
            self.argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        )
        out.close()
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: no clean-up, as an OOM kill or a node loss."""
        if self.alive():
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if not self.alive():
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def output(self) -> str:
        """What this start of the process has logged so far."""
        text = self.log.read_text(errors="replace")
        return text[text.rfind(f"--- start {self.starts} at") :]

    def wait_for_line(self, line: str, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while line not in self.output():
            if not self.alive():
                code = self.process and self.process.returncode
                raise RuntimeError(f"{self.name} exited with {code}; see {self.log}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name} did not log {line!r} within {timeout:.0f}s; see {self.log}")
            time.sleep(0.1)
