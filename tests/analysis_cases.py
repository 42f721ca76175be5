"""Traces of the wait-state tests under mpirun (tests/mpi/test_analysis_mpi.py): synthetic
shapes with stated timings (ns), inconsistent ones, the shared MPI traces, and the non-zero
pattern values of a report in a form JSON carries."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cubescale.analysis import PATTERNS

SHARED_OTF2 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "otf2"
SHARED_MPI = ["late-sender-barrier", "ping-pong", "bcast-scorep8", "jacobi-hybrid"]

# A Late Sender chain 0 -> 1 -> 2, an imbalanced barrier, a late broadcast root, an early
# reduce root, an allreduce, a Waitall whose latest sender counts (test_analysis_waitstates.py).
CHAIN = [
    [("MPI_Send", 100, 110, [1], 0), ("MPI_Send", 200, 210, [2], 0), ("MPI_Barrier", 1000, 1600, [], 0),
     ("MPI_Bcast", 2000, 2500, [1], 0), ("MPI_Reduce", 3000, 3400, [0], 0), ("MPI_Allreduce", 4000, 4700, [], 0),
     ("MPI_Send", 5000, 5010, [2], 0)],
    [("MPI_Recv", 20, 120, [0], 0), ("MPI_Send", 130, 140, [2], 0), ("MPI_Barrier", 1500, 1650, [], 0),
     ("MPI_Bcast", 2400, 2500, [1], 0), ("MPI_Reduce", 3300, 3400, [0], 0), ("MPI_Allreduce", 4100, 4750, [], 0),
     ("MPI_Send", 5300, 5310, [2], 0)],
    [("MPI_Recv", 30, 150, [1], 0), ("MPI_Recv", 300, 310, [0], 0), ("MPI_Barrier", 1200, 1600, [], 0),
     ("MPI_Bcast", 2100, 2500, [1], 0), ("MPI_Reduce", 3200, 3400, [0], 0), ("MPI_Allreduce", 4600, 4800, [], 0),
     ("MPI_Waitall", 5100, 5400, [0, 1], 0)],
]
# pattern -> {"rank:call region": ns}
CHAIN_EXPECTED = {
    "mpi_latesender": {"1:MPI_Recv": 80, "2:MPI_Recv": 100, "2:MPI_Waitall": 200},
    "mpi_barrier_wait": {"0:MPI_Barrier": 500, "2:MPI_Barrier": 300},
    "mpi_barrier_completion": {"1:MPI_Barrier": 50},
    "mpi_latebroadcast": {"0:MPI_Bcast": 400, "2:MPI_Bcast": 300},
    "mpi_earlyreduce": {"0:MPI_Reduce": 300},
    "mpi_wait_nxn": {"0:MPI_Allreduce": 600, "1:MPI_Allreduce": 500},
    "mpi_nxn_completion": {"1:MPI_Allreduce": 50, "2:MPI_Allreduce": 100},
}

# Five ranks (so that 2, 3 and 4 replay ranks split them unevenly): every rank sends to its
# right neighbour late by 10 ns per rank, wrong-order receives on rank 4, a scan, a broadcast
# from rank 3, MPI_Init / MPI_Finalize, repeated allreduces.
RING: list[list[tuple]] = [[("MPI_Init", 0, 50 + 10 * r, [], 0)] for r in range(5)]
for r in range(5):
    RING[r] += [("MPI_Send", 100 + 10 * r, 105 + 10 * r, [(r + 1) % 5], 0),
                ("MPI_Recv", 110 + 10 * r, 200, [(r - 1) % 5], 0)]
RING[0] += [("MPI_Send", 300, 310, [4], 1), ("MPI_Send", 320, 330, [4], 2)]
RING[4] += [("MPI_Recv", 200, 400, [0], 2), ("MPI_Recv", 400, 410, [0], 1)]
for r in range(5):
    RING[r] += [("MPI_Scan", 500 + 20 * ((r * 3) % 5), 700, [], 0), ("MPI_Bcast", 800 + 30 * r, 1000, [3], 0)]
    RING[r] += [("MPI_Allreduce", 1100 + 100 * k + 7 * ((r + k) % 5), 1180 + 100 * k + r, [], 0) for k in range(4)]
    RING[r] += [("MPI_Finalize", 1600 + 50 * r, 1900, [], 0)]

SHAPES = {"chain": (CHAIN, 6000), "ring": (RING, 2000)}

BROKEN = {
    "receive-without-send": ([[("MPI_Recv", 10, 20, [1], 0)], []], "0.evt", "without a matching send"),
    "send-never-received": ([[], [("MPI_Send", 10, 20, [0], 5)]], "1.evt", "never received"),
    "collective-missing": ([[("MPI_Barrier", 10, 20, [], 0), ("MPI_Barrier", 30, 40, [], 0)],
                            [("MPI_Barrier", 10, 20, [], 0)], [("MPI_Barrier", 10, 20, [], 0)]],
                           "0.evt", "no counterpart on MPI Rank 1"),
    "different-collectives": ([[("MPI_Barrier", 10, 20, [], 0)], [("MPI_Allreduce", 10, 20, [], 0)]], "1.evt",
                              "meets MPI barrier"),
}


def shared_anchors() -> list[tuple[str, Path]]:
    """(name, anchor) of the shared traces with MPI communication."""
    return [(name, next(iter(sorted((SHARED_OTF2 / name).glob("*.otf2"))))) for name in SHARED_MPI]


def pattern_values(report) -> dict[str, dict[str, float]]:
    """{pattern: {"location column:call path's region": exclusive seconds}} of the non-zero values."""
    out: dict[str, dict[str, float]] = {}
    for m in report.metrics:
        if m.name not in PATTERNS:
            continue
        values = report.values(m.name, inclusive=False)
        out[m.name] = {f"{int(loc)}:{report.cnodes[c].region.name}": float(values[c, loc])
                       for c, loc in zip(*np.nonzero(values))}
    return out
