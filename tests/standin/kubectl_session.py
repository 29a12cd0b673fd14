"""kubectl sessions against the shared stand-in process: the ``kubectl`` and ``ns`` fixtures' parts."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tools import KUBECTL

Kubectl = Callable[..., subprocess.CompletedProcess[str]]

SERVICE = """
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata: {name: llm, namespace: NS}
spec:
  model: {uri: "hf://org/model"}
"""


@pytest.fixture
def kubectl(standalone: Any, tmp_path: Path) -> Kubectl:
    env = {**os.environ, "KUBECONFIG": str(standalone.kubeconfig)}

    def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [KUBECTL, "--cache-dir", str(tmp_path / "cache"), *args]
        result = subprocess.run(
            command, input=stdin, capture_output=True, text=True, env=env, timeout=60, check=False
        )
        if check:
            assert result.returncode == 0, result.stderr
        return result

    return run


@pytest.fixture
def ns(kubectl: Kubectl, request: pytest.FixtureRequest) -> Iterator[str]:
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[-40:].strip("-")
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--ignore-not-found", "--wait=false", check=False)


def service(ns: str, **changes: str) -> str:
    text = SERVICE.replace("NS", ns)
    for old, new in changes.items():
        text = text.replace(old, new)
    return text
