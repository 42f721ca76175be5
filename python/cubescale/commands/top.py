"""``cubescale top``: which call path, on which process, holds the most of a metric.

Example
-------
>>> from cubescale.cli import main
>>> from cubescale.examples import report_path
>>> main(["top", report_path(), "-m", "time", "-n", "2"])  # doctest: +ELLIPSIS
time (sec, exclusive) of 25.9828 sec in all: the 2 largest (call path, process)
       value  share  process              thread           call path
     4.70033  18.1%  MPI Rank 0           worker 0         stencil.py/Team._work/Barrier.wait
     4.69181  18.1%  MPI Rank 2           worker 0         stencil.py/Team._work/Barrier.wait
0
"""

from __future__ import annotations

import argparse

from .. import report as cube
from ..views import format_value, program_total, top
from ._inputs import report_path
from ._shared import count


def add_parser(subparsers) -> None:
    """Register the ``top`` subcommand."""
    p = subparsers.add_parser(
        "top", help="the call paths and processes with the largest values of a metric",
        description="Print the N largest values of a metric per (call path, process), largest first, with their "
                    "share of the whole program, the process (name and rank), the thread holding the most of it "
                    "and the call path: 'which call path, on which process' in one command. Values are exclusive "
                    "(time in the call path itself) unless --inclusive; tiny negative values from rounding are 0.",
        epilog="examples:\n  cubescale top profile.cubex -m time\n  cubescale top profile.cubex -m visits -n 20 --inclusive",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help=".cubex report or an experiment directory")
    p.add_argument("-m", "--metric", default="time", help="metric (unique or display name; default time)")
    p.add_argument("-n", type=count, default=10, help="how many (default 10)")
    p.add_argument("--inclusive", action="store_true", help="inclusive values (with callees)")
    p.set_defaults(run=run_top, prepare=prepare_top)


def prepare_top(args) -> None:
    """The report ``top`` reads (an experiment directory resolved)."""
    args.file = report_path(args.file)


def run_top(args) -> int:
    r = cube.open(args.file)
    m = r.metric(args.metric)
    entries = top(r, m, n=args.n, inclusive=args.inclusive)
    kind = "inclusive" if args.inclusive else "exclusive"
    share = m.dtype not in ("MINDOUBLE", "MAXDOUBLE")
    whole = f" of {format_value(program_total(r, m))} {m.unit} in all" if share else ""
    print(f"{m.name} ({m.unit}, {kind}){whole}: the {len(entries)} largest (call path, process)")
    print(f"{'value':>12} {'share':>6}  {'process':<20} {'thread':<16} call path")
    for e in entries:
        percent = f"{e['percent']:5.1f}%" if e["percent"] is not None else "     -"
        print(f"{format_value(e['value']):>12} {percent:>6}  {e['process']:<20} {e['thread']:<16} {e['call_path']}")
    return 0
