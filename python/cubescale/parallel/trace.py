"""Trace -> profile under mpirun (paper 002): every rank reads a share of an OTF2 trace's
processes and the ranks collate one ``.cubex``.

Every rank reads the trace's global definitions (small), so every rank knows the whole
machine and the global location order without communication: no distributed system-tree
build is needed. Rank r takes a contiguous block of location groups (processes), balanced by
their announced event counts, runs the C++ trace -> profile kernel over their locations (one
streaming pass each) and then takes part in :func:`~cubescale.parallel.unify` and
:func:`~cubescale.parallel.collate` as any profile's rank does. Contiguous blocks keep a rank's
locations a contiguous column range, which collation needs; the definitions, the machine and
the values do not depend on the split, so the file is the same for any number of ranks.

Example
-------
>>> import os, tempfile
>>> from mpi4py import MPI
>>> import cubescale, cubescale.otf2
>>> out = os.path.join(tempfile.mkdtemp(), "profile.cubex")
>>> stats = profile_trace(MPI.COMM_SELF, cubescale.otf2._example_path(), out)
>>> stats["shape"], stats["events"]
((12, 4), 110)
"""

from __future__ import annotations

import os
import time
from typing import Any, cast

import numpy as np

from .. import otf2
from ..systree import SingleNodeTree, SystemTree
from .collate import collate
from .collective import agree
from .systree import DistributedSystemTree
from .unify import unify

__all__ = ["profile_trace", "share_of_groups"]


def share_of_groups(weights: Any, size: int, rank: int) -> tuple[int, int]:
    """The contiguous block ``[g0, g1)`` of location groups that ``rank`` of ``size`` takes:
    group g goes to the rank whose equal share of the total weight holds the middle of g.

    Example
    -------
    >>> [share_of_groups([5, 1, 1, 1, 1, 1], 2, r) for r in range(2)]
    [(0, 1), (1, 6)]
    >>> [share_of_groups([1, 1, 1], 4, r) for r in range(4)]
    [(0, 1), (1, 1), (1, 2), (2, 3)]
    """
    w = np.asarray(weights, dtype=np.float64)
    if len(w) == 0:
        return (0, 0)
    w = np.where(w > 0, w, 1.0)  # a group without events still belongs to someone
    ends = np.cumsum(w)
    middle = (ends - w / 2) / ends[-1]
    owner = np.minimum((middle * size).astype(np.int64), size - 1)
    return int(np.searchsorted(owner, rank, side="left")), int(np.searchsorted(owner, rank, side="right"))


def rank_share(trace, size: int, rank: int) -> tuple[tuple[int, int], list[int], int]:
    """What ``rank`` of ``size`` reads of a trace: its block of location groups (balanced by
    the events the definitions announce), their locations in the machine's order, and the
    global column of the first one.

    Example
    -------
    >>> from cubescale import otf2
    >>> rank_share(otf2.open(otf2._example_path()), 2, 1)
    ((2, 4), [2, 3], 2)
    """
    groups = trace.process_groups()
    announced = trace.locations["events"].to_numpy()
    weights = [int(announced[g].sum()) for g in groups]
    block = share_of_groups(weights, size, rank)
    locations = [loc for g in groups[block[0]:block[1]] for loc in g]
    return block, locations, sum(len(g) for g in groups[:block[0]])


class _TraceMachine:
    """The trace's own machine for the writer: its expansion is the trace's tree as it is
    (folding would reorder unequal siblings, and the columns follow the trace's order)."""

    def __init__(self, tree: SingleNodeTree):
        self._tree = tree

    def expand(self) -> SingleNodeTree:
        return self._tree

    def count(self, kinds: str = "locations") -> int:
        assert kinds == "locations"
        return sum(1 for e in range(len(self._tree)) if self._tree.kind(e) == "location")


def profile_trace(comm, path: str | os.PathLike, output: str | os.PathLike, compress: bool = False,
                  block_bytes: int = 1 << 20) -> dict:
    """Converts the trace at ``path`` into one profile report at ``output`` (collective over
    ``comm``; rank 0 writes). Returns this rank's share and costs: ``groups`` (its block),
    ``locations``, ``events``, ``shape`` of the report, ``metrics``, and seconds per phase.

    An error on any rank (a broken event file in its share) is raised on every rank, and
    no file is left behind.
    """
    start = time.perf_counter()
    error: BaseException | None = None
    trace = local = None
    block = (0, 0)
    locations: list[int] = []
    first = 0
    try:
        trace = otf2.open(path)
        block, locations, first = rank_share(trace, comm.size, comm.rank)
        local, kernel = trace.local_profile(locations)
    except Exception as e:  # noqa: BLE001 - raised on every rank by agree()
        error = e
    agree(comm, error)
    assert trace is not None and local is not None
    read_seconds = time.perf_counter() - start
    unified = unify(comm, local)
    machine = _TraceMachine(trace.system_tree()) if comm.rank == 0 else None
    system = DistributedSystemTree(cast(SystemTree, machine), np.arange(first, first + len(locations), dtype=np.uint64),
                                   block[0], comm.rank == 0)
    costs = collate(comm, local, output, unified, system, compress, block_bytes)
    events = comm.allreduce(int(kernel["events"]))
    counts = comm.bcast(tuple(unified.state.global_counts) if comm.rank == 0 else None, root=0)  # type: ignore[attr-defined]
    shape, metrics = (int(counts[2]), len(trace.locations)), int(counts[0])
    return {"groups": block, "locations": len(locations), "events": events, "shape": shape, "metrics": metrics,
            "read_seconds": read_seconds, "unify": unified.stats, "collate": costs,
            "seconds": time.perf_counter() - start}
