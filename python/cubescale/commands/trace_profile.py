"""``cubescale trace-profile``: the call-path profile (``.cubex``) of an OTF2 trace, on one
process or over the ranks of ``mpirun``.

Example
-------
>>> import os, tempfile
>>> from cubescale.cli import main
>>> from cubescale.examples import trace_path
>>> out = os.path.join(tempfile.mkdtemp(), "profile.cubex")
>>> main(["trace-profile", trace_path(), "-o", out])  # doctest: +ELLIPSIS
traces.otf2 -> profile.cubex: 8 metrics, 6 call paths, 4 locations (1448 events...)
0
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ..parallel._mpi import launched_by_mpirun
from ._shared import check_trace_command, communicator, progress_option, status_line


def add_parser(subparsers) -> None:
    """Register the ``trace-profile`` subcommand."""
    p = subparsers.add_parser(
        "trace-profile", help="convert an OTF2 trace into the call-path profile (.cubex) of the same run",
        description="Read an OTF2 trace (Score-P) and write the call-path profile Score-P would have written: visits, "
                    "time, min/max time, bytes sent/received and accumulated counters (PAPI) per call path and "
                    "location. Under mpirun every rank reads a contiguous share of the processes (location groups) "
                    "and rank 0 writes the collated report; the file is the same for any number of ranks.",
        epilog="examples:\n  cubescale trace-profile traces.otf2 -o profile.cubex\n"
               "  mpirun -n 8 python -m cubescale trace-profile traces.otf2 -o profile.cubex",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace", help="OTF2 anchor file (traces.otf2) or an experiment directory holding it")
    p.add_argument("-o", "--output", required=True, help=".cubex report to write")
    p.add_argument("--compress", action="store_true", help="zlib-compress the rows")
    p.add_argument("--serial", action="store_true", help="one process without MPI, even when mpi4py is there")
    p.add_argument("--threads", choices=("sum", "set", "key", "calltree", "value"),
                   help="aggregate each process's threads in the written report (see `cubescale threads`)")
    progress_option(p)
    p.set_defaults(run=run_trace_profile, prepare=prepare_trace_profile, every_rank=True)


def prepare_trace_profile(args) -> None:
    """The trace's anchor (an experiment directory resolved); the output is none of its files."""
    check_trace_command(communicator(serial=args.serial), args, args.output)


def run_trace_profile(args) -> int:
    start = time.perf_counter()
    parallel = launched_by_mpirun() and not args.serial
    comm = communicator(serial=not parallel)
    parallel = parallel and comm.size > 1  # one rank reads alone, as without mpirun (the same file)
    shown = status_line(args.progress, comm.rank)
    try:
        if parallel:
            from ..parallel.trace import profile_trace

            stats = profile_trace(comm, args.trace, args.output, compress=args.compress,
                                  progress=(lambda text: shown(f"cubescale trace-profile: {text}")) if shown else None)
            if comm.rank != 0:
                return 0
            shape = stats["shape"]
            metrics, events, unclosed = stats["metrics"], stats["events"], stats["unclosed_frames"]
        else:
            from .. import trace
            from .._polled import reading_status, run_polled

            opened = trace.open(args.trace)
            status = reading_status(opened, int(opened.announced_events().sum()))
            local, read = run_polled(opened.local_profile, status,
                                     (lambda text: shown(f"cubescale trace-profile: {text}")) if shown else None)
            if shown:
                shown(f"cubescale trace-profile: writing {os.path.basename(args.output)}")
            report = opened._report(local, args.output, args.compress)
            shape, metrics, events = report.shape, len(report.metrics), int(read["events"])
            unclosed = int(read["unclosed_frames"])
    finally:  # also after Ctrl-C or an error: the status line does not stay before the prompt
        if shown:
            shown("")
    if args.threads:
        # A rank here holds several processes of the trace, and the machine comes from the
        # trace's definitions: the written report is aggregated by rank 0, process by process.
        from .. import report as cube

        aggregated = cube.open(args.output).aggregate_threads(args.threads)
        cube.write(aggregated, args.output, compress=args.compress)
        shape, metrics = aggregated.shape, len(aggregated.metrics)
    if unclosed:  # a run cut short (crashed, killed): its numbers end where its events end
        print(f"cubescale trace-profile: warning: {unclosed:,} regions were still open at the end of their "
              "locations' events (a run cut short?): closed at each location's last event, as Score-P does",
              file=sys.stderr)
    print(f"{os.path.basename(args.trace)} -> {os.path.basename(args.output)}: {metrics} metrics, "
          f"{shape[0]} call paths, {shape[1]} locations ({events} events, {time.perf_counter() - start:.2f} s)")
    return 0
