"""Subcommands of the ``cubescale`` command line, one module each.

A module provides ``add_parser(subparsers)``, which adds its parser(s) and sets
``run=function(args) -> int`` as a default.
"""

from . import analyze, collate, demo, metrics, report, run, systree, threads, trace

COMMANDS = [demo, systree, report, threads, trace, metrics, run, collate, analyze]
