"""Unification of every rank's local definitions into global ones (the Scalasca architecture paper, section 4.3).

An up pass along the binary spanning tree merges canonical definition sets (C++:
``_core.profile.UnifyState``); the root's set is the global definitions, the same for any
number of ranks and any placement of the profiles. A down pass gives every rank its local ->
global maps, each rank receiving only maps of its subtree's size. This module only moves the
bytes; errors on any rank (e.g. a metric defined differently on two ranks) are raised on every
rank as :class:`~cubescale.parallel.collective.CollectiveError`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._core import profile as _profile
from ..profile import LocalProfile
from .collective import down_pass, tree_links, up_pass

__all__ = ["Unification", "unify"]

_UP, _DOWN = 51, 52


@dataclass
class Unification:
    """What :func:`unify` returns on each rank.

    Attributes
    ----------
    metric_map, cnode_map : numpy.ndarray
        Global index of every local metric and call path (call paths in global preorder).
    cnode_wide_position : numpy.ndarray
        Each local call path's row position in INCLUSIVE metrics' data members.
    state : object
        The C++ state; at rank 0 it holds the global definitions (``global_report``).
    stats : dict
        Peak bytes held, messages and bytes sent and received, the ``rounds`` of the tree
        and the ``seconds`` taken.
    """

    metric_map: np.ndarray
    cnode_map: np.ndarray
    cnode_wide_position: np.ndarray
    state: object
    stats: dict = field(default_factory=dict)


def unify(comm, profile: LocalProfile) -> Unification:
    """Global metrics, regions and call tree from every rank's ``profile`` (collective).

    Example
    -------
    >>> import numpy as np
    >>> from mpi4py import MPI
    >>> from cubescale.profile import LocalProfile, Metric, Region
    >>> p = LocalProfile([Metric(name="time")], [Region(name="main"),
    ...                  Region(name="b"), Region(name="a")], [-1, 0, 0], [0, 1, 2],
    ...                  [("Master thread", "thread")], [np.ones((3, 1))])
    >>> u = unify(MPI.COMM_SELF, p)
    >>> u.cnode_map.tolist()          # children ordered by region: a before b
    [0, 2, 1]
    """
    start = time.perf_counter()
    links = tree_links(comm)
    state = None
    error = None
    try:
        state = _profile.UnifyState(profile._core)
    except Exception as e:  # noqa: BLE001 - becomes an error on every rank below
        error = e

    def absorb(message: bytes) -> None:
        if error is not None:
            raise error
        assert state is not None
        state.absorb(message)

    def finish(is_root: bool) -> bytes:
        if error is not None:
            raise error
        assert state is not None
        return state.end_up(is_root)

    up_error = up_pass(comm, links, absorb, finish, _UP)
    down_pass(comm, links, lambda message: state.down(message), _DOWN, up_error)  # type: ignore[union-attr]
    assert state is not None
    stats = dict(state.stats)
    depth = 0
    while (1 << depth) - 1 < comm.size:
        depth += 1
    stats.update(rounds=depth, seconds=time.perf_counter() - start)
    return Unification(state.metric_map(), state.cnode_map(), state.cnode_wide_position(), state, stats)
