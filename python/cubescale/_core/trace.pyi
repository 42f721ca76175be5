"""
OTF2 traces: definitions, streaming event reader, events as columns, trace -> profile (the Scalasca architecture paper).
"""

from __future__ import annotations
import collections.abc
import cubescale._core.profile
import cubescale._core.systree
import numpy
import numpy.typing
import typing

__all__: list[str] = ["Trace", "event_type_names", "read_with_empty_callbacks", "write_synthetic_trace"]

class Trace:
    """
    An OTF2 trace opened at its anchor file: global definitions read, events streamed on demand per location.
    """
    def __init__(self, path: str) -> None:
        """
        Opens the anchor file (.otf2) and reads the global definitions; FormatError for broken input.
        """
    def count_events(
        self, locations: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] | None = None
    ) -> numpy.typing.NDArray[numpy.uint64]:
        """
        Events of every type per location: uint64 array [location, event type] (one streaming pass).
        """
    def definitions(self) -> dict:
        """
        The global definitions as a dict of tables (each a dict of equally long lists); references are indices into the other tables, -1 for none.
        """
    def event_columns(
        self,
        locations: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] | None = None,
        types: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] | None = None,
        regions: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] | None = None,
        regions_only: bool = False,
        begin: typing.SupportsInt | typing.SupportsIndex = 0,
        end: typing.SupportsInt | typing.SupportsIndex = 18446744073709551615,
    ) -> dict:
        """
        Events as a dict of NumPy columns (time, location, type, region, partner, communicator, tag, bytes, bytes_received, request, metric; member_values: one float64 column per metric member). Filters: event type numbers, regions (their Enter/Leave kept, other Enter/Leave dropped; regions_only drops every other event too), ticks [begin, end).
        """
    def events_read(self) -> int:
        """
        The events every pass over this trace has read so far, on any thread (per batch of 65,536): for a progress line while an analysis runs.
        """
    def profile(
        self, locations: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]
    ) -> tuple[cubescale._core.profile.LocalProfile, dict]:
        """
        The call-path profile of `locations` (columns in this order) in one streaming pass: (LocalProfile, stats dict with events read and frames left open at a location's end).
        """
    def region_visits(
        self, locations: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] | None = None
    ) -> tuple[numpy.typing.NDArray[numpy.uint64], numpy.typing.NDArray[numpy.uint64]]:
        """
        count_events and, in the same pass, the Enter and ProgramBegin events per region (uint64 array [region]): (counts, visits).
        """
    def system_tree(
        self,
    ) -> tuple[
        cubescale._core.systree.SingleNodeTree,
        numpy.typing.NDArray[numpy.uint32],
        numpy.typing.NDArray[numpy.uint32],
        list,
    ]:
        """
        The trace's machine as a SingleNodeTree, the locations in its depth-first order, each location's tree element, and the location groups depth-first as (group index or -1, element, location indices).
        """
    @property
    def clock(self) -> tuple[int, int, int]:
        """
        (ticks per second, global offset, length in ticks).
        """
    @property
    def location_count(self) -> int:
        """
        Number of locations.
        """
    @property
    def path(self) -> str:
        """
        The anchor file.
        """
    @property
    def strings(self) -> list[str]:
        """
        The string definitions, in order.
        """
    @property
    def warnings(self) -> list[str]:
        """
        Inconsistencies of the definitions that were tolerated (undefined references).
        """

def event_type_names() -> list[str]:
    """
    otf2-print's names of the event types, indexed by event type number.
    """

def read_with_empty_callbacks(
    trace: Trace, locations: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] | None = None
) -> int:
    """
    Reads the events with callbacks that do nothing (the limit of any reader over libotf2); returns the number of events.
    """

def write_synthetic_trace(
    directory: str,
    name: str,
    processes: typing.SupportsInt | typing.SupportsIndex = 4,
    iterations: typing.SupportsInt | typing.SupportsIndex = 1000,
    counters: bool = True,
    defect: str = "",
) -> int:
    """
    Writes a synthetic trace <directory>/<name>.otf2 with OTF2's writer: a ring of MPI processes iterating solve > {compute, MPI_Send, MPI_Recv, MPI_Allreduce}, two accumulated counters (18 events per iteration, 14 without counters). defect: '' , 'unclosed' or 'mismatched_leave'. Returns the events written.
    """
