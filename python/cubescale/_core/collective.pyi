"""
Generic pieces of the collective algorithms: spanning-tree links and hashing.
"""

from __future__ import annotations
import typing

__all__: list[str] = ["binary_tree_links", "fnv1a"]

def binary_tree_links(
    rank: typing.SupportsInt | typing.SupportsIndex, size: typing.SupportsInt | typing.SupportsIndex
) -> tuple[int, list[int]]:
    """
    (parent, children) of `rank` in the binary spanning tree over [0, size) rooted at 0 whose subtrees are contiguous rank ranges (parent -1 at the root, children in rank order).
    """

def fnv1a(data: bytes) -> int:
    """
    FNV-1a hash of bytes: the same value on every machine (communicator splits by a key's hash).
    """
