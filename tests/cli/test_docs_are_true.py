"""What the docs (README.md, docs/*.md) name exists: every ``--flag`` written after ``llmisvc-router
COMMAND`` is an option of that command, every flag the configuration table gives a variable is an option
of some command, and every environment variable they name is read by code that runs (this repository's,
or the Temporal SDK's and OpenTelemetry's, which read their own standard variables)."""

from __future__ import annotations

import argparse
import re
from functools import cache
from pathlib import Path

import pytest
import temporalio

from llmisvc_router.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Where the repository's own code reads its settings.
CODE_DIRS = (
    "llmisvc_core", "llmisvc_kube", "llmisvc_cache", "activities", "workflows", "worker", "llmisvc_watcher",
    "llmisvc_runtime", "llmisvc_router", "devstack", "benchmarks", "scripts",
)  # fmt: skip
#: Variables the router reads as KServe's controller does (not prefixed), and the kubeconfig's.
KNOWN = (
    "POD_NAMESPACE",
    "CLUSTER_DOMAIN",
    "GATEWAY_API_WILDCARD_HOSTNAME",
    "LLM_INFERENCE_SERVICE_CONFIG_PREFIX",
)
VARIABLE = re.compile(r"\b((?:LLMISVC|TEMPORAL|OTEL)_[A-Z0-9_]*[A-Z0-9]|" + "|".join(KNOWN) + r")\b")
COMMAND = re.compile(r"llmisvc-router ([a-z][a-z-]*)([^`\n]*)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
#: A configuration-table row: ``| `VARIABLE`, … (`--flag`, … [on `command` and `command`]) | used by |``.
TABLE_ROW = re.compile(r"^\| `[A-Z][A-Z0-9_]*`[^|]*\(([^|]*)\) \| ([^|]*) \|", re.MULTILINE)
#: The processes of the table's "used by" column, and the commands that run each.
PROCESSES = {"worker": ("worker", "run"), "watcher": ("watch", "run")}


@cache
def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def options(command: str) -> set[str]:
    """The command's options and, for a command with actions (``rollout start``), theirs."""
    parser = commands()[command]
    found = set(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= set(sub._option_string_actions)
    return found


def doc_lines() -> list[tuple[str, int, str]]:
    return [(doc.name, n, line) for doc in DOCS for n, line in enumerate(doc.read_text().splitlines(), 1)]


def named_command_flags() -> list[tuple[str, str, str]]:
    found = []
    for doc, n, line in doc_lines():
        for match in COMMAND.finditer(line):
            if match.group(1) in commands():
                found += [(f"{doc}:{n}", match.group(1), flag) for flag in FLAG.findall(match.group(2))]
    return found


def test_the_docs_name_commands_with_flags() -> None:
    assert len(named_command_flags()) > 10  # the scan finds what it is meant to


@pytest.mark.parametrize(("where", "command", "flag"), named_command_flags())
def test_every_flag_the_docs_give_a_command_is_in_its_help(where: str, command: str, flag: str) -> None:
    assert flag in options(command), f"{where}: llmisvc-router {command} has no {flag}"


def table_flags() -> list[tuple[str, str]]:
    """(command, flag) for each flag of the table: on the commands its row names (``on `run```), else on
    the commands of every process in its "used by" column."""
    text = "\n".join(doc.read_text() for doc in DOCS)
    found = set()
    for names, used_by in TABLE_ROW.findall(text):
        users = [u.strip() for u in used_by.split(",")]
        if not set(users) <= {*PROCESSES, "CLI", "all"}:
            continue  # another table (e.g. a variable and its fallback)
        named = re.findall(r"`([a-z][a-z-]*)`", names.partition(" on ")[2])
        targets = named or [c for u in users for c in PROCESSES.get(u, ())]
        found |= {(command, flag) for flag in FLAG.findall(names) for command in targets}
    return sorted(found)


def test_the_configuration_table_gives_variables_flags() -> None:
    assert len(table_flags()) > 10


@pytest.mark.parametrize(("command", "flag"), table_flags())
def test_every_flag_of_the_configuration_table_is_an_option_of_the_commands_it_is_for(
    command: str, flag: str
) -> None:
    assert flag in options(command), f"llmisvc-router {command} has no {flag}"


@cache
def code_text() -> str:
    files = [
        p for d in CODE_DIRS for p in (ROOT / d).rglob("*") if p.is_file() and p.suffix in ("", ".py", ".sh")
    ]
    return "\n".join(p.read_text(errors="replace") for p in [*files, ROOT / "Makefile"])


@cache
def library_text() -> bytes:
    """The Temporal SDK's core (its environment configuration is compiled in) and OpenTelemetry's SDK and
    exporters, which read the standard variables themselves."""
    bridge = Path(temporalio.__file__).parent / "bridge"
    otel = Path(temporalio.__file__).parents[1] / "opentelemetry"  # beside it in site-packages
    files = [*bridge.glob("*.so"), *otel.rglob("*.py")]
    return b"\n".join(p.read_bytes() for p in files)


def documented_variables() -> list[str]:
    return sorted({v for _, _, line in doc_lines() for v in VARIABLE.findall(line)})


def test_the_docs_name_variables_of_every_kind() -> None:
    names = documented_variables()
    assert {"POD_NAMESPACE", "TEMPORAL_ADDRESS", "OTEL_TRACES_EXPORTER"} <= set(names)
    assert len([n for n in names if n.startswith("LLMISVC_")]) > 15


@pytest.mark.parametrize("variable", documented_variables())
def test_every_variable_the_docs_name_is_read_by_the_code(variable: str) -> None:
    if variable.startswith(("TEMPORAL_", "OTEL_")) and variable.encode() in library_text():
        return
    assert re.search(rf"\b{variable}\b", code_text()), f"{variable} is named in the docs but read nowhere"
