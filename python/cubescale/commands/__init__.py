"""Subcommands of the ``cubescale`` command line, one module each.

A module provides ``add_parser(subparsers)``, which adds its parser and sets
``run=function(args) -> int`` as a default.
"""

from . import systree

COMMANDS = [systree]
