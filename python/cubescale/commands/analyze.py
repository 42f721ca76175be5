"""``cubescale analyze``: the wait-state analysis of an OTF2 trace (Scalasca's patterns) into
one ``.cubex`` with the trace's call-path profile, and a short summary per pattern.

Example
-------
>>> import os, tempfile
>>> from cubescale.cli import main
>>> from cubescale.otf2 import _example_path
>>> out = os.path.join(tempfile.mkdtemp(), "scout.cubex")
>>> main(["analyze", _example_path(), "-o", out])  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
traces.otf2 -> scout.cubex: 21 metrics, 12 call paths, 4 locations (...)
pattern                 total [s]    most severe call path (s)                  most severe process (s)
mpi_barrier_wait        21.4093      main > barrier > MPI_Barrier (21.4093)     MPI Rank 1 (7.83516)
mpi_barrier_completion  6.8441e-05   main > barrier > MPI_Barrier (6.8441e-05)  MPI Rank 3 (5.6892e-05)
mpi_latesender          30.0206      main > late_sender > MPI_Recv (30.0206)    MPI Rank 3 (10.9904)
mpi_init_completion     7.713e-06    main > MPI_Init (7.713e-06)                MPI Rank 0 (3.906e-06)
mpi_finalize_wait       0.000156056  main > MPI_Finalize (0.000156056)          MPI Rank 0 (5.7852e-05)
no wait time in mpi_latesender_wo, mpi_lswo_different, mpi_lswo_same
0
"""

from __future__ import annotations

import argparse
import os
import time


def add_parser(subparsers) -> None:
    """Register the ``analyze`` subcommand."""
    p = subparsers.add_parser(
        "analyze", help="find MPI wait states in an OTF2 trace (Scalasca's patterns) and write them as .cubex",
        description="Read an OTF2 trace, match its MPI messages and collectives, and write the call-path profile of "
                    "the trace with Scalasca's wait-state metrics below time (Late Sender, Wait at Barrier, Wait at "
                    "N x N, Late Broadcast, Early Reduce), each on the call path and location that waited. Prints "
                    "per pattern its total time and where it is largest. Inconsistent traces (unmatched messages, "
                    "collectives missing members) fail without writing a file.",
        epilog="example:\n  cubescale analyze traces.otf2 -o scout.cubex",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace", help="OTF2 anchor file (traces.otf2)")
    p.add_argument("-o", "--output", required=True, help=".cubex report to write")
    p.add_argument("--compress", action="store_true", help="zlib-compress the rows")
    p.set_defaults(run=run_analyze)


def run_analyze(args) -> int:
    from ..analyze import analyze, summary

    start = time.perf_counter()
    report = analyze(args.trace, args.output, compress=args.compress)
    print(f"{os.path.basename(args.trace)} -> {os.path.basename(args.output)}: {len(report.metrics)} metrics, "
          f"{report.shape[0]} call paths, {report.shape[1]} locations ({time.perf_counter() - start:.2f} s)")
    print(summary(report))
    return 0
