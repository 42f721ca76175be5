"""A 2-D Jacobi stencil solver over MPI ranks, with load imbalance on purpose.

The grid's rows are split over the ranks, but not evenly: the last rank gets 60 % more rows
than the first (``imbalance``), so the others wait for it in the halo exchange and in the
residual's ``allreduce``. Within a rank, a team of four threads updates the rows, thread k
always its own chunk, of uneven size (1 : 1 : 2 : 4): "worker 3" works as long as the others
together while they wait at the team's barrier. Run it measured:

    mpirun -n 4 python -m cubescale run -o demo.cubex cubescale/demo/stencil.py

With ``--serial`` it runs as one process without MPI (cubescale's one-rank stand-in for
mpi4py), as ``cubescale demo`` does where there is no mpirun.
"""

from __future__ import annotations

import argparse
import threading
from typing import Any

import numpy as np

MPI: Any = None  # mpi4py.MPI, or cubescale's stand-in with --serial (set by main)

CHUNK_WEIGHTS = (1, 1, 2, 4)  # rows per thread, relative: the last thread gets half the rows


def rows_of(rank: int, size: int, total: int, imbalance: float) -> int:
    """Rows of one rank: growing linearly from the first to the last rank by `imbalance`."""
    weights = [1.0 + imbalance * r / max(size - 1, 1) for r in range(size)]
    return max(4, int(round(total * weights[rank] / sum(weights))))


def exchange_halos(comm, u: np.ndarray) -> None:
    """The boundary rows to the neighbours (MPI_Sendrecv both ways)."""
    up, down = comm.rank - 1, comm.rank + 1
    if up >= 0:
        comm.Sendrecv(u[1], dest=up, recvbuf=u[0], source=up)
    if down < comm.size:
        comm.Sendrecv(u[-2], dest=down, recvbuf=u[-1], source=down)


def update_chunk(u: np.ndarray, new: np.ndarray, first: int, last: int) -> float:
    """One Jacobi sweep over rows first..last-1 (interior); returns the squared change."""
    block = 0.25 * (u[first - 1:last - 1, 1:-1] + u[first + 1:last + 1, 1:-1] + u[first:last, :-2] + u[first:last, 2:])
    change = float(np.sum((block - u[first:last, 1:-1]) ** 2))
    new[first:last, 1:-1] = block
    return change


class Team:
    """Worker threads that each sweep their own chunk of rows every iteration (as an OpenMP
    team with a static schedule): two barriers per sweep, the first to start, the second to
    wait until all are done."""

    def __init__(self, size: int):
        self.start, self.done = threading.Barrier(size + 1), threading.Barrier(size + 1)
        self.changes = [0.0] * size
        self.job: tuple | None = None
        self.workers = [threading.Thread(target=self._work, args=(k,), name=f"worker {k}", daemon=True)
                        for k in range(size)]
        for w in self.workers:
            w.start()

    def _work(self, k: int) -> None:
        while True:
            self.start.wait()
            if self.job is None:
                return
            u, new = self.job
            rows = u.shape[0] - 2
            bounds = np.cumsum([0, *CHUNK_WEIGHTS]) * rows // sum(CHUNK_WEIGHTS) + 1
            self.changes[k] = update_chunk(u, new, int(bounds[k]), int(bounds[k + 1]))
            self.done.wait()

    def sweep(self, u: np.ndarray, new: np.ndarray) -> float:
        """All interior rows, each thread its chunk; returns the squared change."""
        self.job = (u, new)
        self.start.wait()
        self.done.wait()
        return sum(self.changes)

    def close(self) -> None:
        self.job = None
        self.start.wait()
        for w in self.workers:
            w.join()


def residual(comm, change: float) -> float:
    """The global change of one iteration (MPI_Allreduce)."""
    return comm.allreduce(change, op=MPI.SUM) ** 0.5


def solve(comm, rows: int, columns: int, iterations: int) -> float:
    u = np.zeros((rows + 2, columns))
    if comm.rank == 0:
        u[0, :] = 1.0  # a hot top edge
    new = u.copy()
    norm = 0.0
    team = Team(len(CHUNK_WEIGHTS))
    try:
        for _ in range(iterations):
            exchange_halos(comm, u)
            norm = residual(comm, team.sweep(u, new))
            u, new = new, u
            if comm.rank == 0:
                u[0, :] = 1.0
    finally:
        team.close()
    return norm


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1600, help="grid rows over all ranks")
    parser.add_argument("--columns", type=int, default=2000)
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--imbalance", type=float, default=0.6, help="the last rank's extra share of rows")
    parser.add_argument("--serial", action="store_true", help="one process without MPI")
    args = parser.parse_args(argv)
    global MPI
    if args.serial:
        from cubescale.parallel import serial

        MPI = serial.MPI
    else:
        from mpi4py import MPI as mpi

        MPI = mpi
    comm = MPI.COMM_WORLD
    rows = rows_of(comm.rank, comm.size, args.rows, args.imbalance)
    config = comm.bcast({"columns": args.columns, "iterations": args.iterations} if comm.rank == 0 else None, root=0)
    norm = solve(comm, rows, config["columns"], config["iterations"])
    if comm.rank == 0:
        print(f"stencil: {comm.size} rank{'s' if comm.size != 1 else ''}, residual {norm:.3e}")


if __name__ == "__main__":
    main()
