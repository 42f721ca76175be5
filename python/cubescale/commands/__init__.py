"""Subcommands of the ``cubescale`` command line, one module each.

A module provides ``add_parser(subparsers)``, which adds its parser(s) and sets
``run=function(args) -> int`` as a default.
"""

from . import (
    algebra,
    analyze,
    clean,
    collate,
    demo,
    metrics,
    notebooks,
    pop,
    report,
    run,
    systree,
    threads,
    top,
    trace,
    view,
)

COMMANDS = [demo, systree, report, top, threads, trace, analyze, metrics, run, collate, algebra, pop, view, notebooks, clean]
