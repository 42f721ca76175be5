"""A step of the replay that fails on one rank only (rank 1's Replay raises MemoryError in the
named step, as a full memory would): every rank must raise that rank's error, none may wait in
a collective for it, and no report is written. Rank 0 writes a ring trace whose clocks the
correction moves; for each step, every rank runs the analysis with --time-correct and rank 0
prints one JSON line: the step and each rank's exception (type and text), and whether the
report exists."""

from __future__ import annotations

import json
import os
import sys

from mpi4py import MPI

import cubescale
from cubescale import testing
from cubescale._core import analysis as core

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch import run_worker  # noqa: E402

# Each step and how many of its calls succeed before it fails (the correction's round steps
# fail in a later round, while other ranks are in that round's collectives).
STEPS = {"take_members": 0, "correct_round": 3, "take_values": 3, "pack_collectives": 0, "pack_nonblocking": 0}


class FailingReplay:
    """The real Replay, whose ``step`` raises MemoryError after ``calls`` calls on rank 1."""

    def __init__(self, real, step: str, calls: int):
        self._real, self._step, self._calls = real, step, calls

    def __getattr__(self, name: str):
        attr = getattr(self._real, name)
        if name != self._step or MPI.COMM_WORLD.rank != 1:
            return attr

        def failing(*args, **kwargs):
            if self._calls == 0:
                raise MemoryError(f"injected: no memory for {name}")
            self._calls -= 1
            return attr(*args, **kwargs)
        return failing


def main(argv: list[str]) -> int:
    comm, folder = MPI.COMM_WORLD, argv[0]
    if comm.rank == 0:
        testing.write_ring_trace(folder, "ring", processes=4, iterations=200, counters=False)
    comm.Barrier()
    real = core.Replay
    for step, calls in STEPS.items():
        core.Replay = lambda *a, step=step, calls=calls, **k: FailingReplay(real(*a, **k), step, calls)
        output = os.path.join(folder, f"{step}.cubex")
        try:
            cubescale.analyze(os.path.join(folder, "ring.otf2"), output, time_correct=True, comm=comm)
            raised = None
        except Exception as e:  # noqa: BLE001 - reported to the test
            raised = [type(e).__name__, str(e)]
        finally:
            core.Replay = real
        everyone = comm.gather(raised, root=0)
        if comm.rank == 0:
            print(json.dumps({"step": step, "raised": everyone, "written": os.path.exists(output)}), flush=True)
    return 0


if __name__ == "__main__":
    run_worker(main)
