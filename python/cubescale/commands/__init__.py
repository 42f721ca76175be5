"""Subcommands of the ``cubescale`` command line, one module each.

A module provides ``add_parser(subparsers)``, which adds its parser(s) and sets
``run=function(args) -> int`` as a default.
"""

from . import collate, demo, metrics, report, run, systree, threads, trace

COMMANDS = [demo, systree, report, threads, trace, metrics, run, collate]
from . import algebra as _algebra; COMMANDS.append(_algebra)  # noqa: E402, E702, I001 (one line per added command module)
