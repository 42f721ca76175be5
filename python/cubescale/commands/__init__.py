"""Subcommands of the ``cubescale`` command line, one module each.

A module provides ``add_parser(subparsers)``, which adds its parser(s) and sets
``run=function(args) -> int`` as a default.
"""

from . import collate, demo, metrics, report, run, systree, threads, top, trace

COMMANDS = [demo, systree, report, top, threads, trace, metrics, run, collate]
from . import notebooks as _notebooks; COMMANDS.append(_notebooks)  # noqa: E402, E702, I001 (one line per added command module)
