"""``cubescale threads``: aggregate the threads of every process of a report (the Score-P thread-aggregation paper).

Example
-------
>>> import os, tempfile
>>> from cubescale.cli import main
>>> from cubescale.examples import report_path
>>> out = os.path.join(tempfile.mkdtemp(), "key.cubex")
>>> main(["threads", report_path(), out, "--strategy", "key"])  # doctest: +ELLIPSIS
key: 20 locations -> 16 (master thread, fastest thread, slowest thread, aggregated worker threads), ...
0
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from .. import report as cube
from ..threads import STRATEGIES, aggregate
from ._inputs import check_output, report_path
from ._shared import finite_at_least_zero, positive_count, progress


def add_parser(subparsers) -> None:
    """Register the ``threads`` subcommand."""
    p = subparsers.add_parser(
        "threads", help="aggregate each process's threads: sum, set, key, calltree, value",
        description="Replace every process's CPU threads by a few locations (Score-P's SCOREP_PROFILING_FORMAT "
                    "strategies, on an existing report): sum = one 'aggregated threads' location + num_threads; "
                    "set = TAU_ATOMIC tuples (N, min, max, sum, sum of squares); key = master, fastest, slowest "
                    "and aggregated worker threads (by time outside synchronization); calltree = one cluster per "
                    "set of visited call paths; value = clusters of similar per-call-path time. GPU streams and "
                    "other non-thread locations are kept.",
        epilog="examples:\n  cubescale threads profile.cubex key.cubex --strategy key\n"
               "  cubescale threads profile.cubex small.cubex --strategy sum --compress\n"
               "  cubescale threads profile.cubex c.cubex --strategy value --max-clusters 4",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", help=".cubex report to read (or an experiment directory)")
    p.add_argument("output", help=".cubex report to write (replaced only when complete)")
    p.add_argument("--strategy", choices=STRATEGIES, default="sum", help="aggregation strategy (default sum)")
    p.add_argument("--work-metric", help="time metric telling work from waiting (key, value; default 'time')")
    p.add_argument("--max-clusters", type=positive_count, default=8, help="value: at most this many clusters (default 8)")
    p.add_argument("--tolerance", type=finite_at_least_zero("a relative distance"), default=0.1,
                   help="value: relative distance that opens a new cluster (default 0.1)")
    p.add_argument("--compress", action="store_true", help="zlib-compress the rows")
    p.set_defaults(run=run_threads, prepare=prepare_threads)


def prepare_threads(args) -> None:
    """The report ``threads`` reads; never the file it writes."""
    args.input = report_path(args.input)
    check_output(args.output, [args.input])


def run_threads(args) -> int:
    start = time.perf_counter()
    r = cube.open(args.input)
    n = len(r.metrics)
    for i, m in enumerate(r.metrics, 1):  # reading dominates; show it metric by metric
        if not m.derived:
            r.values(m, inclusive=None)
        progress(f"reading metric {i}/{n}")
    out = aggregate(r, args.strategy, work_metric=args.work_metric, max_clusters=args.max_clusters,
                    tolerance=args.tolerance,
                    progress=lambda done, total: progress(f"aggregating metric {done}/{total}"))
    progress(f"writing {args.output}...")
    cube.write(out, args.output, compress=args.compress)
    progress("")
    names = list(dict.fromkeys(loc.name for loc in out.locations))
    before, after = os.path.getsize(args.input), os.path.getsize(args.output)
    print(f"{args.strategy}: {r.shape[1]} locations -> {out.shape[1]} ({', '.join(names[:6])}"
          f"{', ...' if len(names) > 6 else ''}), {before} -> {after} bytes ({before / after:.1f}x), "
          f"{time.perf_counter() - start:.2f} s")
    sys.stdout.flush()
    return 0
