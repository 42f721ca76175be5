"""An mpi4py program with known message sizes, for `cubescale run` under mpirun."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size


def ring(n):
    data = np.arange(n, dtype=np.float64)
    got = np.empty(n, dtype=np.float64)
    comm.Sendrecv(data, dest=right, recvbuf=got, source=left)
    return got


def imbalanced(rank):
    return sum(range(200000 * (rank + 1)))  # the last rank works longest, by milliseconds


for _ in range(3):
    ring(1000)  # 8000 bytes each way
imbalanced(comm.rank)
if comm.rank == 0:
    comm.Send(np.zeros(250, dtype=np.int32), dest=comm.size - 1)  # 1000 bytes
elif comm.rank == comm.size - 1:
    buf = np.empty(250, dtype=np.int32)
    comm.Recv(buf, source=0)
total = comm.allreduce(comm.rank)
