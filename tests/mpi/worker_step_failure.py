"""A step of the replay that fails on one rank only (it raises MemoryError there, as a full
memory would): every rank must raise that rank's error, none may wait in a collective for it,
and no report is written. Rank 0 writes a ring trace whose clocks the correction moves; for
each step, every rank runs the analysis with --time-correct and rank 0 prints one JSON line:
the step, the failing rank, each rank's exception (type and text), and whether the report
exists."""

from __future__ import annotations

import json
import os
import sys

from mpi4py import MPI

import cubescale
from cubescale import testing
from cubescale._core import analysis as core
from cubescale.parallel import analysis as replay_module

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch import run_worker  # noqa: E402

# (where, name, calls that succeed before it fails, the failing rank): "replay" a method of the
# core's Replay, "core" a function of _core.analysis, "module" a name in parallel.analysis. The
# correction's round steps fail in a later round, while other ranks are in that round's
# collectives; the machine is built on rank 0 only.
STEPS = [("replay", "take_members", 0, 1), ("replay", "correct_round", 3, 1), ("replay", "take_values", 3, 1),
         ("replay", "pack_collectives", 0, 1), ("replay", "nonblocking_counts", 0, 1),
         ("replay", "pack_nonblocking", 0, 1), ("replay", "present_complete", 0, 1), ("replay", "local_time", 0, 1),
         ("core", "impact_costs", 0, 1), ("replay", "statistics", 0, 1), ("module", "KnownMachine", 0, 0)]


class Failing:
    """``real`` (a Replay or a module), whose ``step`` raises MemoryError after ``calls`` calls
    on rank ``rank``."""

    def __init__(self, real, step: str, calls: int, rank: int):
        self._real, self._step, self._calls, self._rank = real, step, calls, rank

    def __getattr__(self, name: str):
        attr = getattr(self._real, name)
        if name != self._step or MPI.COMM_WORLD.rank != self._rank:
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
    real_replay = core.Replay
    for where, step, calls, rank in STEPS:
        host = {"core": core, "module": replay_module}.get(where)
        if host is None:
            core.Replay = lambda *a, step=step, calls=calls, rank=rank, **k: Failing(real_replay(*a, **k), step, calls, rank)
        else:
            real = getattr(host, step)
            setattr(host, step, getattr(Failing(host, step, calls, rank), step))
        output = os.path.join(folder, f"{step}.cubex")
        try:
            cubescale.analyze(os.path.join(folder, "ring.otf2"), output, time_correct=True, comm=comm)
            raised = None
        except Exception as e:  # noqa: BLE001 - reported to the test
            raised = [type(e).__name__, str(e)]
        finally:
            core.Replay = real_replay
            if host is not None:
                setattr(host, step, real)
        everyone = comm.gather(raised, root=0)
        if comm.rank == 0:
            print(json.dumps({"step": step, "rank": rank, "raised": everyone, "written": os.path.exists(output)}),
                  flush=True)
    return 0


if __name__ == "__main__":
    run_worker(main)
