"""``llmisvc-router``: the console script. Each subcommand lives in its own module and registers here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from llmisvc_router import dev_command, orchestrator_commands, plan_command, search_attributes_command
from watcher import cli as watch_command

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llmisvc-router",
        description="Run KServe's LLMInferenceService router reconciliation, durably, on Temporal.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plan_command.register(commands)
    orchestrator_commands.register(commands)
    watch_command.register(commands)
    search_attributes_command.register(commands)
    dev_command.register(commands)
    _register_apiserver(commands)
    return parser


def _register_apiserver(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from apiserver_standin import cli as standin_cli

    standin_cli.register(commands)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 1
