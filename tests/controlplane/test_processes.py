"""The control-plane components' process handling (``llmisvc_devstack.controlplane.processes``), without a
control plane: a stand-in command is enough to see what happens to a child when its starter dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

STARTER = """
import sys, time
from pathlib import Path
from llmisvc_devstack.controlplane.processes import Component

child = Component(
    "sleeper", [sys.executable, "-c", "import time; time.sleep(600)"], Path(sys.argv[1]), lambda: True
)
child.start()
print(child.process.pid, flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (dead, not yet reaped by init) counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_a_component_is_killed_when_the_process_that_started_it_is_sigkilled(tmp_path: Path) -> None:
    """A SIGKILLed test run (or pytest-timeout's exit) leaves no etcd or kube-apiserver behind."""
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(tmp_path / "sleeper.log")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert starter.stdout is not None
        pid = int(starter.stdout.readline())
        assert alive(pid)
        starter.send_signal(signal.SIGKILL)
        starter.wait(10)
        deadline = time.monotonic() + 5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), f"the component {pid} outlived the process that started it"
    finally:
        starter.kill()
        starter.wait(10)
        if "pid" in locals() and alive(pid):
            os.kill(pid, signal.SIGKILL)
