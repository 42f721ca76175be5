"""The global system tree across MPI ranks (the Score-P system-description paper, section 4).

Every rank knows only its own path from the machine root to its threads. Level by level
from the leaves, the ranks holding the children of one element form a communicator (split
by a hash of the element's name path, names checked, split again on a collision) and merge
their sequence subtrees along a binary spanning tree to its first rank, which holds the
element in the next round, and offsets relative to that element flow straight back down
the group's tree (each member then keeps one start per round, not merge states). After the
last round the elements' global starts flow down the same edges, so every rank learns the
global depth-first indices of its locations. No rank holds data that grows with
the number of ranks on a regular machine. The merging is done by the C++ kernels
(``_dist.RankState``); this module only moves their bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._core import distributed as _dist
from .._core import systree as _tree
from ..systree import SingleNodeTree, SystemTree
from ._mpi import mpi
from .collective import down_pass, split_checked, tree_links, up_pass

__all__ = ["DistributedSystemTree", "build_system_tree"]

_UP, _DOWN, _NAMES, _SETTLE = 41, 42, 43, 44
NameSink = Callable[[list], None]


@dataclass
class DistributedSystemTree:
    """What :func:`build_system_tree` returns on each rank.

    Attributes
    ----------
    tree : SystemTree | None
        The global sequence tree (``None`` on ranks other than 0 with ``root_only=True``).
        With ``names=True`` the tree on rank 0 carries the host names.
    location_indices : numpy.ndarray
        Global indices (uint64, location enumeration) of this rank's locations, in the order
        of a preorder walk of its view.
    location_group_index : int
        Global index of this rank's process among all location groups.
    responsible : bool
        True on the lowest rank of each host: the one responsible for the host's shared
        hardware elements (the Vampir hardware-levels paper).
    stats : dict
        This rank's cost: peak bytes of the algorithm's own data, messages and bytes sent
        and received, rounds taken part in, and ``resplits`` after hash collisions.
    """

    tree: SystemTree | None
    location_indices: np.ndarray
    location_group_index: int
    responsible: bool
    stats: dict = field(default_factory=dict)


def build_system_tree(
    comm,
    local: SingleNodeTree,
    root_only: bool = False,
    names: bool | NameSink = False,
    hash: Callable[[bytes], int] | None = None,
    host_class: str = "node",
    name_classes: Iterable[str] = ("node",),
    name_chunk: int = 4096,
) -> DistributedSystemTree:
    """Build the global system tree from every rank's ``local`` view (collective over ``comm``).

    ``local`` is this rank's single-node path: machine > ... > node (host name) > optional
    hwloc hardware levels > its process > threads and GPU streams. Elements with equal name
    paths on different ranks are the same element (two processes on one host share the
    node); different elements of equal structure become copies of one record. So the
    processes of one host need different names (e.g. ``f"rank {comm.rank}"``).

    Parameters
    ----------
    comm : mpi4py communicator
    local : SingleNodeTree
        For example :meth:`SingleNodeTree.local` (hwloc) or :func:`regular_view`.
    root_only : bool
        Keep the global tree on rank 0 only (it is broadcast otherwise).
    names : bool or callable
        ``True``: rank 0's tree carries the real names of the elements of ``name_classes``
        (host names). A callable receives them instead, chunk by chunk in index order
        (lists of ``(all-kinds index, name)``), so rank 0 never holds more than one chunk
        of ``name_chunk`` entries. ``False``: names are left out.
    hash : callable, optional
        ``hash(name_path: bytes) -> int`` used to split communicators; collisions are
        detected by comparing the names and split again, so any function is correct (tests
        pass ``lambda path: 0`` to force collisions).
    host_class : str
        Class of the element whose lowest rank is responsible for its hardware.

    Example
    -------
    >>> from mpi4py import MPI
    >>> from cubescale.parallel import regular_view
    >>> view = regular_view("node:2 process:2 thread:4", 3)
    >>> result = build_system_tree(MPI.COMM_SELF, view)
    >>> result.tree.render()
    'machine ×1 > node ×1 > process ×1 > thread ×4'
    >>> result.location_indices.tolist(), result.location_group_index, result.responsible
    ([0, 1, 2, 3], 0, True)
    """
    MPI = mpi(comm)
    state = _dist.RankState(local._core, host_class)
    hash_fn = hash if hash is not None else _dist.hash_name_path
    deepest = comm.allreduce(state.process_depth, op=MPI.MAX)
    groups: dict[int, tuple[Any, tuple[int, list[int]]]] = {}
    resplits = 0
    try:
        for round_ in range(deepest, 0, -1):
            # One split of the whole communicator per round: the ranks holding a depth-d
            # element, grouped by their parent's name path.
            key = state.group_key(round_) if state.holds == round_ else None
            group, extra = split_checked(comm, key, hash_fn)
            if group is None:
                continue
            resplits += extra
            links = tree_links(group)
            groups[round_] = (group, links)
            state.begin_up(round_)
            error = up_pass(group, links, state.absorb, state.end_up, _UP)
            if links[0] < 0 and error is None:
                state.promote(round_)
            down_pass(group, links, functools.partial(state.settle, round_), _SETTLE, error)
        roots = comm.allreduce(int(state.holds_root), op=MPI.SUM)
        if roots != 1:
            raise ValueError(f"the views have {roots} different machine roots; they must share one")
        for round_ in sorted(groups):
            group, links = groups[round_]
            down_pass(group, links, functools.partial(state.down, round_), _DOWN)
    finally:
        for group, _ in groups.values():
            group.Free()

    tree_bytes = state.global_tree_bytes() if state.holds_root else None
    if not root_only:
        tree_bytes = comm.bcast(tree_bytes, root=0)
    name_map = None
    if names:
        sink = names if callable(names) else None
        name_map = _stream_names(MPI, comm, state, list(name_classes), name_chunk, sink)
    tree = None
    if tree_bytes is not None:
        core = _tree.SystemTree.deserialize(tree_bytes, "global system tree")
        tree = SystemTree(core, name_map)
    stats = dict(state.stats)
    stats["resplits"] = resplits
    return DistributedSystemTree(
        tree, state.location_indices(), state.location_group_index, state.responsible, stats
    )


def _stream_names(MPI, comm, state, classes: list[str], chunk: int, sink):
    """Host names to rank 0 in index order, ``chunk`` at a time: each round reduces every
    rank's next entries along a binary tree keeping the ``chunk`` smallest (C++ merge), so no
    rank holds more than three chunks; the rounds end with the first chunk that is not full.
    Returns a NameMap on rank 0 when there is no sink."""
    entries = state.held_names(classes)
    parent, children = tree_links(comm)
    collected = _tree.NameMap() if (sink is None and comm.rank == 0) else None
    after = None
    while True:
        data = _dist.name_chunk_after(entries, after, chunk)
        for child in children:
            data = _dist.merge_name_chunks(data, comm.recv(source=child, tag=_NAMES), chunk)
        if parent >= 0:
            comm.send(data, dest=parent, tag=_NAMES)
        last = None
        if comm.rank == 0:
            block = next(iter(_tree.NameStreamReader(data, "names")), [])
            if sink is not None and block:
                sink(block)
            elif collected is not None and block:  # rank 0's own copy, one entry per host, added in C++
                collected.add_stream(data, "names")
            # A chunk that is not full holds every remaining name: a chunk cut short anywhere
            # below would have been full, so one round suffices when the names fit a chunk.
            if block and len(block) >= chunk:
                last = block[-1][0]
        last = comm.bcast(last, root=0)
        if last is None:
            return collected
        after = last
