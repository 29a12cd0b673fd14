"""The release workflow (.github/workflows/release.yaml), linted: actionlint (pinned in
devstack/actionlint, built by scripts/build-actionlint) finds nothing; the files it names exist; a tag
``v*`` triggers it; its version check, run here as the runner runs it, passes for the package's version
and refuses any other tag; the image is built for exactly linux/amd64 and linux/arm64 from the Dockerfile;
the wheel, the image and the chart are each built."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github/workflows/release.yaml"
#: Added by the Helm chart's branch (helm): checked as soon as they are in the tree.
PENDING = {
    "scripts/build-helm",
    "devstack/helm/go.mod",
    "devstack/helm/go.sum",
    "deploy/chart/llmisvc-router",
}
#: What a path in a ``run`` script or a ``with`` value looks like (outputs such as dist/ and .tools/bin/
#: are made by the workflow itself).
REPO_PATH = re.compile(r"(?<![\w./$-])((?:scripts|deploy|devstack)/[\w./-]*\w|Dockerfile|pyproject\.toml)")


def workflow() -> dict[Any, Any]:
    document: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text())
    return document


def steps() -> list[dict[str, Any]]:
    return [step for job in workflow()["jobs"].values() for step in job["steps"]]


def package_version() -> str:
    version: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return version


def referenced_paths() -> list[str]:
    texts = [step.get("run", "") for step in steps()]
    texts += [str(value) for step in steps() for value in step.get("with", {}).values()]
    return sorted({path for text in texts for path in REPO_PATH.findall(text)})


def test_actionlint_finds_nothing() -> None:
    subprocess.run([ROOT / "scripts/build-actionlint"], check=True, timeout=600)  # quick once built
    done = subprocess.run(
        [ROOT / ".tools/bin/actionlint", "-no-color", str(WORKFLOW.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_version_tag_triggers_it() -> None:
    triggers = workflow().get("on", workflow().get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers == {"push": {"tags": ["v*"]}}


def test_it_names_the_files_it_builds_from() -> None:
    assert {"Dockerfile", "pyproject.toml", "deploy/chart/llmisvc-router", "scripts/build-helm"} <= set(
        referenced_paths()
    )


@pytest.mark.parametrize("path", referenced_paths())
def test_every_file_it_names_exists(path: str) -> None:
    if path in PENDING and not (ROOT / path).exists():
        pytest.xfail(f"{path} comes with the Helm chart's branch")
    assert (ROOT / path).exists(), path


def _version_check(tag: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    [check] = [step for step in workflow()["jobs"]["version"]["steps"] if step.get("id") == "check"]
    output = tmp_path / "github-output"
    output.touch()
    return subprocess.run(
        ["bash", "-e", "-c", check["run"]],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "GITHUB_REF_NAME": tag, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_version_check_passes_the_packages_tag_and_hands_the_version_on(tmp_path: Path) -> None:
    done = _version_check(f"v{package_version()}", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "github-output").read_text() == f"version={package_version()}\n"


@pytest.mark.parametrize("tag", ["v9.9.9", "0.1.0", "v0.1.0-rc1"])
def test_the_version_check_refuses_another_tag(tag: str, tmp_path: Path) -> None:
    done = _version_check(tag, tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith(f"::error::tag {tag} does not match the version in pyproject.toml")


def test_every_build_waits_for_the_version_check_and_the_release_for_every_build() -> None:
    jobs = workflow()["jobs"]
    for name in ("wheel", "image", "chart"):
        assert jobs[name]["needs"] == "version", name
    assert set(jobs["release"]["needs"]) == {"version", "wheel", "image", "chart"}


def test_the_image_is_built_for_amd64_and_arm64_from_the_dockerfile() -> None:
    [build] = [step for step in steps() if str(step.get("uses", "")).startswith("docker/build-push-action@")]
    assert set(build["with"]["platforms"].split(",")) == {"linux/amd64", "linux/arm64"}
    assert build["with"]["file"] == "Dockerfile"
    uses = [str(step.get("uses", "")).split("@")[0] for step in steps()]
    assert {"docker/setup-qemu-action", "docker/setup-buildx-action"} <= set(uses)


def test_the_wheel_and_the_chart_are_built_by_their_tools() -> None:
    scripts = "\n".join(step.get("run", "") for step in steps())
    assert re.search(r"^\s*uv build\b", scripts, re.MULTILINE)
    assert re.search(r"helm package deploy/chart/llmisvc-router\b", scripts)
    uv_pin = re.search(r"^UV_VERSION=(\S+)", (ROOT / "scripts/bootstrap").read_text(), re.MULTILINE)
    assert uv_pin is not None and workflow()["env"]["UV_VERSION"] == uv_pin.group(1)
