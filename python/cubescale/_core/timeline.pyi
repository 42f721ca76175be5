"""
Metric timelines and aggregate expressions over the system tree, evaluated in stages (the Vampir hardware-levels paper).
"""

from __future__ import annotations
import collections.abc
import cubescale._core.trace
import numpy
import numpy.typing
import typing

__all__: list[str] = [
    "Expression",
    "Timeline",
    "TimelineStore",
    "evaluate",
    "evaluate_local",
    "max_grid_points",
    "merge_partials",
    "partial_aggregate",
    "trace_timelines",
    "write_synthetic_trace",
]

class Timeline:
    """
    One metric's samples on one system-tree element.
    """
    def __init__(
        self,
        times: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
        values: typing.Annotated[numpy.typing.ArrayLike, numpy.float64],
        mode: str = "accumulated",
        timing: str = "point",
    ) -> None:
        """
        Samples (times ascending) in OTF2's metric mode and timing; relative samples are summed up.
        """
    def __len__(self) -> int:
        """
        Number of samples.
        """
    def resample(
        self,
        start: typing.SupportsFloat | typing.SupportsIndex,
        stop: typing.SupportsFloat | typing.SupportsIndex,
        points: typing.SupportsInt | typing.SupportsIndex,
        interpolation: str = "stairstep",
    ) -> numpy.typing.NDArray[numpy.float64]:
        """
        Values at `points` equally spaced times from start to stop (the nearest sample holds outside).
        """
    @property
    def mode(self) -> str:
        """
        accumulated or absolute (relative samples are stored accumulated).
        """
    @property
    def times(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Sample times (a copy).
        """
    @property
    def values(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Sample values (a copy; relative samples already summed up).
        """

class Expression:
    """
    A metric expression in reverse Polish notation (Vampir's).
    """
    def __init__(self, text: str) -> None:
        """
        Parses `text`; ValueError naming the position of the bad token.
        """
    def __str__(self) -> str:
        """
        The expression in canonical reverse Polish notation.
        """
    @property
    def aggregate_count(self) -> int:
        """
        Number of aggregate operations (each one reduced across workers).
        """

class TimelineStore:
    """
    The timelines a worker owns, by (system-tree element, metric), over a tree's parent array.
    """
    def __init__(self, parents: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        A store over a system tree given by each element's parent (-1 for roots, preorder).
        """
    def __len__(self) -> int:
        """
        Number of timelines.
        """
    def add(self, element: typing.SupportsInt | typing.SupportsIndex, metric: str, timeline: Timeline) -> None:
        """
        Adds (or replaces) the timeline of `metric` on `element`.
        """
    def elements(self, metric: str) -> list[int]:
        """
        Elements that have a timeline of `metric`.
        """
    def get(self, element: typing.SupportsInt | typing.SupportsIndex, metric: str) -> Timeline | None:
        """
        The timeline of `metric` on `element` (a copy), or None.
        """
    def metrics(self) -> list[tuple[int, str]]:
        """
        (element, metric) of every timeline.
        """
    def time_range(self) -> tuple[float, float]:
        """
        (earliest, latest) sample time over all timelines; (inf, -inf) when there are none.
        """

def evaluate(
    expression: Expression,
    partials: collections.abc.Sequence[bytes],
    store: TimelineStore,
    target: typing.SupportsInt | typing.SupportsIndex,
    start: typing.SupportsFloat | typing.SupportsIndex,
    stop: typing.SupportsFloat | typing.SupportsIndex,
    points: typing.SupportsInt | typing.SupportsIndex,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    The expression on the grid from the merged partials of its aggregates (in order).
    """

def evaluate_local(
    expression: Expression,
    store: TimelineStore,
    target: typing.SupportsInt | typing.SupportsIndex,
    start: typing.SupportsFloat | typing.SupportsIndex,
    stop: typing.SupportsFloat | typing.SupportsIndex,
    points: typing.SupportsInt | typing.SupportsIndex,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    The expression on the grid with every aggregate over this store alone (one process).
    """

def merge_partials(a: bytes, b: bytes) -> bytes:
    """
    Two partials of one aggregate merged (bytes).
    """

def partial_aggregate(
    expression: Expression,
    index: typing.SupportsInt | typing.SupportsIndex,
    store: TimelineStore,
    target: typing.SupportsInt | typing.SupportsIndex,
    start: typing.SupportsFloat | typing.SupportsIndex,
    stop: typing.SupportsFloat | typing.SupportsIndex,
    points: typing.SupportsInt | typing.SupportsIndex,
) -> bytes:
    """
    This worker's partial of aggregate `index` for `target` as bytes (16 bytes per grid point + 13).
    """

def trace_timelines(
    trace: cubescale._core.trace.Trace,
    locations: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] | None = None,
) -> tuple[TimelineStore, dict]:
    """
    The metric timelines of a trace's locations (dense indices; default all) as a TimelineStore over the trace's machine (elements as in Trace.system_tree()): class metrics on their location, instances on their scope. Also {metric_events, samples}.
    """

def write_synthetic_trace(
    directory: str,
    name: str = "traces",
    *,
    nodes: typing.SupportsInt | typing.SupportsIndex = 2,
    packages_per_node: typing.SupportsInt | typing.SupportsIndex = 2,
    cores_per_package: typing.SupportsInt | typing.SupportsIndex = 4,
    gpus_per_node: typing.SupportsInt | typing.SupportsIndex = 1,
    seconds: typing.SupportsInt | typing.SupportsIndex = 60,
    samples_per_second: typing.SupportsInt | typing.SupportsIndex = 1,
) -> str:
    """
    Writes an OTF2 trace of a machine with packages, cores and GPUs whose energy (J) and FLOP counters grow at known rates (see synthetic_trace.hpp); returns the anchor file's path.
    """

max_grid_points: int = 100000
