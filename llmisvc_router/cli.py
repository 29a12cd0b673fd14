"""``llmisvc-router``: the console script. Each subcommand lives in its own module and registers here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from llmisvc_router import plan_command

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llmisvc-router",
        description="Run KServe's LLMInferenceService router reconciliation, durably, on Temporal.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plan_command.register(commands)
    return parser


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
