"""OTF2 traces (Score-P's trace format): definitions and events as DataFrames, the call-path
profile Score-P would have written for the same run, and the trace's machine as a system tree.

The C++ core (``_core.trace``) reads the trace over libotf2, streaming one location after
another: :func:`events` builds NumPy columns in C++ (no Python object per event),
:func:`profile` runs the trace -> profile kernel in one pass per location. Under mpirun,
:func:`cubescale.parallel.trace.profile_trace` (``cubescale trace-profile``) gives each
rank a share of the processes and collates one ``.cubex``. Broken input raises
:class:`cubescale.FormatError` naming the archive file and the event's position.

Example
-------
>>> import cubescale.trace
>>> path = cubescale.examples.trace_path()
>>> trace = cubescale.trace.open(path)
>>> trace
<Trace ring/traces.otf2: 4 locations, 4 processes, 6 regions>
>>> trace.event_counts().sum().to_dict()
{'ENTER': 404, 'LEAVE': 404, 'MPI_SEND': 80, 'MPI_RECV': 80, 'MPI_COLLECTIVE_BEGIN': 80, 'MPI_COLLECTIVE_END': 80, 'METRIC': 320}
>>> report = cubescale.trace.profile(path)
>>> int(report.values("visits", inclusive=False).sum())
404
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ._core import profile as _profile
from ._core import trace as _trace
from ._optional import OptionalModule
from .profile import LocalProfile
from .report import Report
from .report import write as _write_report
from .systree import SingleNodeTree, SystemTree

if TYPE_CHECKING:
    import pandas as pd
else:  # events and definition tables are DataFrames: pandas is needed once one is asked for
    pd = OptionalModule("pandas", "pandas", "a trace's event or definition table")

__all__ = ["EVENT_TYPES", "Trace", "events", "open", "profile"]

EVENT_TYPES: list[str] = list(_trace.event_type_names())
"""The OTF2 3.0 event types by number, as otf2-print names them ("ENTER", "MPI_ISEND" ...)."""

# The names cubescale gave three types before 2026-11-28 (OTF2's callback names), still taken by
# Trace.events(types=...): otf2-print's names are PARAMETER_INT64, PARAMETER_UINT64, IO_CHANGE_FLAGS.
_OLD_TYPE_NAMES = {"PARAMETER_INT": "PARAMETER_INT64", "PARAMETER_UNSIGNED_INT": "PARAMETER_UINT64",
                   "IO_CHANGE_STATUS_FLAGS": "IO_CHANGE_FLAGS"}

# Events whose Name is their region: Enter, Leave, and PROGRAM_BEGIN/END where the trace defines
# the program's region (Score-P 7 and later), which they open and close: the root call path.
_REGION_EVENTS = tuple(EVENT_TYPES.index(t) for t in ("ENTER", "LEAVE", "PROGRAM_BEGIN", "PROGRAM_END"))


def is_anchor(path: str | os.PathLike) -> bool:
    """Whether ``path`` names an OTF2 anchor file (``.otf2``).

    Example
    -------
    >>> is_anchor("traces.otf2"), is_anchor("profile.cubex")
    (True, False)
    """
    return os.fspath(path).endswith(".otf2")


def _whole_ticks(seconds: float, resolution: int) -> int:
    """The tick at or before ``seconds``; a product within its own rounding (a few units in
    the last place) of a whole tick is that tick (``t.duration`` times the resolution is the
    trace's length, not one tick less)."""
    x = seconds * resolution
    nearest = round(x)
    return int(nearest) if abs(x - nearest) <= 4 * sys.float_info.epsilon * max(1.0, abs(x)) else int(np.floor(x))


class Trace:
    """An opened OTF2 trace: global definitions as DataFrames, events read on demand.

    Tables (``regions``, ``locations`` ...) have one row per definition in definition order;
    their index is the dense index that events and other tables refer to (-1: none).

    Example
    -------
    >>> from cubescale.examples import trace_path
    >>> t = open(trace_path())
    >>> t.metrics[["name", "mode", "value_type"]].values.tolist()[0]
    ['PAPI_TOT_CYC', 'accumulated_start', 'uint64']
    >>> t.locations[["name", "type", "group"]].values.tolist()[:2]
    [['Master thread', 'cpu_thread', 0], ['Master thread', 'cpu_thread', 1]]
    """

    def __init__(self, path: str | os.PathLike):
        from .commands._inputs import trace_path

        # The anchor, or an experiment directory's; a report, a .def or .evt file, a text file
        # refused with what it is (libotf2 would say "no valid file extension"); a path that
        # does not exist is a FileNotFoundError, as cubescale.open raises.
        self.path = trace_path(os.fspath(path), need_events=False)
        self._core = _trace.Trace(self.path)
        # The definition tables as columns of lists; as DataFrames (pandas) only when asked for,
        # so that the analysis and the profile neither need pandas nor wait for its import.
        self._definitions: dict[str, dict[str, list]] = self._core.definitions()
        self._frames: dict[str, pd.DataFrame] | None = None

    @property
    def _tables(self) -> dict[str, pd.DataFrame]:
        if self._frames is None:
            self._frames = {name: pd.DataFrame(columns) for name, columns in self._definitions.items()}
        return self._frames

    # --- definitions ---------------------------------------------------------------------

    @property
    def regions(self) -> pd.DataFrame:
        """Regions: name, canonical_name, description, role, paradigm, file, lines (copy)."""
        return self._tables["regions"].copy()

    @property
    def locations(self) -> pd.DataFrame:
        """Locations: OTF2 id, name, type (cpu_thread, accelerator_stream, metric), announced
        events, location group index (copy)."""
        return self._tables["locations"].copy()

    def announced_events(self) -> np.ndarray:
        """Per location (dense index), the number of events its definition announces (0 where
        the writer announced none), without building the locations table (no pandas).

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> open(trace_path()).announced_events().tolist()
        [362, 362, 362, 362]
        """
        return np.asarray(self._definitions["locations"]["events"], dtype=np.uint64)

    @property
    def location_groups(self) -> pd.DataFrame:
        """Location groups (processes, accelerators) with their system tree node index (copy)."""
        return self._tables["location_groups"].copy()

    @property
    def system_tree_nodes(self) -> pd.DataFrame:
        """System tree nodes (machine, nodes ...) with parent index, domains, properties (copy)."""
        return self._tables["system_tree_nodes"].copy()

    @property
    def metrics(self) -> pd.DataFrame:
        """Metric members (e.g. PAPI counters): name, unit, metric_type, mode, value_type (copy)."""
        return self._tables["metric_members"].copy()

    @property
    def metric_classes(self) -> pd.DataFrame:
        """Metric classes and instances: members (indices), occurrence, recorder (copy)."""
        return self._tables["metrics"].copy()

    def table(self, name: str) -> pd.DataFrame:
        """Any definition table: system_tree_nodes, location_groups, locations, regions, groups,
        communicators, metric_members, metrics, attributes, parameters, calling_contexts.
        ``communicators``: ``inter`` marks inter-communicators, whose ``group`` is their group A
        and ``remote_group`` their group B (-1 where undefined, as for every other communicator).

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> open(trace_path()).table("communicators")["name"].tolist()
        ['MPI_COMM_WORLD']
        """
        if name not in self._definitions:
            raise KeyError(f"no definition table {name!r}; there are {sorted(self._definitions)}")
        return self._tables[name].copy()

    @property
    def clock(self) -> tuple[int, int, int]:
        """(ticks per second, global offset, trace length in ticks)."""
        return tuple(self._core.clock)  # type: ignore[return-value]

    @property
    def duration(self) -> float:
        """Length of the trace in seconds.

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> round(open(trace_path()).duration * 1e6, 3)   # microseconds: a short synthetic run
        14.463
        """
        resolution, _, length = self.clock
        return length / resolution

    @property
    def warnings(self) -> list[str]:
        """Inconsistencies of the definitions that were tolerated (undefined references)."""
        return list(self._core.warnings)

    # --- selections ----------------------------------------------------------------------

    def location_indices(self, locations: Iterable[int] | int | None = None) -> list[int]:
        """Dense location indices from indices (None: all, in the system tree's order).

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> open(trace_path()).location_indices([3, 1])
        [3, 1]
        """
        if locations is None:
            return [int(x) for x in self._system()[1]]
        if isinstance(locations, (int, np.integer)):
            locations = [int(locations)]
        out = [int(x) for x in locations]
        n = len(self._definitions["locations"]["id"])
        bad = [x for x in out if not 0 <= x < n]
        if bad:
            raise ValueError(f"location index {bad[0]} outside the trace's {n} locations")
        return out

    def region_indices(self, regions: Iterable[int | str] | str) -> list[int]:
        """Region indices from names (every region of that name) or indices.

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> open(trace_path()).region_indices(["MPI_Send", "MPI_Recv"])
        [3, 4]
        """
        if isinstance(regions, str):
            regions = [regions]
        names = np.asarray(self._definitions["regions"]["name"], dtype=object)
        out: list[int] = []
        for r in regions:
            if isinstance(r, str):
                found = np.flatnonzero(names == r).tolist()
                if not found:
                    raise KeyError(f"no region named {r!r}")
                out.extend(found)
            else:
                out.append(int(r))
        return out

    # --- events --------------------------------------------------------------------------

    def event_counts(self, locations: Iterable[int] | None = None, all_types: bool = False) -> pd.DataFrame:
        """Events per location (rows) and type (columns: only types that occur unless
        ``all_types``), from one streaming pass.

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> int(open(trace_path()).event_counts().loc[0, "MPI_SEND"])   # one per iteration
        20
        """
        chosen = self.location_indices(locations)
        counts = self._core.count_events(chosen)
        frame = pd.DataFrame(counts.astype(np.int64), index=pd.Index(chosen, name="location"), columns=EVENT_TYPES)
        return frame if all_types else frame.loc[:, counts.sum(axis=0) > 0]

    def events(self, locations: Iterable[int] | int | None = None, regions: Iterable[int | str] | str | None = None,
               time: tuple[float, float] | None = None, types: Iterable[str] | None = None,
               regions_only: bool = False) -> pd.DataFrame:
        """The events as a DataFrame, one row per event, locations one after another, each in
        recorded order.

        Columns (names as pipit's ``Trace.events`` where it has them): ``Timestamp (ns)``
        (since the trace's start), ``Event Type`` (ENTER, LEAVE, MPI_SEND ...), ``Name``
        (region for Enter/Leave, the program's region for PROGRAM_BEGIN/PROGRAM_END where the
        trace defines it, otherwise the event type), ``Location``, ``Process``
        (location group index), ``Region`` (index, -1), ``Partner`` (peer rank or root,
        -1), ``Communicator`` (index, -1), ``Tag`` (message tag, collective operation),
        ``Bytes``, ``Bytes Received``, ``Request`` (request, matching or task id),
        ``Metric`` (metric class index on METRIC events), then one float column per metric
        member (values on METRIC events, NaN elsewhere), and ``Ticks`` (raw timestamps).

        Parameters
        ----------
        locations : indices, optional
            Which locations (default all, in the system tree's order).
        regions : names or indices, optional
            Keep only these regions' Enter/Leave (other events stay unless ``regions_only``).
        time : (begin, end) seconds since the trace's start, optional; events at both ends are
            kept (``(0, t.duration)`` keeps every event of a trace whose clock properties give
            its length; OTF2's integrity trace says 0)
        types : event type names, optional (e.g. ``["MPI_SEND", "MPI_RECV"]``), as otf2-print
            names them (:data:`EVENT_TYPES`)
        regions_only : with ``regions``, drop every event but these regions' Enter/Leave

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> t = open(trace_path())
        >>> df = t.events(types=["MPI_SEND", "MPI_RECV"])
        >>> df[["Event Type", "Location", "Partner", "Bytes"]].values.tolist()[:2]
        [['MPI_SEND', 0, 1, 1024], ['MPI_RECV', 0, 3, 1024]]
        >>> calls = t.events(locations=[0], regions=["MPI_Send", "MPI_Recv"], regions_only=True)
        >>> sorted(set(calls["Event Type"].astype(str))), sorted(set(calls["Name"].astype(str)))
        (['ENTER', 'LEAVE'], ['MPI_Recv', 'MPI_Send'])
        >>> kept = t.events(locations=[0], regions=["MPI_Send", "MPI_Recv"])  # other events stay
        >>> "MPI_SEND" in set(kept["Event Type"].astype(str)) and "METRIC" in set(kept["Event Type"].astype(str))
        True
        """
        resolution, offset, _ = self.clock
        kwargs: dict[str, Any] = {"locations": self.location_indices(locations)}
        if types is not None:
            names = [_OLD_TYPE_NAMES.get(n, n) for n in types]
            unknown = [n for n in names if n not in EVENT_TYPES]
            if unknown:
                raise ValueError(f"unknown event type {unknown[0]!r}; known: {', '.join(EVENT_TYPES)}")
            kwargs["types"] = [EVENT_TYPES.index(n) for n in names]
        if regions is not None:
            kwargs["regions"] = self.region_indices(regions)
            kwargs["regions_only"] = regions_only
        if time is not None:
            # In whole ticks: a trace's ticks may exceed 2^53 (offsets of ~1e17 ns since the
            # epoch), where a float would move the bounds by tens of ticks. The core's end is
            # exclusive: one tick after the last kept.
            begin, end = time
            kwargs["begin"] = max(0, offset + _whole_ticks(begin, resolution))
            kwargs["end"] = max(0, offset + _whole_ticks(end, resolution) + 1)
        if types is None and regions is None and time is None:  # (a filter's share is not known before reading)
            self._check_frame_fits(int(self.announced_events()[kwargs["locations"]].sum()))
        columns = self._core.event_columns(**kwargs)
        return self._frame(columns)

    def _check_frame_fits(self, events: int) -> None:
        """``MemoryError`` (one line, what to do instead) where ``events`` rows would need more
        than the memory available at once: the columns and the DataFrame built from them, about
        1.5 times the frame's bytes per event (measured: 145 bytes per event with two metric
        members), instead of the kernel killing the process midway."""
        from ._memory import available_memory, in_gib

        available = available_memory()
        members = len(self._definitions["metric_members"]["name"])
        need = int(events * 1.5 * (80 + 8 * members))
        if available is not None and need > available:
            raise MemoryError(
                f"events(): the {events:,} events of these locations need about {in_gib(need)} at once as a "
                f"DataFrame, more than the {in_gib(available)} available: choose fewer locations, event types "
                "(types=), regions (regions=..., regions_only=True) or a time window (time=), or take the "
                "trace's profile (Trace.profile)")

    def _frame(self, c: dict) -> pd.DataFrame:
        resolution, offset, _ = self.clock
        ticks = c["time"]
        kind = c["type"].astype(np.int64)
        region = c["region"]
        region_names = self._tables["regions"]["name"].to_numpy(dtype=object)
        unique, region_code = np.unique(region_names.astype(str), return_inverse=True) if len(region_names) else (
            np.array([], dtype=str), np.array([], dtype=np.int64))
        is_region = np.isin(kind, _REGION_EVENTS) & (region >= 0)
        codes = np.where(is_region, region_code[np.where(is_region, region, 0)] if len(region_code) else 0,
                         len(unique) + kind)
        categories = [str(u) for u in unique] + [f"[{n}]" if n in set(unique) else n for n in EVENT_TYPES]
        groups = self._tables["locations"]["group"].to_numpy(dtype=np.int64)
        frame = pd.DataFrame({
            # (the offset taken in whole ticks before the float, as above)
            "Timestamp (ns)": (ticks.astype(np.int64) - np.int64(offset)).astype(np.float64) * (1e9 / resolution),
            "Event Type": pd.Categorical.from_codes(kind, categories=EVENT_TYPES),
            "Name": pd.Categorical.from_codes(codes, categories=categories),
            "Location": c["location"].astype(np.int64),
            "Process": groups[c["location"]] if len(groups) else np.zeros(0, dtype=np.int64),
            "Region": region,
            "Partner": c["partner"],
            "Communicator": c["communicator"],
            "Tag": c["tag"],
            "Bytes": c["bytes"],
            "Bytes Received": c["bytes_received"],
            "Request": c["request"],
            "Metric": c["metric"],
        }, copy=False)
        for name, values in zip(self._tables["metric_members"]["name"], c["member_values"]):
            frame[name] = values
        frame["Ticks"] = ticks
        return frame

    # --- machine and profile -------------------------------------------------------------

    def _system(self):
        if not hasattr(self, "_system_cache"):
            self._system_cache = self._core.system_tree()
        return self._system_cache

    def system_tree(self) -> SingleNodeTree:
        """The trace's machine: system tree nodes > location groups > locations.

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> tree = open(trace_path()).system_tree()
        >>> [tree.name(e) for e in tree.preorder()][:4]
        ['synthetic', 'node0', 'MPI Rank 0', 'Master thread']
        """
        return SingleNodeTree(self._core.system_tree()[0])

    def sequence_tree(self) -> SystemTree:
        """The machine in sequence form (identical processes folded; real names kept).

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> open(trace_path()).sequence_tree().render()
        'machine ×1 > node ×1 > process ×4 > thread ×1'
        """
        return SystemTree.from_single(self.system_tree(), names="all")

    def timelines(self, locations: Iterable[int] | None = None):
        """The metric timelines of ``locations`` (default: all) as a
        :class:`cubescale.timeline.TimelineStore` over the trace's machine (its elements as
        in :meth:`system_tree`): counters of a metric class on the location that recorded
        them, metric instances on their scope (a package's energy on the package).

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> store = open(trace_path()).timelines()
        >>> sorted({metric for _, metric in store.metrics()})
        ['PAPI_L2_TCM', 'PAPI_TOT_CYC']
        """
        from ._core import timeline as _timeline

        chosen = None if locations is None else self.location_indices(locations)
        store, _ = _timeline.trace_timelines(self._core, chosen)
        return store

    def process_groups(self) -> list[list[int]]:
        """Locations per location group, groups in the system tree's order (the units a
        parallel conversion distributes).

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> open(trace_path()).process_groups()
        [[0], [1], [2], [3]]
        """
        return [[int(x) for x in locs] for _, _, locs in self._system()[3]]

    def local_profile(self, locations: Sequence[int] | None = None) -> tuple[LocalProfile, dict]:
        """The call-path profile of ``locations`` (default all, in system tree order) as a
        :class:`~cubescale.profile.LocalProfile`, and the kernel's stats (events read).

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> p, stats = open(trace_path()).local_profile([0])
        >>> p.shape, stats["events"]
        ((6, 1), 362)
        """
        chosen = self.location_indices(locations)
        core, stats = self._core.profile(chosen)
        first = chosen[0] if chosen else None
        process = None
        if first is not None:
            g = int(self._definitions["locations"]["group"][first])
            process = str(self._definitions["location_groups"]["name"][g]) if g >= 0 else None
        p = LocalProfile.__new__(LocalProfile)
        p._core = core
        p.host = None
        p.process = process
        return p, dict(stats)

    def profile(self, output: str | os.PathLike | None = None, compress: bool = False) -> Report:
        """The call-path profile Score-P would have written for the traced run: metrics
        visits, time (inclusive), min_time, max_time, bytes_sent, bytes_received and
        accumulated counters (PAPI) as inclusive sums of their deltas; the trace's machine as
        system tree. Written to ``output`` as well when given.

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> r = open(trace_path()).profile()
        >>> [m.name for m in r.metrics]
        ['visits', 'time', 'min_time', 'max_time', 'PAPI_TOT_CYC', 'PAPI_L2_TCM', 'bytes_sent', 'bytes_received']
        >>> r.shape
        (6, 4)
        """
        if output is not None:  # before the reading: not one of the trace's files, and writable
            from .commands._inputs import check_trace_output

            check_trace_output(output, self.path)
        local, _ = self.local_profile()
        return self._report(local, output, compress)

    def _report(self, local: LocalProfile, output: str | os.PathLike | None, compress: bool) -> Report:
        """The report of a profile of all locations over the trace's machine (also written
        to ``output`` when given): :meth:`profile` and :func:`cubescale.analyze` share it."""
        if local.shape[0] == 0:
            from .errors import FormatError

            raise FormatError("no location entered a region: the trace holds no call path to profile", self.path,
                              os.path.basename(os.path.splitext(self.path)[0]) + "/*.evt", 0)
        state = _profile.UnifyState(local._core)
        state.end_up(True)
        state.down(b"")
        tree = self._core.system_tree()[0]
        report = Report(state.global_report(tree), self.path)
        rows = np.asarray(state.cnode_map(), dtype=np.int64)
        for i, metric in enumerate(local.metrics):
            values = local.values(i)
            full = np.zeros((report.shape[0],) + values.shape[1:], dtype=values.dtype)
            full[rows] = values
            report.set_values(metric.name, full)
        if output is not None:
            _write_report(report, output, compress=compress)
        return report

    def summary(self) -> str:
        """A readable summary: machine, locations, regions used, event counts per type,
        metrics, duration (``cubescale info traces.otf2``).

        Example
        -------
        >>> from cubescale.examples import trace_path
        >>> print(open(trace_path()).summary())  # doctest: +ELLIPSIS
        traces.otf2: OTF2 trace, 4 locations in 4 location groups, 0.000014 s
        ...
        """
        # From the definitions' columns and the core's event columns: no pandas (info of a
        # trace works with NumPy alone, as its analysis and profile do).
        defs = self._definitions
        loc, regions, members = defs["locations"], defs["regions"], defs["metric_members"]
        # One pass: the events per type and location, and the regions' Enter (and the program's
        # PROGRAM_BEGIN) events.
        counts, visits = self._core.region_visits(list(range(len(loc["name"]))))
        per_type = counts.sum(axis=0)
        n, groups = len(loc["name"]), len(defs["location_groups"]["name"])
        lines = [f"{os.path.basename(self.path)}: OTF2 trace, {n} location{'s' if n != 1 else ''} in "
                 f"{groups} location group{'s' if groups != 1 else ''}, {self.duration:.6f} s"]
        resolution, offset, length = self.clock
        lines.append(f"clock: {resolution} ticks/s, offset {offset}, length {length} ticks")
        lines.append(f"machine: {self.sequence_tree().render()}")
        lines.append(f"events: {int(per_type.sum()):,} in all")
        for k in np.flatnonzero(per_type):
            lines.append(f"  {EVENT_TYPES[k]:<28} {int(per_type[k]):>14,}")
        lines.append("locations:")
        group_names = defs["location_groups"]["name"]
        shown = min(n, 16)
        for i in range(shown):
            g = int(loc["group"][i])
            lines.append(f"  {i:>4} {loc['name'][i]:<24} {loc['type'][i]:<18} "
                         f"{(group_names[g] if g >= 0 else '-'):<20} {int(counts[i].sum()):>12,} events")
        if shown < n:
            lines.append(f"  ... {n - shown} more")
        used = np.flatnonzero(visits)
        lines.append(f"regions: {len(regions['name'])} defined, {len(used)} entered")
        for r in used[:20]:
            lines.append(f"  {regions['name'][r]} ({regions['paradigm'][r]}, {regions['role'][r]})")
        if len(used) > 20:
            lines.append(f"  ... {len(used) - 20} more")
        lines.append(f"metrics: {len(members['name'])}")
        for i in range(len(members["name"])):
            lines.append(f"  {members['name'][i]} ({members['metric_type'][i]}, {members['mode'][i]}, "
                         f"{members['value_type'][i]}{', ' + members['unit'][i] if members['unit'][i] else ''})")
        times: dict[str, int] = {}  # each warning once, with how often it came (in order)
        for w in self.warnings:
            times[w] = times.get(w, 0) + 1
        for w, n in list(times.items())[:5]:
            lines.append(f"warning: {w}" + (f" ({n} times)" if n > 1 else ""))
        return "\n".join(lines)

    def __repr__(self) -> str:
        parts = self.path.replace(os.sep, "/").split("/")
        name = "/".join(parts[-2:])
        d = self._definitions
        return (f"<Trace {name}: {len(d['locations']['id'])} locations, "
                f"{len(d['location_groups']['id'])} processes, {len(d['regions']['id'])} regions>")


def open(path: str | os.PathLike) -> Trace:  # noqa: A001 (mirrors cubescale.open)
    """Opens an OTF2 trace at its anchor file (``traces.otf2``) or its experiment directory:
    reads the global definitions; events are read on use. :class:`cubescale.FormatError` for
    broken input, or a file that is not an anchor (a report, one of the trace's other files);
    ``FileNotFoundError`` for a path that does not exist.

    Example
    -------
    >>> from cubescale.examples import trace_path
    >>> open(trace_path()).regions.loc[3, ["name", "role", "paradigm"]].tolist()
    ['MPI_Send', 'point2point', 'mpi']
    """
    return Trace(path)


def events(path: str | os.PathLike, locations: Iterable[int] | int | None = None,
           regions: Iterable[int | str] | str | None = None, time: tuple[float, float] | None = None,
           types: Iterable[str] | None = None) -> pd.DataFrame:
    """The events of a trace as a DataFrame (see :meth:`Trace.events` for the columns).

    Example
    -------
    >>> from cubescale.examples import trace_path
    >>> df = events(trace_path(), locations=[0], regions="MPI_Send")
    >>> entered = df[df["Event Type"] == "ENTER"]["Name"]
    >>> sorted(set(entered)), len(entered)   # one send per iteration
    (['MPI_Send'], 20)
    """
    return Trace(path).events(locations=locations, regions=regions, time=time, types=types)


def profile(path: str | os.PathLike, output: str | os.PathLike | None = None, compress: bool = False) -> Report:
    """The call-path profile of a trace as a :class:`cubescale.Report` (written to ``output``
    too when given); see :meth:`Trace.profile`.

    Example
    -------
    >>> from cubescale.examples import trace_path
    >>> r = profile(trace_path())
    >>> int(r.values("bytes_sent", inclusive=False).sum())   # 80 messages of 1024 bytes, 80 allreduces of 8
    82560
    """
    return Trace(path).profile(output, compress=compress)
