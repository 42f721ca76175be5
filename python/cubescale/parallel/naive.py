"""The naive baseline: gather every rank's single-node view to rank 0 and fold there.

Rank 0 holds all P views and the single-node union, which grows with the machine: this is
what sequence definitions built in parallel avoid (the Score-P system-description paper, Figure 1).
"""

from __future__ import annotations

from collections.abc import Iterable

from .._core import distributed as _dist
from .._core import systree as _tree
from ..systree import SingleNodeTree, SystemTree
from ._mpi import mpi
from .systree import DistributedSystemTree

__all__ = ["build_system_tree_naive"]


def build_system_tree_naive(
    comm,
    local: SingleNodeTree,
    root_only: bool = False,
    names: bool = False,
    host_class: str = "node",
    name_classes: Iterable[str] = ("node",),
) -> DistributedSystemTree:
    """Same result as :func:`build_system_tree`, computed by gathering every view to rank 0,
    unioning them by name path in rank order and folding the union (C++), then scattering
    each rank's indices. ``stats["peak_bytes"]`` is rank 0's gathered views plus the union
    and the folded tree; other ranks report their view.

    Example
    -------
    >>> from mpi4py import MPI
    >>> from cubescale.parallel import regular_view
    >>> result = build_system_tree_naive(MPI.COMM_SELF, regular_view("node:1 process:1 thread:3", 0))
    >>> result.tree.render(), result.location_indices.tolist()
    ('machine ×1 > node ×1 > process ×1 > thread ×3', [0, 1, 2])
    """
    mpi()
    packed = _dist.pack_view(local._core)
    gathered = comm.gather(packed, root=0)
    mine = None
    tree_bytes = None
    name_map = None
    if comm.rank == 0:
        built = _dist.naive_build(gathered, host_class, list(name_classes))
        del gathered
        offsets = built["location_offsets"]
        per_rank = [
            (
                built["location_indices"][offsets[r] : offsets[r + 1]],
                int(built["location_group_index"][r]),
                bool(built["responsible"][r]),
            )
            for r in range(comm.size)
        ]
        tree_bytes = built["tree"].serialize()
        name_map = built["names"] if names else None
        peak = built["peak_bytes"]
        mine = comm.scatter(per_rank, root=0)
    else:
        mine = comm.scatter(None, root=0)
        peak = len(packed)
    if not root_only:
        tree_bytes = comm.bcast(tree_bytes, root=0)
    tree = None
    if tree_bytes is not None:
        tree = SystemTree(_tree.SystemTree.deserialize(tree_bytes), name_map)
    locations, group_index, responsible = mine
    stats = {"peak_bytes": peak, "bytes_sent": len(packed) if comm.rank else 0}
    return DistributedSystemTree(tree, locations.copy(), group_index, responsible, stats)
