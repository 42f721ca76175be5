"""The analysis' progress line under mpirun: rank 0 writes a ring trace whose clocks need the
correction, every rank analyzes it with --time-correct, rank 0 prints the status lines it was
given as one JSON line (the other ranks are given none)."""

from __future__ import annotations

import json
import os
import sys

from mpi4py import MPI

import cubescale
from cubescale import testing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch import run_worker  # noqa: E402


def main(argv: list[str]) -> int:
    comm, folder = MPI.COMM_WORLD, argv[0]
    if comm.rank == 0:
        testing.write_ring_trace(folder, "ring", processes=4, iterations=2000, counters=False)
    comm.Barrier()
    lines: list[str] = []
    cubescale.analyze(os.path.join(folder, "ring.otf2"), os.path.join(folder, "ring.cubex"), time_correct=True,
                      comm=comm, progress=lines.append)
    everyone = comm.gather(len(lines) if comm.rank else lines, root=0)
    if comm.rank == 0:
        print(json.dumps({"lines": everyone[0], "others": everyone[1:]}), flush=True)
    return 0


if __name__ == "__main__":
    run_worker(main)
