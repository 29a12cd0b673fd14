"""The dev stack's ``llmisvc-router`` commands, registered through the ``llmisvc_router.commands`` entry
point (devstack/pyproject.toml): ``dev`` (the whole stack locally, on a real control plane)."""

from __future__ import annotations

import argparse

from llmisvc_devstack import dev_command


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dev_command.register(commands)
