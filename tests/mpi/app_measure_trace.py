"""An mpi4py program with known messages and collectives, for `cubescale run --trace` under
mpirun (tests/mpi/test_measure_trace_mpi.py). With "raise", every rank raises at the end;
with "abort", the last rank calls MPI_Abort."""

import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
right, left = (rank + 1) % size, (rank - 1) % size


def ring():
    got = np.empty(1000, dtype=np.float64)
    comm.Sendrecv(np.arange(1000, dtype=np.float64), dest=right, sendtag=3, recvbuf=got, source=left, recvtag=3)


def nonblocking():
    got = np.empty(100, dtype=np.int32)
    receive = comm.Irecv(got, source=left, tag=5)
    send = comm.Isend(np.zeros(100, dtype=np.int32), dest=right, tag=5)
    MPI.Request.Waitall([receive, send])


ring()
nonblocking()
if rank == 0:
    comm.send({"a": 1}, dest=size - 1, tag=9)
elif rank == size - 1:
    comm.recv(source=0, tag=9)
comm.Bcast(np.zeros(10), root=1)
comm.Allreduce(np.ones(4), np.empty(4))
comm.Barrier()
half = comm.Split(rank % 2)
half.allreduce(rank)
comm.Iallreduce(np.ones(2), np.empty(2)).Wait()  # 16 bytes each way, completed in MPI_Wait
if sys.argv[1:] == ["raise"]:
    raise RuntimeError(f"rank {rank} failed")
if sys.argv[1:] == ["abort"] and rank == size - 1:
    comm.Abort(3)
comm.Barrier()
