"""Every MPI rank times its own phases, and one .cubex of the whole run comes out.

    mpirun -n 4 python examples/collate_demo.py [out.cubex]

Each rank runs a small stencil-like loop with an imbalance (higher ranks compute longer),
keeps its own timers per call path and thread in NumPy arrays, turns them into a
cubescale.profile.LocalProfile and calls cubescale.parallel.write_report: unification of the
ranks' call trees, the global system tree, and collation into one report written by rank 0.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from mpi4py import MPI

import cubescale
from cubescale.parallel import write_report
from cubescale.profile import LocalProfile, Metric, Region

REGIONS = ["main", "init", "iterate", "compute", "MPI_Allreduce", "finalize"]
THREADS = 2


def measure(comm) -> LocalProfile:
    """Run the 'application' and keep exclusive time and visits per (call path, thread)."""
    # Call tree (preorder): main > init, main > iterate > {compute, MPI_Allreduce}, main > finalize.
    parents = [-1, 0, 0, 2, 2, 0]
    regions = [0, 1, 2, 3, 4, 5]
    time_ = np.zeros((len(parents), THREADS))
    visits = np.zeros((len(parents), THREADS), dtype=np.uint64)

    def timed(cnode, fn, thread=0):
        start = time.perf_counter()
        fn()
        time_[cnode, thread] += time.perf_counter() - start
        visits[cnode, thread] += 1

    work = np.random.default_rng(comm.rank).random(20000)
    timed(1, lambda: work.sort())
    for _ in range(10):
        visits[2, 0] += 1
        for t in range(THREADS):  # the "threads" of a rank, run in turn here
            timed(3, lambda n=1 + comm.rank + t: [np.sqrt(work).sum() for _ in range(n)], thread=t)
        timed(4, lambda: comm.allreduce(float(work[0])))
    timed(5, lambda: None)
    visits[0, 0] = 1
    return LocalProfile(
        [Metric(name="time", unit="sec", display_name="Time"),
         Metric(name="visits", unit="occ", dtype="UINT64", display_name="Visits")],
        [Region(name=n, paradigm="mpi" if n.startswith("MPI_") else "user") for n in REGIONS],
        parents, regions, [("Master thread" if t == 0 else f"thread {t}", "thread") for t in range(THREADS)],
        [time_, visits])


def main(argv: list[str]) -> int:
    comm = MPI.COMM_WORLD
    out = argv[0] if argv else "collate_demo.cubex"
    costs = write_report(comm, measure(comm), out)
    if comm.rank == 0:
        report = cubescale.open(out)
        print(report)
        print(report.call_tree_text("time", max_depth=3))
        print(f"unified in {costs['unify']['rounds']} rounds, collated in {costs['collate']['seconds']:.3f} s; "
              f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
