"""``llmisvc-router``: the console script. Each subcommand lives in its own module and registers here.

The subcommand modules import Temporal, the Kubernetes client and the rest; they are imported inside
``main`` so that an interrupt during start-up ends quietly like one later on.

Commands of other installed distributions register through the ``llmisvc_router.commands`` entry-point
group: the dev stack (devstack/, a development dependency) adds ``dev`` that way, so the product as
installed in the image has no such command and never imports the dev stack.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points

Handler = Callable[[argparse.Namespace], int]
#: llmisvc_runtime.exit_codes.INTERRUPTED (not imported here: an interrupt may come first)
EXIT_INTERRUPTED = 130
#: Entry points whose value is ``register(commands)``, called after the product's own commands.
COMMANDS_GROUP = "llmisvc_router.commands"


#: The module that registers each of the product's commands. A command line naming one of them builds
#: the parser with that module alone: importing every command's module (Temporal, the Kubernetes client,
#: OpenTelemetry) took 3.5 s of ``plan``'s 4.4 s, an offline command that needs none of them.
#: ``tests/cli/test_command_line.py`` checks this table against the commands registered.
MODULE_OF_COMMAND = {
    "plan": "plan_command",
    **dict.fromkeys(("worker", "run", "reconcile", "stop", "resume", "status"), "orchestrator_commands"),
    "drift": "drift_command",
    "watch": "watch_command",
    "register-search-attributes": "search_attributes_command",
    "uninstall": "uninstall_command",
    "codec-server": "codec_server_command",
    "rollout": "rollout_command",
}
ALL_MODULES = tuple(dict.fromkeys(MODULE_OF_COMMAND.values()))


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or, when ``argv`` names one of the product's, of that one alone."""
    import importlib

    from llmisvc_runtime import exit_codes
    from llmisvc_runtime.version import package_version

    parser = argparse.ArgumentParser(
        prog="llmisvc-router",
        description="Run KServe's LLMInferenceService router reconciliation, durably, on Temporal.",
        epilog=f"Each command has its own --help with examples.\n\n{exit_codes.EPILOG}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"llmisvc-router {package_version()}", help="print the version"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    named = next((arg for arg in argv or () if not arg.startswith("-")), None)
    only = MODULE_OF_COMMAND.get(named or "")
    for module in (only,) if only else ALL_MODULES:
        importlib.import_module(f"llmisvc_router.{module}").register(commands)
    if not only:
        for entry in entry_points(group=COMMANDS_GROUP):
            entry.load()(commands)
    return parser


def run() -> None:
    """The console script: :func:`main`, then exit without interpreter finalization.

    The Temporal client's native runtime keeps threads that may call back into Python while the
    interpreter finalizes, which aborts the process now and then after the command has finished
    (``PyGILState_Release`` during finalization). The command's output is complete at that point, so
    the streams are flushed and the process ends at once with the command's status."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be written
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its failure (``CommandError``, or ``StartupError`` from the runtime) is one line
    on stderr, ``llmisvc-router COMMAND: message``, and the exit status of its class."""
    try:
        from llmisvc_router.errors import CommandError
        from llmisvc_runtime.errors import StartupError

        args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
        handler: Handler = args.handler
        try:
            return handler(args)
        except (CommandError, StartupError) as err:
            print(f"llmisvc-router {args.command}: {err}", file=sys.stderr)
            return err.code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        sys.stderr.close()
        return 1
