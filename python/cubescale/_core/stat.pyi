"""
Flat profiles, statistics across locations and trace-size scoring (CubeLib's cube_stat, Score-P's scorep-score).
"""

from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing

__all__: list[str] = ["SKIP", "filter_excludes", "group_sums", "otf2_record_sizes"]

def filter_excludes(
    text: str,
    names: collections.abc.Sequence[str],
    files: collections.abc.Sequence[str],
    mangled_names: collections.abc.Sequence[str],
) -> list[bool]:
    """
    Per region (name, source file and mangled name, '' for none), whether the Score-P filter `text` excludes it, as scorep-score decides: MANGLED rules match the mangled name (the name without one), file rules the file name ('' too). Same parser and matcher as `cubescale run --filter`. ValueError names the line of a syntax error.
    """

@typing.overload
def group_sums(
    values: numpy.typing.NDArray[numpy.uint64],
    row_group: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32],
    row_groups: typing.SupportsInt | typing.SupportsIndex,
    column_group: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32],
    column_groups: typing.SupportsInt | typing.SupportsIndex,
    weight: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None = None,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    out[row_group[c], column_group[l]] += values[c, l] * weight[c], a float64 array [row_groups, column_groups]: call paths summed into regions (or region types), locations into processes, in one pass. Rows whose group is SKIP are left out; weight (one per row) defaults to 1. ValueError when a length or group does not fit.
    """

@typing.overload
def group_sums(
    values: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
    row_group: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32],
    row_groups: typing.SupportsInt | typing.SupportsIndex,
    column_group: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32],
    column_groups: typing.SupportsInt | typing.SupportsIndex,
    weight: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None = None,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    out[row_group[c], column_group[l]] += values[c, l] * weight[c], a float64 array [row_groups, column_groups]: call paths summed into regions (or region types), locations into processes, in one pass. Rows whose group is SKIP are left out; weight (one per row) defaults to 1. ValueError when a length or group does not fit.
    """

def otf2_record_sizes(
    definition_counts: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex],
    dense_metrics: typing.SupportsInt | typing.SupportsIndex = 0,
    program_arguments: typing.SupportsInt | typing.SupportsIndex = 0,
) -> dict[str, int]:
    """
    Bytes of each OTF2 event record scorep-score counts (without the timestamp; 'Timestamp' is listed), from libotf2's size estimator given the number of definitions by OTF2 name ('Region', 'Metric', 'Comm', 'Location' ...). 'Metric' (a record of dense_metrics values) only when dense_metrics > 0. ValueError for an unknown name.
    """

SKIP: int = 4294967295
