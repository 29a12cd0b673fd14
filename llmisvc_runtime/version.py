"""What the product calls itself: its version from the installed package's metadata, and the User-Agent each
process sends to the API server (``llmisvc-router/<version> (worker|watcher|cli)``), so audit logs and API
Priority and Fairness can tell the worker from the watcher and from other Python clients. Imports nothing
heavy: ``llmisvc-router --version`` reads it before any subcommand module is loaded."""

from __future__ import annotations

from importlib import metadata
from typing import Literal

DISTRIBUTION = "llmisvc-router"
#: The processes that talk to the API server: the worker (and ``run``, worker and watcher in one process,
#: which writes as the worker does), the watcher, and the one-shot commands.
Role = Literal["worker", "watcher", "cli"]


def package_version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0.0.0"


def user_agent(role: Role) -> str:
    return f"{DISTRIBUTION}/{package_version()} ({role})"
