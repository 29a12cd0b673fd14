"""Kubeconfig files pointing at a running stand-in, for ``kubectl`` and other processes.

The stand-in does no authentication; the user carries a dummy token because clients expect one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

CONTEXT = "standin"
DUMMY_TOKEN = "standin-dummy-token"


def kubeconfig(server_url: str, namespace: str = "default", context: str = CONTEXT) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": server_url}}],
        "users": [{"name": context, "user": {"token": DUMMY_TOKEN}}],
        "contexts": [
            {"name": context, "context": {"cluster": context, "user": context, "namespace": namespace}}
        ],
        "current-context": context,
        "preferences": {},
    }


def write_kubeconfig(path: str | os.PathLike[str], server_url: str, namespace: str = "default") -> Path:
    """Write the kubeconfig atomically (a reader never sees half a file) with owner-only permissions."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.tmp")
    partial.write_text(yaml.safe_dump(kubeconfig(server_url, namespace), sort_keys=False))
    partial.chmod(0o600)
    partial.replace(target)
    return target
