"""Every collective mpi4py offers, once each, with a 4096-byte block (512 float64) per rank
where a block is one, for `cubescale run --trace` under mpirun
(tests/mpi/test_measure_collective_bytes_mpi.py): in-place and root variants included."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
n, me = comm.size, comm.rank
B = 512  # float64 per block: 4096 bytes


def blocks(count=1):
    return np.full(count * B, float(me))


comm.Bcast(blocks(), root=1)
comm.Reduce(blocks(), blocks() if me == 0 else None, root=0)
comm.Reduce(MPI.IN_PLACE if me == 0 else blocks(), blocks(), root=0)
comm.Allreduce(blocks(), blocks())
comm.Allreduce(MPI.IN_PLACE, blocks())
comm.Gather(blocks(), blocks(n) if me == 2 else None, root=2)
comm.Scatter(blocks(n) if me == 0 else None, blocks(), root=0)
comm.Scatter(blocks(n) if me == 0 else None, MPI.IN_PLACE if me == 0 else blocks(), root=0)
counts = [B * (r + 1) for r in range(n)]  # rank r's block: r + 1 blocks
comm.Gatherv(blocks(me + 1), [blocks(sum(counts) // B), counts, None, MPI.DOUBLE] if me == 0 else None, root=0)
comm.Scatterv([blocks(sum(counts) // B), counts, None, MPI.DOUBLE] if me == 0 else None, blocks(me + 1), root=0)
comm.Allgather(blocks(), blocks(n))
comm.Allgather(MPI.IN_PLACE, blocks(n))
comm.Allgatherv(blocks(me + 1), [blocks(sum(counts) // B), counts, None, MPI.DOUBLE])
comm.Alltoall(blocks(n), blocks(n))
even = ([B] * n, [B * r for r in range(n)])  # counts, displacements
comm.Alltoallv([blocks(n), even, MPI.DOUBLE], [blocks(n), even, MPI.DOUBLE])
comm.Reduce_scatter_block(blocks(n), blocks())
comm.Reduce_scatter(blocks(n), blocks(), [B] * n)
comm.Scan(blocks(), blocks())
comm.Exscan(blocks(), blocks())
comm.Barrier()
mine, total = blocks(), blocks()  # alive until the request completes
comm.Iallreduce(mine, total).Wait()
comm.bcast(b"x" * 1000, root=0)
comm.Barrier()
