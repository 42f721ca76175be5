"""``cubescale analyze``: the wait-state analysis of an OTF2 trace (Scalasca's patterns) into
one ``.cubex`` with the trace's call-path profile, and a short summary per pattern.

Example
-------
>>> import os, tempfile
>>> from cubescale.cli import main
>>> from cubescale import examples
>>> out = os.path.join(tempfile.mkdtemp(), "scout.cubex")
>>> main(["analyze", examples.trace_path(), "-o", out])  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
traces.otf2 -> scout.cubex: ... metrics, 6 call paths, 4 locations (...)
pattern             total [s]  most severe call path (s)                 most severe process (s)
mpi_latesender      1.251e-06  main/solve/MPI_Recv (1.251e-06)       MPI Rank 0 (9.13e-07)
mpi_latereceiver    9.5e-08    main/solve/MPI_Send (9.5e-08)         MPI Rank 0 (8.3e-08)
mpi_wait_nxn        3.219e-06  main/solve/MPI_Allreduce (3.219e-06)  MPI Rank 0 (1.125e-06)
mpi_nxn_completion  1.269e-06  main/solve/MPI_Allreduce (1.269e-06)  MPI Rank 3 (1.131e-06)
no wait time in mpi_latesender_wo, mpi_lswo_different, mpi_lswo_same
clock condition violations: 77 (MPI Rank 0: 37, MPI Rank 1: 22, MPI Rank 2: 18)
most severe instances (as scout's trace.stat):
...
0
>>> main(["analyze", examples.trace_path(), "-o", out, "--root-cause"])  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
traces.otf2 -> scout.cubex: ...
no wait time in mpi_latesender_wo, mpi_lswo_different, mpi_lswo_same
root cause          total [s]  most severe call path (s)                   most severe process (s)
delay_latesender    1.098e-06  main/solve/MPI_Allreduce (5.09081e-07)  MPI Rank 3 (9.13e-07)
delay_latereceiver  9.5e-08    main/solve/MPI_Send (5.65662e-08)       MPI Rank 1 (8.3e-08)
delay_n2n           3.219e-06  main/solve/MPI_Allreduce (1.09389e-06)  MPI Rank 3 (3.219e-06)
clock condition violations: 77 ...
0
>>> main(["analyze", examples.trace_path(), "-o", out, "--time-correct"])  # doctest: +ELLIPSIS
traces.otf2 -> scout.cubex: ...
clock condition violations: 0; as recorded 22 point to point, 55 collective, removed by the time correction (... events moved forward)
...
0
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

from ._shared import finite_at_least_zero, positive_count, progress_option

_SECONDS = finite_at_least_zero("seconds: a number")  # latencies: finite, at least 0


def add_parser(subparsers) -> None:
    """Register the ``analyze`` subcommand."""
    p = subparsers.add_parser(
        "analyze", help="find MPI and OpenMP wait states and the critical path in an OTF2 trace (Scalasca's "
                        "patterns) and write them as .cubex",
        description="Read an OTF2 trace (under mpirun: each rank a share of its processes, the same report), "
                    "match its MPI messages and collectives, and write the call-path profile of "
                    "the trace with Scalasca's wait-state metrics below time (Late Sender, Late Receiver, Wait at "
                    "Barrier, Wait at N x N, Late Broadcast, Early Reduce, also on non-blocking collectives; OpenMP "
                    "and POSIX threads barrier waits and lock contention), each on the call path and location that "
                    "waited, the critical path and its impact metrics, and clock_violations. Prints per pattern its total time "
                    "and where it is largest, the clock-condition violations per process and the most severe "
                    "instances (as scout's trace.stat); with --root-cause (one process) also scout's delay costs and "
                    "wait-state propagation, and which call path and process made others wait most. Inconsistent traces "
                    "(unmatched messages, collectives missing members) fail without writing a file.",
        epilog="examples:\n  cubescale analyze traces.otf2 -o scout.cubex\n"
               "  cubescale analyze traces.otf2 -o scout.cubex --time-correct --min-latency 1e-6\n"
               "  cubescale analyze traces.otf2 -o scout.cubex --root-cause\n"
               "  mpirun -n 4 python -m cubescale analyze traces.otf2 -o scout.cubex",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace", help="OTF2 anchor file (traces.otf2) or the experiment directory holding it")
    p.add_argument("-o", "--output", required=True, help=".cubex report to write")
    p.add_argument("--compress", action="store_true", help="zlib-compress the rows")
    p.add_argument("--threads", type=positive_count, default=None, metavar="N",
                   help="threads per process: each reads a share of the trace's processes, and in one process the "
                        "steps after the reading cut their processes into as many chunks (under mpirun the "
                        "collectives' steps; default: the cores this process may run on; under mpirun each rank's "
                        "cores shared among the ranks on its node, so one per rank with Open MPI's binding to cores; "
                        "each thread reads whole processes, so a rank holding one process reads on one; the report "
                        "is the same for any number)")
    p.add_argument("--time-correct", action="store_true",
                   help="move receives and collective leaves forward past the events they depend on before the "
                        "analysis (a controlled logical clock: removes clock-condition violations)")
    p.add_argument("--min-latency", type=_SECONDS, default=0.0, metavar="SECONDS",
                   help="the clock condition's least latency (default 0): a receive that ends less than this after "
                        "its send began violates it, and --time-correct moves it that far; the same for collectives "
                        "and, unless --min-thread-latency says otherwise, OpenMP threads")
    p.add_argument("--min-thread-latency", type=_SECONDS, default=None, metavar="SECONDS",
                   help="the clock condition's least latency between OpenMP threads (default: --min-latency): a "
                        "team begin before its fork plus this, a join before the team's ends plus this, a barrier "
                        "left before its last enter plus this violate it (Scalasca's clc takes a shared-memory "
                        "latency below its message latencies: e.g. --min-latency 1e-6 --min-thread-latency 1e-7)")
    progress_option(p)
    p.add_argument("--root-cause", action="store_true",
                   help="add scout's root-cause metrics: the delay costs (which time of which call path on the "
                        "delaying process caused the waits) and the wait-state propagation (one process only)")
    p.set_defaults(run=run_analyze, prepare=check_analyze, every_rank=True)


def check_analyze(args) -> None:
    """Before any reading, the same verdict on every rank: the trace (an experiment directory
    resolved to its ``traces.otf2``), an output that is none of the trace's files and can be
    written (rank 0 writes it, so rank 0 checks it and tells the others), the root-cause
    analysis in one process.

    Example
    -------
    >>> import argparse, os, tempfile
    >>> from cubescale import examples
    >>> args = argparse.Namespace(trace=os.path.dirname(examples.trace_path()), root_cause=False,
    ...                           output=os.path.join(tempfile.mkdtemp(), "scout.cubex"))
    >>> check_analyze(args)
    >>> os.path.basename(args.trace)
    'traces.otf2'
    """
    from ._shared import check_trace_command, communicator

    comm = communicator()
    check_trace_command(comm, args, args.output)
    if args.root_cause and comm.size > 1:
        raise ValueError("--root-cause needs one process: run cubescale analyze without mpirun")


def run_analyze(args) -> int:
    from ..analysis import analyze, summary
    from ._shared import communicator, status_line

    start = time.perf_counter()
    comm = communicator()
    # Under mpirun every rank analyzes a share of the trace's processes (the same file for any
    # number of ranks); alone, the one-process path needs no MPI.
    # A status line on a terminal (rank 0's under mpirun): the events read, then the steps.
    # mpirun passes its ranks' stderr through a pipe, and gives their stdout a terminal even
    # when its own goes to a file: there, only with --progress.
    shown = status_line(args.progress, comm.rank)

    def warned(message, category, filename, lineno, file=None, line=None) -> None:
        # A warning (the memory projection) as one line of its own, also in a batch job's log.
        if shown:
            shown("")
        print(f"cubescale analyze: warning: {message}", file=sys.stderr, flush=True)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", RuntimeWarning)
            warnings.showwarning = warned
            report = analyze(args.trace, args.output, compress=args.compress, time_correct=args.time_correct,
                             min_latency=args.min_latency, min_thread_latency=args.min_thread_latency,
                             comm=comm if comm.size > 1 else None, threads=args.threads,
                             root_cause=args.root_cause,
                             progress=(lambda text: shown(f"cubescale analyze: {text}")) if shown else None)
    finally:  # also after Ctrl-C or an error: the status line does not stay before the prompt
        if shown:
            shown("")
    if report is None:  # under mpirun, the ranks other than 0
        return 0
    print(f"{os.path.basename(args.trace)} -> {os.path.basename(args.output)}: {len(report.metrics)} metrics, "
          f"{report.shape[0]} call paths, {report.shape[1]} locations ({time.perf_counter() - start:.2f} s)")
    print(summary(report))
    return 0
