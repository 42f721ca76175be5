"""
Local call-path profiles, their unification and collation (the CUBE collation paper and the Scalasca architecture paper).
"""

from __future__ import annotations
import collections.abc
import cubescale._core.cube
import cubescale._core.systree
import numpy
import numpy.typing
import typing

__all__: list[str] = ["LocalProfile", "RowSource", "UnifyState", "merge_profiles", "unify_in_process", "write_parts"]

class LocalProfile:
    """
    What one rank measured, with local ids: definitions, locations and value matrices.
    """
    def __init__(
        self,
        *,
        metrics: collections.abc.Sequence[cubescale._core.cube.Metric],
        regions: collections.abc.Sequence[cubescale._core.cube.Region],
        cnode_parents: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
        cnode_regions: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
        cnode_parameters: list,
        locations: collections.abc.Sequence[tuple[str, str]],
        values: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.uint8]],
    ) -> None:
        """
        A profile from metric and region definitions, a call tree in preorder (parents, -1 for roots; region indices; per cnode a list of parameter dicts, or an empty list), locations as (name, type) and per metric the bytes of a [cnode, location] array of its data type; ValueError naming the bad part.
        """
    def cnode_parents(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        Parent of every local call path (-1 for roots), int64.
        """
    def cnode_regions(self) -> numpy.typing.NDArray[numpy.uint32]:
        """
        Local region index of every call path, uint32.
        """
    def parameters(self, cnode: typing.SupportsInt | typing.SupportsIndex) -> list:
        """
        The parameter dicts of one local call path.
        """
    def values(self, metric: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.uint8]:
        """
        A copy of a metric's values as bytes [cnodes, locations * width].
        """
    @property
    def cnode_count(self) -> int:
        """
        Number of local call paths.
        """
    @property
    def location_count(self) -> int:
        """
        Number of local locations.
        """
    @property
    def locations(self) -> list[tuple[str, str]]:
        """
        (name, type) of every location.
        """
    @property
    def metrics(self) -> list[cubescale._core.cube.Metric]:
        """
        The metric definitions (copies).
        """
    @property
    def regions(self) -> list[cubescale._core.cube.Region]:
        """
        The region definitions (copies).
        """

class UnifyState:
    """
    One rank's part of the unification: up pass (absorb, end_up), down pass (down).
    """
    def __init__(self, profile: LocalProfile) -> None:
        """
        The state of a rank holding `profile`.
        """
    def absorb(self, child_set: bytes) -> None:
        """
        Merges a child's packed definitions (children in rank order).
        """
    def cnode_map(self) -> numpy.typing.NDArray[numpy.uint32]:
        """
        After down: the global (preorder) index of every local call path.
        """
    def cnode_wide_position(self) -> numpy.typing.NDArray[numpy.uint32]:
        """
        After down: each local call path's row position in INCLUSIVE metrics' data.
        """
    def down(self, from_parent: bytes) -> list:
        """
        The down pass: the parent's map message in (b'' at the root), one per child out.
        """
    def end_up(self, is_root: bool) -> bytes:
        """
        Ends the up pass: the packed merged definitions for the parent (b'' at the root).
        """
    def global_definitions(self) -> bytes:
        """
        At the root: the packed global definitions (compare with definitions_bytes of another run).
        """
    def global_report(
        self,
        system: cubescale._core.systree.SingleNodeTree,
        group_ranks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = [],
    ) -> cubescale._core.cube.Report:
        """
        At the root: the global definitions over `system` as a report of zeros; group_ranks: each location group's <rank> when one per group is given (else its position).
        """
    def metric_map(self) -> numpy.typing.NDArray[numpy.uint32]:
        """
        After down: the global index of every local metric.
        """
    @property
    def global_counts(self) -> tuple[int, int, int]:
        """
        At the root: (metrics, regions, call paths) of the global definitions.
        """
    @property
    def global_widths(self) -> list[int]:
        """
        At the root: the bytes of one value of every global metric, in global order.
        """
    @property
    def stats(self) -> dict:
        """
        Peak bytes held, messages and bytes sent and received.
        """

class RowSource:
    """
    A rank's side of collation: its non-zero rows, cut into block parts.
    """
    def __init__(
        self,
        profile: LocalProfile,
        metric_map: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32],
        cnode_map: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32],
        wide_position: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32],
        first_location: typing.SupportsInt | typing.SupportsIndex,
    ) -> None:
        """
        The rows of `profile` placed by unification's maps, its locations starting at global column `first_location`.
        """
    def block(
        self,
        metric: typing.SupportsInt | typing.SupportsIndex,
        p0: typing.SupportsInt | typing.SupportsIndex,
        p1: typing.SupportsInt | typing.SupportsIndex,
        c0: typing.SupportsInt | typing.SupportsIndex,
        c1: typing.SupportsInt | typing.SupportsIndex,
    ) -> numpy.typing.NDArray[numpy.uint8]:
        """
        This rank's part of the block of row positions [p0, p1) and columns [c0, c1) of a global metric (uint8 array, empty when it has no non-zero row there).
        """
    def nonzero(
        self, metric: typing.SupportsInt | typing.SupportsIndex, position: typing.SupportsInt | typing.SupportsIndex
    ) -> bool:
        """
        Whether this rank has non-zero values in a row of a global metric.
        """
    def row_costs(
        self, metric: typing.SupportsInt | typing.SupportsIndex, positions: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.typing.NDArray[numpy.uint64]:
        """
        Per position, the bytes this rank's part costs the writer for that row (values + 12), 0 where it sends nothing; uint64.
        """

def merge_profiles(profiles: collections.abc.Sequence[LocalProfile]) -> LocalProfile:
    """
    Several profiles as one: the union of their definitions in canonical order, their locations side by side (profile i's after those of profiles before it); zero where a profile never visited a call path.
    """

def unify_in_process(profiles: collections.abc.Sequence[LocalProfile]) -> dict:
    """
    The whole unification of P profiles in one process along the same spanning tree (tests, simulation): a dict with the packed global definitions, metrics, regions, call tree, per-profile maps, the rounds, the passes' critical path with a core per rank and their total time (seconds), and the most bytes any rank received.
    """

def write_parts(
    writer: cubescale._core.cube.CubexWriter,
    buffer: typing.Annotated[numpy.typing.ArrayLike, numpy.uint8],
    counts: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    p0: typing.SupportsInt | typing.SupportsIndex,
    p1: typing.SupportsInt | typing.SupportsIndex,
    c0: typing.SupportsInt | typing.SupportsIndex,
    c1: typing.SupportsInt | typing.SupportsIndex,
    width: typing.SupportsInt | typing.SupportsIndex,
    piece: bool = False,
    trailer: typing.SupportsInt | typing.SupportsIndex = 0,
) -> int:
    """
    Writes a block from the ranks' gathered parts (counts: bytes per rank) without a dense copy: sent rows composed one at a time, the others skipped; piece: one row as the next piece of the open row; trailer: bytes after each rank's part that are not values. Returns the bytes held besides the parts.
    """
