"""The compatibility table of docs/operations.md is the one scripts/compat_table.py generates from the
pins: bumping a pin (uv.lock, the control plane's go.mod, a vendored CRD, the KServe commit) without
regenerating the docs fails here."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]


def generator() -> Any:  # the script is loaded from its path; its names are not known to mypy
    spec = importlib.util.spec_from_file_location("compat_table", ROOT / "scripts/compat_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_table_is_the_generated_one() -> None:
    compat = generator()
    assert compat.documented(compat.DOCS.read_text()) == compat.table(), (
        "the pins moved: run `.venv/bin/python scripts/compat_table.py --write`"
    )


def test_every_row_names_a_version_read_from_a_pin() -> None:
    rows = generator().rows()
    names = [name for name, _, _ in rows]
    for wanted in (
        "Kubernetes",
        "kubectl",
        "KServe",
        "Gateway API",
        "Inference Extension",
        "Temporal",
        "Python",
    ):
        assert any(wanted in name for name in names), wanted
    assert all(re.search(r"\d", version) for _, version, _ in rows)


@pytest.fixture
def pinned_copy(tmp_path: Path) -> Path:
    """The files the generator reads, copied, so that a test can move a pin."""
    for name in (
        "uv.lock",
        "pyproject.toml",
        "Dockerfile",
        "devstack/controlplane/go.mod",
        "devstack/kserve/go.mod",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    for tree in ("devstack/llmisvc_devstack/controlplane/vendored_crds", "llmisvc_core/merge/wellknown"):
        shutil.copytree(ROOT / tree, tmp_path / tree)
    return tmp_path


@pytest.mark.parametrize(
    ("path", "old", "new", "shown"),
    [
        pytest.param(
            "uv.lock",
            'name = "temporalio"\nversion = "1.35.0"',
            'name = "temporalio"\nversion = "1.99.0"',
            "| Temporal Python SDK | 1.99.0 |",
            id="sdk",
        ),
        pytest.param(
            "devstack/controlplane/go.mod",
            "k8s.io/kubernetes v1.37.2",
            "k8s.io/kubernetes v1.38.0",
            "| 1.38.0 |",
            id="kubernetes",
        ),
        pytest.param(
            "llmisvc_core/merge/wellknown/__init__.py",
            'TARGET_COMMIT = "aaac4e294"',
            'TARGET_COMMIT = "0123abcde"',
            "router rules at `0123abcde`",
            id="kserve",
        ),
        pytest.param(
            "llmisvc_core/merge/wellknown/__init__.py",
            'SEED_COMMIT = "6c74cae8d"',
            'SEED_COMMIT = "0123abcde"',
            "seeded from `0123abcde`",
            id="kserve-seed",
        ),
        pytest.param(
            "llmisvc_core/merge/wellknown/__init__.py",
            'PRESETS_COMMIT = "aaac4e294"',
            'PRESETS_COMMIT = "0123abcde"',
            "well-known configs at `0123abcde`",
            id="kserve-presets",
        ),
        pytest.param(
            "devstack/kserve/go.mod",
            "github.com/kserve/kserve v0.20.0",
            "github.com/kserve/kserve v0.21.0",
            "| v0.21.0 (the proxy does not serve the target commit",
            id="kserve-peer",
        ),
    ],
)
def test_a_moved_pin_changes_the_table(pinned_copy: Path, path: str, old: str, new: str, shown: str) -> None:
    compat = generator()
    before = compat.table()
    file = pinned_copy / path
    assert old in file.read_text()
    file.write_text(file.read_text().replace(old, new))
    compat.ROOT = pinned_copy
    after = compat.table()
    assert after != before and shown in after
