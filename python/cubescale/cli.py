"""The ``cubescale`` command line.

Each subcommand lives in its own module under :mod:`cubescale.commands` and registers
itself with :func:`add_parser`; this file only dispatches.

Example
-------
>>> from cubescale.cli import main
>>> main(["systree", "--shape", "node:2 process:4"])  # doctest: +ELLIPSIS
machine ×1 > node ×2 > process ×4
...
0
"""

from __future__ import annotations

import argparse
import os
import sys

from .commands import COMMANDS


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand (for ``--help`` and tests)."""
    parser = argparse.ArgumentParser(
        prog="cubescale",
        description="Small, fast, explorable performance data of very large parallel runs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 2 bad input)."""
    args = build_parser().parse_args(argv)
    try:
        status = args.run(args) or 0
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader went away (`cubescale dump ... | head`): stop quietly, as Unix tools do,
        # and keep Python from complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for such a tool
    except (OSError, ValueError, KeyError) as e:  # FormatError included; KeyError: no such metric ...
        if e is getattr(args, "program_error", None):  # raised by a program `cubescale run` ran
            raise
        text = e.args[0] if isinstance(e, KeyError) and e.args else e  # without KeyError's quotes
        print(f"cubescale: error: {text}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
