"""Each option is defined once (``llmisvc_router.options``): a flag two commands share has the same help and
the same default on both, and every option that names a setting reaches the settings model."""

from __future__ import annotations

import argparse
from collections import defaultdict

from llmisvc_router import options
from llmisvc_router.cli import build_parser
from llmisvc_runtime.settings import OrchestratorSettings

#: Flags that mean something else on one command, on purpose: ``dev --kubeconfig`` is the file it writes,
#: ``uninstall --cluster`` chooses whose workflows end, ``rollout start -f`` is a plan, ``plan -f`` a state.
OWN_MEANING = {("dev", "--kubeconfig"), ("uninstall", "--cluster"), ("rollout start", "-f"), ("plan", "-f")}


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, and each action's (``rollout start``) by its full name."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(prefix: str, parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found[f"{prefix} {name}".strip()] = sub
                    walk(f"{prefix} {name}".strip(), sub)

    walk("", build_parser())
    return found


def test_a_flag_shared_by_commands_has_one_help_and_one_default() -> None:
    seen: dict[str, dict[tuple[str | None, object], list[str]]] = defaultdict(lambda: defaultdict(list))
    for command, parser in parsers().items():
        for flag, action in parser._option_string_actions.items():
            if flag not in ("-h", "--help") and (command, flag) not in OWN_MEANING:
                seen[flag][(action.help, action.default)].append(command)
    differing = {flag: dict(definitions) for flag, definitions in seen.items() if len(definitions) > 1}
    assert differing == {}
    assert len(seen["--namespace"][next(iter(seen["--namespace"]))]) == 3  # worker, run, watch


def test_every_option_the_settings_read_names_a_field_of_the_model() -> None:
    assert set(options.FIELD_OF_OPTION.values()) <= set(OrchestratorSettings.model_fields)
    dests = {a.dest for parser in parsers().values() for a in parser._actions}
    assert set(options.FIELD_OF_OPTION) <= dests
