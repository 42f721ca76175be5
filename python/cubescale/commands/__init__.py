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
    notebooks,
    pop,
    run,
    score,
    stat,
    systree,
    threads,
    timeline,
    top,
    trace_profile,
    view,
)

COMMANDS = [demo, systree, info, dump, convert, top, threads, trace_profile, analyze, timeline, run, collate, algebra, stat,
            score, pop, view, notebooks, clean]
