"""The product wheel as built from the repository: every product package whole, and nothing of the dev
stack (the control plane's launcher, the simulated controllers, ``llmisvc-router dev``), which is a separate
workspace member (devstack/) installed by the development dependency group only."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEV_STACK_PACKAGES = ("llmisvc_devstack",)


def _uv() -> str:
    bundled = ROOT / ".tools" / "bin" / "uv"  # scripts/bootstrap installs it
    found = str(bundled) if bundled.exists() else shutil.which("uv")
    assert found, "uv is missing: run make bootstrap"
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [_uv(), "build", "--wheel", "--out-dir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (built,) = out.glob("llmisvc_router-*.whl")
    return zipfile.ZipFile(built)


def _product_packages() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages: list[str] = project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    return packages


def test_the_wheel_holds_no_dev_stack_code(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    for package in (*DEV_STACK_PACKAGES, "devstack"):
        assert not [n for n in names if n.split("/")[0] == package], package
    assert not [n for n in names if "vendored_crds" in n or n.endswith("dev_objects.yaml")]


def test_the_wheel_neither_requires_nor_registers_the_dev_stack(wheel: zipfile.ZipFile) -> None:
    info = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    metadata = wheel.read(info).decode()
    assert "Requires-Dist: llmisvc-devstack" not in metadata
    entry_points = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points[0]).decode()
    assert "llmisvc-router = llmisvc_router.cli:run" in text
    assert "llmisvc_router.commands" not in text


def test_the_wheel_holds_every_module_of_every_product_package(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    packages = _product_packages()
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == set(packages)
    for package in packages:
        modules = [p.relative_to(ROOT).as_posix() for p in (ROOT / package).rglob("*.py")]
        assert f"{package}/__init__.py" in modules, package
        assert sorted(set(modules) - names) == [], package


def test_every_top_level_package_is_either_product_or_dev_stack() -> None:
    """A new package must be put on one side: listed in the wheel, or in devstack/ (or a test helper)."""
    found = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    assert found == set(_product_packages())
    member = tomllib.loads((ROOT / "devstack" / "pyproject.toml").read_text())
    assert sorted(member["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]) == sorted(
        DEV_STACK_PACKAGES
    )


def test_the_wheel_carries_the_licence_and_the_notice(wheel: zipfile.ZipFile) -> None:
    for name in ("LICENSE", "NOTICE"):
        (found,) = [n for n in wheel.namelist() if n.endswith(f".dist-info/licenses/{name}")]
        assert wheel.read(found).decode() == (ROOT / name).read_text()
    metadata = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in metadata


def test_the_notice_names_every_vendored_file() -> None:
    """Each third-party file the repository copies (the presets, the CRDs) is listed with its upstream."""
    notice = (ROOT / "NOTICE").read_text()
    vendored = [
        *(ROOT / "llmisvc_core/merge/wellknown").glob("*.yaml"),
        *(ROOT / "devstack/llmisvc_devstack/controlplane/vendored_crds").glob("*.yaml"),
        *(ROOT / "tests/deploy/vendored_crds").glob("*.yaml"),
    ]
    assert vendored
    for path in vendored:
        assert path.name in notice or f"{path.parent.relative_to(ROOT)}/*.yaml" in notice, path
