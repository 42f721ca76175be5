"""The distributed system tree algorithm for P virtual ranks in one process.

The same C++ kernels and spanning trees as :func:`build_system_tree`, driven rank by rank
in C++ (the simulation holds O(depth × log P) rank states, never all ranks' trees), to
measure what each rank of a machine too large to run on would hold and send.
"""

from __future__ import annotations

from typing import Callable

from .._core import distributed as _dist
from .._core import systree as _tree
from ..systree import SingleNodeTree, SystemTree

__all__ = ["simulate_system_tree"]


def simulate_system_tree(
    machine: str | None = None,
    ranks: int | None = None,
    view: Callable[[int], SingleNodeTree] | None = None,
    collect: bool = False,
    host_class: str = "node",
) -> dict:
    """Simulate the algorithm for a regular ``machine`` shape (e.g. ``"juqueen"``), or for
    ``ranks`` virtual ranks whose views come from ``view(rank)``.

    Returns a dict: ``tree`` (SystemTree), ``ranks``, ``rounds``, ``peak_bytes_max/min``
    and ``peak_bytes_rank0`` (algorithm data per rank), ``messages_max``, ``bytes_max``
    (per rank, sent + received), ``bytes_total`` (all ranks), and the naive baseline's
    ``naive_rank0_bytes`` (computed from the views' sizes and the single-node size of the
    tree, not materialized). With ``collect=True`` also every rank's
    ``location_offsets``/``location_indices``, ``location_group_index`` and ``responsible``
    (NumPy arrays, as :func:`build_system_tree` gives them) — for small P only.

    Ranks below an element must be consecutive (block placement).

    Example
    -------
    >>> sim = simulate_system_tree("rack:2 node:4 process:8 thread:2")
    >>> sim["tree"].render(), sim["rounds"]
    ('machine ×1 > rack ×2 > node ×4 > process ×8 > thread ×2', 3)
    >>> sim["naive_rank0_bytes"] > sim["peak_bytes_rank0"]
    True
    """
    if (machine is None) == (view is None):
        raise ValueError("give a machine shape or a view function, not both")
    if machine is not None:
        result = _dist.simulate_regular(_tree.parse_shape(machine), collect, host_class)
    elif view is not None:
        if ranks is None or ranks < 1:
            raise ValueError("a view function needs the number of ranks")
        make_view = view
        result = _dist.simulate_views(int(ranks), lambda r: make_view(r)._core, collect, host_class)
    result["tree"] = SystemTree(result["tree"])
    return result
