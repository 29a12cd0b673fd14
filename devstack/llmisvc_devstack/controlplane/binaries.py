"""Where the control plane's binaries are, built when they are missing or their pin changed.

``scripts/build-controlplane`` builds kube-apiserver, kube-controller-manager and etcd from the Go module
``devstack/controlplane/`` into ``.tools/bin/`` and records the pin it built; ``make bootstrap`` runs it, and
so does :func:`ensure` when a test session or ``dev`` finds them absent, so nothing starts on binaries of
another pin. ``LLMISVC_CONTROLPLANE_BIN`` names another directory of binaries (a checkout that shares one
build with another), which is then used as it is.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
BUILD_SCRIPT = REPO / "scripts" / "build-controlplane"
DEFAULT_DIR = REPO / ".tools" / "bin"
ENV_DIR = "LLMISVC_CONTROLPLANE_BIN"
NAMES = ("etcd", "kube-apiserver", "kube-controller-manager")


@dataclass(frozen=True)
class Binaries:
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path


def _in(directory: Path) -> Binaries:
    return Binaries(*(directory / name for name in NAMES))


def ensure() -> Binaries:
    """The binaries, building them first (progress on stderr) unless ``LLMISVC_CONTROLPLANE_BIN`` is set."""
    chosen = os.environ.get(ENV_DIR)
    if chosen:
        found = _in(Path(chosen))
        missing = [str(p) for p in vars(found).values() if not p.is_file()]
        if missing:
            raise FileNotFoundError(f"{ENV_DIR}={chosen}: missing {', '.join(missing)}")
        return found
    subprocess.run([str(BUILD_SCRIPT)], check=True)  # quick when the pin is built already
    return _in(DEFAULT_DIR)
