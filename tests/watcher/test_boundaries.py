"""The watcher's layering: the trigger rules are pure, and neither the watcher nor the cluster cache
imports the Kubernetes client (their loops follow ``llmisvc_kube``'s streams).

(The import-linter contracts in pyproject cover the packages; these cover the modules inside one.)
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WATCHER = ROOT / "llmisvc_watcher"
CACHE = ROOT / "llmisvc_cache"


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


MODULES = sorted(
    [f"llmisvc_watcher/{p.name}" for p in WATCHER.glob("*.py")]
    + [f"llmisvc_cache/{p.name}" for p in CACHE.glob("*.py")]
)


@pytest.mark.parametrize("module", MODULES)
def test_no_watcher_or_cache_module_imports_the_kubernetes_client_or_urllib3(module: str) -> None:
    assert not imported_roots(ROOT / module) & {"kubernetes", "urllib3"}


def test_the_trigger_rules_load_neither_kubernetes_nor_temporalio() -> None:
    check = (
        "import sys, llmisvc_core.triggers.rules, llmisvc_watcher.model\n"
        "loaded = {m.split('.')[0] for m in sys.modules} & {'kubernetes', 'urllib3', 'temporalio'}\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
