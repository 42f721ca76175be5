"""``cubescale score``: how large a trace of the run would be, per region type and region, and a
filter file that makes it smaller (Score-P's ``scorep-score``).

Example
-------
>>> from cubescale.cli import main
>>> from cubescale.examples import report_path
>>> main(["score", report_path()])  # doctest: +ELLIPSIS
Estimated aggregate size of event trace:                   ...
flt     type max_buf[B] visits time[s] time[%] time/visit[us]  region
         ALL ...
0
"""

from __future__ import annotations

import argparse
import errno
import os

from .. import files
from .. import report as cube
from ..score import FilterOptions, score
from ._inputs import check_output, report_path

DEFAULT_FILTER = "initial_scorep.filter"  # the name scorep-score -g writes


def add_parser(subparsers) -> None:
    """Register the ``score`` subcommand."""
    p = subparsers.add_parser(
        "score", help="estimate the size of a trace of the run from its profile; generate a filter",
        description="Estimate from a profile how large an OTF2 trace of the same run would be (bytes of Score-P's "
                    "records per visit x visits), per region type (ALL, USR, COM, MPI, OMP, SCOREP ...) and with "
                    "-r per region: the largest buffer of one process (max_buf), visits, time, time per visit, "
                    "and the SCOREP_TOTAL_MEMORY that avoids intermediate flushes, as scorep-score prints them. "
                    "-f shows the effect of a Score-P filter file; -g writes one that excludes the regions above "
                    "scorep-score's thresholds (1% of max_buf, at most 1 us per visit, USR regions), which "
                    "`cubescale run --filter` and Score-P read.",
        epilog="examples:\n  cubescale score profile.cubex -r\n  cubescale score profile.cubex -g\n"
               "  cubescale score profile.cubex -g bufferpercent=5,type=both --filter-out app.filter\n"
               "  cubescale score profile.cubex -f app.filter",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help=".cubex profile (Score-P's profile.cubex) or an experiment directory")
    p.add_argument("-r", "--regions", action="store_true", help="also one line per region")
    p.add_argument("-f", "--filter", help="Score-P filter file whose effect to show")
    p.add_argument("-g", "--generate", nargs="?", const="", metavar="OPTIONS",
                   help="write a filter file; OPTIONS as scorep-score: bufferpercent=1,timepervisit=1,visits=0,"
                        "bufferabsolute=0,type=usr|com|both")
    p.add_argument("-c", "--counters", type=int, default=0,
                   help="hardware counters the trace records at every Enter and Leave (scorep-score -c)")
    p.add_argument("--filter-out", default=DEFAULT_FILTER, help=f"where -g writes (default {DEFAULT_FILTER})")
    p.set_defaults(run=run_score, prepare=prepare_score)


def prepare_score(args) -> None:
    """Check the inputs and the options before reading: the report, the filter file, -g's options
    and that -g writes neither over an input nor over an existing file."""
    args.file = report_path(args.file)
    if not 0 <= args.counters <= 255:
        raise ValueError(f"-c takes 0 to 255 counters (one OTF2 metric record), not {args.counters}")
    if args.filter is not None and not os.path.isfile(args.filter):
        raise FileNotFoundError(errno.ENOENT, "no such filter file", args.filter)
    args.options = FilterOptions.parse(args.generate) if args.generate is not None else None
    if args.options is not None:
        check_output(args.filter_out, [args.file] + ([args.filter] if args.filter else []))
        if os.path.exists(args.filter_out):
            raise FileExistsError(errno.EEXIST, "exists; remove it or give another --filter-out "
                                                "(nothing was written)", args.filter_out)


def run_score(args) -> int:
    try:
        result = score(cube.open(args.file), filter=args.filter, counters=args.counters)
    except ValueError as e:
        if args.filter is None or "filter line" not in str(e):
            raise
        raise ValueError(f"{args.filter}: {e}") from None  # the parser names the line, we the file
    if args.options is not None:  # written before printing: a reader that stops early loses no file
        files.write_text(args.filter_out, result.filter_file(args.options))
    print(result.table(regions=args.regions))
    if args.options is not None:
        n = len(result.filter_candidates(args.options)) + sum(r.filter == "+" for r in result.regions)
        print(f"\nA filter file excluding {n} region{'s' if n != 1 else ''} has been written: {args.filter_out}")
        print(f"Use it with `cubescale run --filter {args.filter_out}` or SCOREP_FILTERING_FILE={args.filter_out}.")
    return 0
