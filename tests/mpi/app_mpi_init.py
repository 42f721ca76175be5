"""An mpi4py program that starts MPI itself, for `cubescale run` (tests/mpi/
test_measure_mpi_init_mpi.py): "init_thread" / "init" set mpi4py.rc.initialize = False and call
MPI.Init_thread(THREAD_SERIALIZED) / MPI.Init(); "funneled" sets rc.thread_level and lets
mpi4py's import initialize MPI. Each rank prints its thread level and an allreduce."""

import sys

import mpi4py

mode = sys.argv[1]
if mode == "funneled":
    mpi4py.rc.thread_level = "funneled"
else:
    mpi4py.rc.initialize = False
from mpi4py import MPI  # noqa: E402 - after the rc settings, as mpi4py wants them

if mode == "init_thread":
    MPI.Init_thread(MPI.THREAD_SERIALIZED)
elif mode == "init":
    MPI.Init()
comm = MPI.COMM_WORLD
total = comm.allreduce(comm.rank)
print(f"rank {comm.rank} level {MPI.Query_thread()} total {total}", flush=True)
if mode != "funneled":
    MPI.Finalize()
