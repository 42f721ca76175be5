"""``cubescale pop``: POP's efficiency metrics of one run or of runs of different scale.

Example
-------
>>> from cubescale.cli import main
>>> from cubescale.examples import report_path
>>> main(["pop", report_path()])  # doctest: +ELLIPSIS
POP metrics                       demo.cubex
(useful computation: time - MPI and OpenMP runtime regions)
Global efficiency ...
0
"""

from __future__ import annotations

import argparse
import os

from .. import report as cube
from ..pop import pop_metrics, table_text, wait_time
from ._inputs import check_output, report_path


def add_parser(subparsers) -> None:
    """Register the ``pop`` subcommand."""
    p = subparsers.add_parser(
        "pop", help="POP efficiency metrics: load balance, communication, serialisation, transfer, scalability",
        description="Print the POP methodology's efficiencies of a run (load balance, communication efficiency, "
                    "parallel efficiency) and, with a wait-state report of the same run (cubescale analyze), "
                    "serialisation and transfer efficiency; of several runs of different scale also computation "
                    "scalability and global efficiency, relative to the run with the fewest locations. A report "
                    "that holds Scalasca's wait states and follows a run without them, with as many locations, is "
                    "that run's wait-state report; every other report is a run. An experiment directory's scout.cubex "
                    "(Scalasca's wait states) is its run's wait-state report. docs/pop.md has the formulas.",
        epilog="examples:\n  cubescale pop profile.cubex\n  cubescale pop profile.cubex scout.cubex\n"
               "  cubescale pop scorep_bt-mz_8x4_trace    # profile or summary, with the scout.cubex beside it\n"
               "  cubescale pop p8.cubex p16.cubex p32.cubex --plot pop.png",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="REPORT", help=".cubex reports or experiment directories")
    p.add_argument("--weak", action="store_true", help="weak scaling: useful time is expected to grow with the "
                                                       "number of locations (default: strong scaling)")
    p.add_argument("--plot", help="also draw the efficiencies as bars into this image (.png, .svg, .pdf; matplotlib)")
    p.set_defaults(run=run_pop, prepare=prepare_pop)


SCOUT_NAME = "scout.cubex"
"""Scalasca's wait-state report in an experiment directory."""


def prepare_pop(args) -> None:
    """The reports ``pop`` reads (experiment directories resolved, each with the scout.cubex
    beside its report in ``args.beside``); the plot is none of them."""
    args.beside = {}
    resolved = []
    for given in args.inputs:
        path = report_path(given)
        scout = os.path.join(given, SCOUT_NAME)
        if os.path.isdir(given) and os.path.isfile(scout) and os.path.basename(path) != SCOUT_NAME:
            args.beside[path] = scout
        resolved.append(path)
    args.inputs = resolved
    if args.plot:
        check_output(args.plot, args.inputs + list(args.beside.values()))


def runs_and_scouts(reports: list[cube.Report]) -> tuple[list[cube.Report], list[cube.Report | None]]:
    """The runs among the inputs and each one's wait-state report (or None): a report with wait
    states right after a run without them and with as many locations is that run's.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> runs, scouts = runs_and_scouts([r, r])
    >>> len(runs), scouts
    (2, [None, None])
    """
    runs: list[cube.Report] = []
    scouts: list[cube.Report | None] = []
    for report in reports:
        previous = runs[-1] if runs else None
        if (previous is not None and scouts[-1] is None and report.shape[1] == previous.shape[1]
                and wait_time(previous) is None and wait_time(report) is not None):
            scouts[-1] = report
            continue
        runs.append(report)
        scouts.append(None)
    return runs, scouts


def scouts_beside(runs: list[cube.Report], scouts: list[cube.Report | None],
                  beside: dict[str, str]) -> list[str]:
    """Give each run from an experiment directory that has no wait states yet (neither its own
    nor a report given after it) the directory's scout.cubex; the notes say which were used.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> scouts = [None]
    >>> scouts_beside([r], scouts, {}), scouts
    ([], [None])
    """
    notes = []
    for i, run in enumerate(runs):
        path = beside.get(run.path)
        if path is None or scouts[i] is not None or wait_time(run) is not None:
            continue
        scouts[i] = cube.open(path)
        notes.append(f"wait states: {path} (beside {os.path.basename(run.path)} in its experiment directory)")
    return notes


def run_pop(args) -> int:
    reports = [cube.open(p) for p in args.inputs]
    runs, scouts = runs_and_scouts(reports)
    notes = scouts_beside(runs, scouts, getattr(args, "beside", {}))
    metrics = pop_metrics(runs, scouts, scaling="weak" if args.weak else "strong")
    if args.plot:  # first: a plot that cannot be written (no matplotlib, an unknown format) prints nothing
        from ..plots import pop_efficiencies, save

        save(pop_efficiencies(metrics), args.plot)
    print(table_text(metrics))
    for note in notes:
        print(note)
    if args.plot:
        print(f"plot: {args.plot}")
    return 0
