"""``python -m apiserver_standin apiserver ...``: the same subcommand ``llmisvc-router apiserver`` offers.

Lets tests and scripts start the stand-in as a process without depending on the product's console
script.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from apiserver_standin import cli


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apiserver_standin")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    cli.register(commands)
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
