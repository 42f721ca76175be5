"""``cubescale collate``: the per-process reports of one run unified and collated into one
``.cubex`` (the Scalasca architecture paper, section 4.3).

A C or C++ program measured with cubescale's recorder (``CUBESCALE_REGION``, the C API)
writes one report per process with ``cubescale_write(path, "MPI Rank 3")``; this command
unifies them as ``cubescale run`` does for Python programs
(:func:`cubescale.parallel.collate_reports`): under ``mpirun -n P`` with P reports, rank r
reads the r-th (file names in natural order: ``run.2`` before ``run.10``); with fewer ranks
than reports (down to one process without mpirun), each rank merges a block of them first.

Example
-------
>>> import os, tempfile
>>> import cubescale
>>> from cubescale import measure
>>> from cubescale._core import measure as _measure
>>> from cubescale.cli import main
>>> measure.start()
>>> with measure.region("solve"):
...     pass
>>> measure.stop()
>>> d = tempfile.mkdtemp()
>>> _measure.write_process_report(os.path.join(d, "run.0.cubex"), process="MPI Rank 0")
>>> main(["collate", os.path.join(d, "run.0.cubex"), "-o", os.path.join(d, "run.cubex"), "--quiet"])
0
>>> cubescale.open(os.path.join(d, "run.cubex")).locations[0].process
'MPI Rank 0'
"""

from __future__ import annotations

import argparse
import sys
import time

from ._inputs import check_output, report_path
from ._shared import check_everywhere, communicator


def add_parser(subparsers) -> None:
    """Register the ``collate`` subcommand."""
    p = subparsers.add_parser(
        "collate", help="unify one-process reports of a run (a C/C++ program's, one per rank) into one .cubex",
        description="Reads one report per process (as cubescale_write() of the C API writes them) and writes one "
                    "report of all: definitions unified, values collated, optionally threads aggregated. Under "
                    "mpirun give it up to one rank per report; without mpirun one process reads them all.",
        epilog="examples:\n  mpirun -n 4 python -m cubescale collate run.*.cubex -o run.cubex\n"
               "  cubescale collate run.*.cubex -o run.cubex --threads key",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", help="one-process reports, one per rank")
    p.add_argument("-o", "--output", required=True, help="the report to write")
    p.add_argument("--threads", choices=("sum", "set", "key", "calltree", "value"),
                   help="aggregate each process's threads before collation")
    p.add_argument("--compress", action="store_true", help="zlib-compressed rows (ZCUBEX)")
    p.add_argument("--quiet", action="store_true", help="no summary line")
    p.set_defaults(run=run_collate, prepare=prepare_collate, every_rank=True)


def prepare_collate(args) -> None:
    """Reports to read (each one process: checked when read); the output is none of them and
    can be written where rank 0 writes it; one verdict on every rank."""
    def inputs() -> None:
        args.inputs = [report_path(path) for path in args.inputs]

    check_everywhere(communicator(), inputs, lambda: check_output(args.output, args.inputs))


def run_collate(args) -> int:
    from ..parallel.collate_reports import collate_reports

    start = time.perf_counter()
    comm = communicator()
    collate_reports(comm, args.inputs, args.output, compress=args.compress, threads=args.threads)
    if comm.rank == 0 and not args.quiet:
        n = len(args.inputs)
        print(f"cubescale: collated {n} report{'s' if n != 1 else ''} into {args.output} on {comm.size} "
              f"rank{'s' if comm.size != 1 else ''} ({time.perf_counter() - start:.2f} s)", file=sys.stderr, flush=True)
    return 0
