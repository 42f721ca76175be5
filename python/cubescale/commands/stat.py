"""``cubescale stat``: the flat profile of a report and statistics across locations (CubeLib's
``cube_stat -t N`` and ``-%``).

Example
-------
>>> from cubescale.cli import main
>>> from cubescale.examples import report_path
>>> main(["stat", report_path(), "-t", "2"])  # doctest: +NORMALIZE_WHITESPACE
Region                Visits   Exclusive time   Inclusive time
Barrier.wait            1220        20.669523        20.669523
update_chunk             480         2.225288         2.262339
0
"""

from __future__ import annotations

import argparse

from .. import report as cube
from ..stat import Stat, stat
from ._inputs import UsageError, check_output, report_path


def add_parser(subparsers) -> None:
    """Register the ``stat`` subcommand."""
    p = subparsers.add_parser(
        "stat", help="the top regions of a metric (flat profile) and their statistics across locations",
        description="Print the N regions with the largest exclusive value of a metric, summed over all their call "
                    "paths and locations, with their visits and inclusive value (cube_stat -t N); with -p also "
                    "statistics of every such region's values across locations: count, sum, mean, variance, "
                    "minimum, quartiles, median, maximum (cube_stat -%). Quartiles are exact, not cube_stat's "
                    "P-square estimates.",
        epilog="examples:\n  cubescale stat profile.cubex\n  cubescale stat profile.cubex -m visits -t 20 -p\n"
               "  cubescale stat profile.cubex --plot time.png",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help=".cubex report or an experiment directory")
    p.add_argument("-m", "--metric", default="time", help="metric (unique or display name; default time)")
    p.add_argument("-t", "--top", default="10", help="how many regions (default 10; 'all' for every visited one)")
    p.add_argument("-p", "-%", "--statistics", action="store_true",
                   help="also statistics across locations (cube_stat's -%%; its -p, pretty printing, is the default here)")
    p.add_argument("--plot", help="also draw the metric's largest call paths (exclusive, %% of the program) into this "
                                  "image (.png, .svg, .pdf; matplotlib)")
    p.set_defaults(run=run_stat, prepare=prepare_stat)


def _top(text: str) -> int | None:
    if text in ("all", "inf", "infinite", "unlimited"):  # cube_stat's words for all regions
        return None
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"-t takes a number of regions or 'all', not {text!r}") from None
    if n < 0:
        raise ValueError(f"-t takes a number of regions >= 0, not {n}")
    return n


def prepare_stat(args) -> None:
    """The report ``stat`` reads (an experiment directory resolved) and the number of regions."""
    args.file = report_path(args.file)
    args.top = _top(args.top)
    if "," in args.metric:  # cube_stat's -m takes a list; a metric's name may hold a comma too
        metrics = cube.open(args.file).metrics
        if args.metric not in {m.name for m in metrics} | {m.display_name for m in metrics}:
            raise UsageError(f"-m {args.metric}: stat shows one metric (cube_stat's comma-separated list is not "
                             "supported): give one, e.g. -m " + args.metric.split(",")[0])
    if args.plot:
        check_output(args.plot, [args.file])


def run_stat(args) -> int:
    report = cube.open(args.file)
    result = stat(report, args.metric, top=args.top)
    if args.plot:  # first: a plot that cannot be written (no matplotlib, an unknown format) prints nothing
        from ..plots import metric_share, save

        save(metric_share(report, args.metric, n=args.top or 10), args.plot)
    show(result, args.statistics)
    if args.plot:
        print(f"plot: {args.plot}")
    return 0


def show(result: Stat, statistics: bool) -> None:
    """Print the flat profile (and the statistics table)."""
    print(result.flat_table())
    if statistics and result.statistics:
        print()
        print(result.statistics_table())
