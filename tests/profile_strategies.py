"""Random local profiles for the unification and collation tests (in process and under
mpirun): deterministic from a seed and a rank."""

from __future__ import annotations

import numpy as np

import cubescale
from cubescale.profile import LocalProfile, Metric, Region

ALL_DTYPES = [("time", "DOUBLE", "EXCLUSIVE"), ("visits", "UINT64", "EXCLUSIVE"), ("bytes", "INT64", "INCLUSIVE"),
              ("min_time", "MINDOUBLE", "EXCLUSIVE"), ("max_time", "MAXDOUBLE", "EXCLUSIVE"),
              ("small", "UINT8", "EXCLUSIVE"), ("tuple", "TAU_ATOMIC", "EXCLUSIVE"), ("pair", "NDOUBLES(2)", "EXCLUSIVE")]
PYCUBEXR_DTYPES = ALL_DTYPES[:5]
REGIONS = ["main", "init", "solve", "MPI_Send", "MPI_Recv", "exchange", "compute", "finalize"]


def random_profile(seed: int, rank: int, dtypes, conflict: bool = False) -> LocalProfile:
    rng = np.random.default_rng([seed, rank])
    # A random call tree over the region pool: ranks see different trees; rank 2 sees nothing.
    parents, regions, params = [], [], []
    if rank != 2:
        for _ in range(int(rng.integers(1, 14))):
            n = len(parents)
            parent = -1 if n == 0 else int(rng.integers(0, n))  # parents come first
            taken = {(regions[k], tuple(params[k].items())) for k in range(n) if parents[k] == parent}
            region = 0 if n == 0 else int(rng.integers(0, len(REGIONS)))  # one root, main, as real profiles
            p = {"n": int(rng.integers(0, 2))} if rng.random() < 0.3 and n else {}
            if (region, tuple(p.items())) in taken:
                continue
            parents.append(parent)
            regions.append(region)
            params.append(p)
    threads = 1 + rank % 3  # uneven thread counts
    shape = (len(parents), threads)
    metrics, values = [], []
    for name, dtype, kind in dtypes:
        if conflict and rank == 1 and name == "visits":
            dtype = "DOUBLE"
        metrics.append(Metric(name=name, dtype=dtype, kind=kind))
        element, trailing = cubescale.dtypes.numpy_type(dtype)
        raw = rng.integers(0, 256, size=shape + trailing + (element.itemsize,), dtype=np.uint8)
        visited = rng.random(shape) < 0.7  # threads that did not visit a call path have zeros
        raw[~visited] = 0
        values.append(raw.view(element).reshape(shape + trailing) if not element.names
                      else raw.reshape(shape + (element.itemsize,)).view(element).reshape(shape))
    return LocalProfile(metrics, [Region(name=n, module="app.c") for n in REGIONS], parents, regions,
                        [("Master thread" if t == 0 else f"OMP thread {t}", "thread") for t in range(threads)],
                        values, cnode_parameters=params, host=f"node{rank // 4}")


