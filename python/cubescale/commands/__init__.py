"""Subcommands of the ``cubescale`` command line, one module each.

A module provides ``add_parser(subparsers)``, which adds its parser(s) and sets
``run=function(args) -> int`` as a default.
"""

from . import (
    algebra,
    analyze,
    clean,
    collate,
    convert,
    demo,
    dump,
    info,
    metrics,
    notebooks,
    run,
    systree,
    threads,
    top,
    trace,
    view,
)

COMMANDS = [demo, systree, info, dump, convert, top, threads, trace, analyze, metrics, run, collate, algebra, view, notebooks, clean]
