"""A machine every rank already knows, from definitions every rank reads (an OTF2 trace's, a
report's): no distributed system-tree build is needed, only each rank's share of it.

Rank r holds a contiguous block of location groups (processes), so its locations are one
contiguous column range of the global order, which collation needs; the writer takes the
machine as it is (its own order, its own names, its groups' ``<rank>``s when known).

Example
-------
>>> import cubescale
>>> machine = KnownMachine(cubescale.open(cubescale.examples.report_path()).system)
>>> share = known_share(machine, first_location=2, locations=1, first_group=2, root=False)
>>> machine.count("locations"), share.location_indices.tolist(), share.tree
(20, [2], None)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from ..systree import SingleNodeTree, SystemTree
from .collective import agree
from .systree import DistributedSystemTree

__all__ = ["KnownMachine", "collate_on_known_machine", "known_share", "share_of_groups"]


class KnownMachine:
    """The writer's machine when it is known whole: :meth:`expand` is the tree as it is
    (folding would reorder unequal siblings, and the columns follow the tree's order).
    ``group_ranks``: each location group's ``<rank>`` in the tree's order, if known (else the
    groups' positions).

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> KnownMachine(r.system, [0, 1, 2, 3]).count("locations")
    20
    """

    def __init__(self, tree: SingleNodeTree, group_ranks: Sequence[int] | None = None):
        self._tree = tree
        self.group_ranks = [int(r) for r in group_ranks] if group_ranks is not None else None

    def expand(self) -> SingleNodeTree:
        """The machine, one element per part (as given).

        Example
        -------
        >>> import cubescale
        >>> tree = cubescale.open(cubescale.examples.report_path()).system
        >>> len(KnownMachine(tree).expand()) == len(tree)
        True
        """
        return self._tree

    def count(self, kinds: str = "locations") -> int:
        """The number of locations (the report's columns).

        Example
        -------
        >>> import cubescale
        >>> KnownMachine(cubescale.open(cubescale.examples.report_path()).system).count()
        20
        """
        if kinds != "locations":
            raise ValueError(f"a known machine counts locations, not {kinds!r}")
        return sum(1 for e in range(len(self._tree)) if self._tree.kind(e) == "location")


def known_share(machine: KnownMachine | None, first_location: int, locations: int, first_group: int,
                root: bool) -> DistributedSystemTree:
    """This rank's part of a known machine as :func:`~cubescale.parallel.collate` takes it:
    ``locations`` columns from ``first_location``, its first location group ``first_group``;
    the machine itself on the writer (``root``) only.

    Example
    -------
    >>> known_share(None, 0, 3, 0, root=False).location_indices.tolist()
    [0, 1, 2]
    """
    indices = np.arange(first_location, first_location + locations, dtype=np.uint64)
    return DistributedSystemTree(cast(SystemTree, machine) if root else None, indices, first_group, root)


def collate_on_known_machine(comm, profile, output, machine: Callable[[], KnownMachine], first_location: int,
                             locations: int, first_group: int, compress: bool = False, block_bytes: int = 1 << 20,
                             progress: Any = None) -> tuple[Any, dict]:
    """Collective: unifies every rank's ``profile`` and collates it into ``output`` over a
    machine every rank knows (``machine()`` is called on rank 0 only); this rank's
    ``locations`` columns start at ``first_location``, its first location group is
    ``first_group``. Returns the :class:`~cubescale.parallel.unify.Unification` and the
    collation's costs.

    Example
    -------
    >>> import os, tempfile
    >>> from mpi4py import MPI
    >>> import cubescale
    >>> from cubescale.profile import LocalProfile
    >>> report = cubescale.open(cubescale.examples.report_path())
    >>> out = os.path.join(tempfile.mkdtemp(), "again.cubex")
    >>> unified, costs = collate_on_known_machine(MPI.COMM_SELF, LocalProfile.from_report(report), out,
    ...                                           lambda: KnownMachine(report.system), 0, 4, 0)
    >>> cubescale.open(out).shape == report.shape
    True
    """
    from .collate import collate
    from .unify import unify

    unified = unify(comm, profile)
    root = comm.rank == 0
    share, error = None, None
    try:  # the machine, on rank 0 only (its size grows with the locations): an error reaches every rank
        share = known_share(machine() if root else None, first_location, locations, first_group, root)
    except Exception as e:  # noqa: BLE001 - raised on every rank by agree
        error = e
    agree(comm, error)
    assert share is not None
    return unified, collate(comm, profile, output, unified, share, compress=compress, block_bytes=block_bytes,
                            progress=progress)


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
