"""How the commands that report print a document: ``-o yaml`` (the default, for people) or ``-o json``
(for scripts), one renderer for all of them (``status``, ``drift``, ``reconcile``'s pass summary).

``status``'s document is :func:`status_document`; its keys are listed in docs/operations.md ("Status
output") and are always all present, ``null`` when not known, so a script can read them without
checking for each."""

from __future__ import annotations

import argparse
import json
from typing import Any

import yaml

from llmisvc_router.errors import CommandError
from llmisvc_runtime import exit_codes
from workflows.models import WorkflowState

FORMATS = ("yaml", "json")
#: The version of :func:`status_document`'s shape: raised when a key changes meaning or goes away.
STATUS_FORMAT = 1


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", default="yaml", metavar="FORMAT", help="yaml (default) or json")


def check(output: str) -> str:
    """``output`` if it is a format; refused before anything connects otherwise."""
    if output not in FORMATS:
        raise CommandError(f"-o {output}: expected yaml or json", exit_codes.USAGE)
    return output


def render(document: dict[str, Any], output: str = "yaml") -> str:
    """The document in the format, keys in their order; one line per string in YAML, however long."""
    if check(output) == "json":
        return json.dumps(document, indent=2) + "\n"
    dumped: str = yaml.safe_dump(
        document, sort_keys=False, default_flow_style=False, allow_unicode=True, width=10**6
    )
    return dumped


def status_document(service: str, state: WorkflowState) -> dict[str, Any]:
    """``llmisvc-router status``'s answer: which service, then the workflow's state (the ``state``
    query), every field present."""
    return {"format": STATUS_FORMAT, "service": service, **state.model_dump(mode="json")}
