"""Single-node views of one rank of a machine, for tests, benchmarks and demos."""

from __future__ import annotations

from .._core import distributed as _dist
from .._core import systree as _tree
from ..systree import SingleNodeTree

__all__ = ["regular_view"]


def regular_view(shape: str, rank: int) -> SingleNodeTree:
    """The view of ``rank`` in a regular machine ``shape``: machine > levels > process >
    locations, elements named ``"<class> <global number>"`` (so nodes have distinct names).

    Levels down to the ``process`` level nest; location levels below it (``thread``,
    ``gpu_stream``) are siblings inside the process. Ranks are placed in blocks: rank ``r``
    runs on node ``r // processes_per_node``.

    Example
    -------
    >>> view = regular_view("node:4 process:2 thread:2", 5)
    >>> [view.name(i) for i in range(len(view))]
    ['machine', 'node 2', 'process 5', 'thread 0', 'thread 1']
    """
    try:
        levels = _tree.parse_shape(shape)
    except ValueError as e:
        raise ValueError(f"bad shape {shape!r}: {e}") from None
    views = _dist.RegularViews(levels)
    if not 0 <= rank < views.ranks:
        raise ValueError(f"rank {rank} outside the machine's {views.ranks} processes")
    return SingleNodeTree(views.view(rank))
