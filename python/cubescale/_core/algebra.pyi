"""
Report algebra: unification, diff, merge, mean, min, max, cut (the Scalasca architecture paper, section 6).
"""

from __future__ import annotations
import collections.abc
import cubescale._core.cube
import typing

__all__: list[str] = ["alignment", "combine", "cut", "stream_values"]

def alignment(reports: collections.abc.Sequence[cubescale._core.cube.Report], system: str = "auto") -> list:
    """
    Per report, where its metrics, call paths and locations are in the unified definitions that combine() uses: a tuple of three uint32 arrays indexed by the report's own metric, cnode and location indices.
    """

def combine(
    operation: str, reports: collections.abc.Sequence[cubescale._core.cube.Report], system: str = "auto"
) -> cubescale._core.cube.Report:
    """
    A report over the unified definitions of `reports` whose values are `operation` (diff: A - B of two; merge, mean, min, max: of one or more) of the inputs' aligned values, computed per metric on first use. system: 'auto' (same layout, else collapsed to processes), 'same' or 'processes'. ValueError when the inputs cannot be unified.
    """

def cut(
    report: cubescale._core.cube.Report,
    roots: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
    prunes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
) -> cubescale._core.cube.Report:
    """
    A report whose call tree is the subtrees of `roots` (cnode indices; empty: all), with the call paths `prunes` keeping their inclusive values and their descendants folded into their exclusive values.
    """

def stream_values(report: cubescale._core.cube.Report) -> None:
    """
    From now on, values that `report` loads or computes are not kept: each use loads them again, so writing it needs memory for one metric at a time (for reports read once, as the command line does).
    """
