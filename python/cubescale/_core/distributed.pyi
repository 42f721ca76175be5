"""
Kernels of the distributed system tree build and its simulation (the Score-P system-description paper, section 4).
"""

from __future__ import annotations
import collections.abc
import cubescale._core.systree
import numpy
import numpy.typing
import typing

__all__: list[str] = [
    "RankState",
    "RegularViews",
    "hash_name_path",
    "merge_name_chunks",
    "naive_build",
    "name_chunk_after",
    "name_path",
    "pack_view",
    "simulate_regular",
    "simulate_views",
]

class RankState:
    """
    One rank's part of the distributed system tree algorithm.
    """
    def __init__(self, view: cubescale._core.systree.SingleNodeTree, host_class: str = "node") -> None:
        """
        The state of one rank whose single-node path is `view`; the lowest rank below each element of class `host_class` is responsible for its hardware.
        """
    def absorb(self, payload: bytes) -> None:
        """
        Merges a child's payload (children in rank order).
        """
    def begin_up(self, round: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Starts the up pass of `round` with the own payload.
        """
    def down(self, round: typing.SupportsInt | typing.SupportsIndex, from_parent: bytes) -> list:
        """
        The final down pass of `round`: the element's global start in, one message per child out.
        """
    def end_up(self, is_root: bool) -> bytes:
        """
        Ends the up pass: the payload for the parent (group roots complete the element instead).
        """
    def global_tree_bytes(self) -> bytes:
        """
        On the root's rank: the global sequence tree in binary form.
        """
    def group_key(self, round: typing.SupportsInt | typing.SupportsIndex) -> bytes:
        """
        The name path of the parent of the element held in `round`: the group to join.
        """
    def held_names(self, classes: collections.abc.Sequence[str]) -> list[tuple[int, str]]:
        """
        (all-kinds index, name) of the elements of `classes` this rank holds, for the name stream.
        """
    def location_indices(self) -> numpy.typing.NDArray[numpy.uint64]:
        """
        Global location indices of this rank's locations (after the down pass).
        """
    def promote(self, round: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        On a group root: hold the group's element in the next round.
        """
    def settle(self, round: typing.SupportsInt | typing.SupportsIndex, from_parent: bytes) -> list:
        """
        Settles `round` right after its up pass: takes the parent's message (empty at the group root) and returns one message per child with offsets relative to the group's element.
        """
    @property
    def holds(self) -> int:
        """
        Depth of the element this rank holds now (it takes part in that round).
        """
    @property
    def holds_root(self) -> bool:
        """
        True on the one rank that holds the root.
        """
    @property
    def location_group_index(self) -> int:
        """
        Global index of this rank's process among all location groups.
        """
    @property
    def process_depth(self) -> int:
        """
        Depth of this rank's process element.
        """
    @property
    def responsible(self) -> bool:
        """
        True when this rank is responsible for its host's shared hardware.
        """
    @property
    def stats(self) -> dict:
        """
        This rank's cost: peak bytes, messages and bytes sent and received, rounds.
        """

class RegularViews:
    """
    The views of the ranks of a regular machine shape.
    """
    def __init__(self, levels: collections.abc.Sequence[tuple[str, typing.SupportsInt | typing.SupportsIndex]]) -> None:
        """
        The views of a machine given as levels (class, count) from parse_shape.
        """
    def view(self, rank: typing.SupportsInt | typing.SupportsIndex) -> cubescale._core.systree.SingleNodeTree:
        """
        The single-node view of one rank.
        """
    @property
    def ranks(self) -> int:
        """
        Number of processes (ranks).
        """

def hash_name_path(path: bytes) -> int:
    """
    FNV-1a of an encoded name path: the same value on every machine.
    """

def merge_name_chunks(a: bytes, b: bytes, limit: typing.SupportsInt | typing.SupportsIndex) -> bytes:
    """
    The `limit` smallest entries of two name chunks, as a chunk.
    """

def naive_build(
    views: collections.abc.Sequence[bytes],
    host_class: str = "node",
    name_classes: collections.abc.Sequence[str] = ["node"],
) -> dict:
    """
    The baseline: folds every rank's packed view on one rank; returns a dict with the tree and per-rank indices.
    """

def name_chunk_after(
    entries: collections.abc.Sequence[tuple[typing.SupportsInt | typing.SupportsIndex, str]],
    after: typing.SupportsInt | typing.SupportsIndex | None,
    limit: typing.SupportsInt | typing.SupportsIndex,
) -> bytes:
    """
    A chunk of at most `limit` entries with index above `after` (None: from the start).
    """

def name_path(view: cubescale._core.systree.SingleNodeTree, element: typing.SupportsInt | typing.SupportsIndex) -> bytes:
    """
    An element's identity: the length-prefixed names on its path from the root.
    """

def pack_view(view: cubescale._core.systree.SingleNodeTree) -> bytes:
    """
    A rank's view in the binary form the naive gather moves.
    """

def simulate_regular(
    levels: collections.abc.Sequence[tuple[str, typing.SupportsInt | typing.SupportsIndex]],
    collect: bool = False,
    host_class: str = "node",
) -> dict:
    """
    Runs the distributed build for every rank of a regular machine in one process (the same kernels, messages counted); `collect` keeps every rank's indices.
    """

def simulate_views(
    ranks: typing.SupportsInt | typing.SupportsIndex,
    view: collections.abc.Callable[[int], cubescale._core.systree.SingleNodeTree],
    collect: bool = False,
    host_class: str = "node",
) -> dict:
    """
    The same for `ranks` views given by a function of the rank.
    """
