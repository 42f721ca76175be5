"""An mpi4py program whose every call has a known message size, for `cubescale run`: each
call sits in its own function, so the test finds its bytes by call path. Receive buffers are
larger than the messages (the message counts, not the buffer); non-blocking receives count
at the wait that completes them."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
right, left = (rank + 1) % size, (rank - 1) % size


def blocking():
    comm.Send(np.zeros(100, dtype=np.float64), dest=right, tag=1)           # 800 B
    comm.Recv(np.empty(1000, dtype=np.float64), source=left, tag=1)         # 800 B of a larger buffer


def typed():
    buf = np.zeros(50, dtype=np.int32)
    comm.Sendrecv([buf, 10, MPI.INT], dest=right, recvbuf=np.empty(50, dtype=np.int32), source=left)  # 40 B each way


def objects():
    comm.send({"rank": rank, "data": list(range(rank + 5))}, dest=right, tag=2)
    return comm.recv(source=left, tag=2)


def nonblocking():
    out = np.ones(64, dtype=np.float32)                                      # 256 B
    requests = [comm.Isend(out, dest=right, tag=3), comm.Irecv(np.empty(128, dtype=np.float32), source=left, tag=3)]
    MPI.Request.Waitall(requests)


def nonblocking_objects():
    request = comm.irecv(source=left, tag=4)
    comm.isend("x" * (100 + rank), dest=right, tag=4).wait()
    return request.wait()


def collectives():
    comm.Allreduce(np.ones(16), np.empty(16))                               # 128 B x size each way
    comm.Bcast(np.ones(32, dtype=np.uint8), root=0)                         # root 32 B x size out, all 32 in
    counts = [r + 1 for r in range(size)]
    comm.Allgatherv(np.ones(rank + 1), [np.empty(sum(counts)), counts, MPI.DOUBLE])  # 8 (r+1) out, 8 sum in
    comm.Barrier()
    comm.Iallreduce(np.ones(8), np.empty(8)).Wait()                         # 64 B each way, non-blocking
    comm.Iallgatherv(np.ones(rank + 1), [np.empty(sum(counts)), counts, MPI.DOUBLE]).Wait()  # as Allgatherv


def derived():
    cart = comm.Create_cart([size], periods=[True])                          # a traced Cartcomm
    cart.Allreduce(np.ones(2), np.empty(2))                                  # 16 B each way
    half = comm.Split(color=rank % 2, key=rank)
    half.Barrier()
    return cart, half


def rooted():
    block = np.arange(4 * size, dtype=np.float64)
    comm.Scatter([block, 4, MPI.DOUBLE] if rank == 0 else None, np.empty(4), root=0)  # root 32 B x size; 32 in
    comm.Reduce(np.ones(3), np.empty(3) if rank == 0 else None, root=0)     # 24 out; root 24 in
    return comm.gather(rank, root=0)


def completions():
    requests = [comm.Irecv(np.empty(8, dtype=np.int64), source=left, tag=5)]
    comm.Send(np.zeros(3, dtype=np.int64), dest=right, tag=5)                # 24 B
    index = MPI.Request.Waitany(requests)
    request = comm.Irecv(np.empty(2, dtype=np.int64), source=left, tag=6)
    comm.Send(np.zeros(2, dtype=np.int64), dest=right, tag=6)                # 16 B
    while not MPI.Request.Testall([request]):
        pass
    return index


blocking()
typed()
objects()
nonblocking()
nonblocking_objects()
collectives()
derived()
rooted()
completions()
MPI.Finalize()  # the report is still written (Finalize waits for it)
