"""Wait-state analysis of OTF2 traces (the Scalasca architecture paper, section 5.2): where MPI processes wait, and
why, as Scalasca's scout names it.

:func:`analyze` reads a trace once (the C++ core, ``_core.analysis``): beside the trace ->
profile builder it keeps one small record per MPI message and collective, matches them across
locations and computes Scalasca's patterns (``mpi_latesender``, ``mpi_latereceiver``,
``mpi_barrier_wait``, ``mpi_wait_nxn``, ``mpi_latebroadcast``, ``mpi_earlyreduce``; also on
MPI-3 non-blocking collectives), counts clock-condition violations (``clock_violations``) and,
with ``time_correct=True``, corrects the times first (a controlled logical clock). The result is the call-path
profile of the same trace with Scalasca's metric tree below ``time`` (``execution`` > ``mpi`` >
``mpi_communication`` > ``mpi_point2point`` > ``mpi_latesender`` ...), each pattern on the call
path of the MPI call where the waiting happened, on the waiting location; OpenMP threads
waiting at barriers and for locks (``omp_ibarrier_wait``, ``omp_ebarrier_wait``,
``omp_lock_contention_*``) below ``execution`` > ``omp_time``. Beside them, as scout writes
them, the critical-path profile (``critical_path``: the time of each call path and location on
the run's critical path) and the counts (``syncs_*``, ``comms_*``, ``bytes_*``,
``mpi_sls_count``, ``mpi_cls_count``, ``mpi_slr_count``, ``mpi_clr_count``). A parent metric
stores its children's values too (CubeLib reads metric trees so). With an mpi4py communicator of
several ranks the analysis is a parallel replay: each rank analyzes a share of the locations and
the ranks exchange only their communication records (:mod:`cubescale.parallel.analysis`); the
report is the same byte for byte for any number of ranks and the same as in one process
(every metric above, ``time_correct`` included). Inconsistent traces raise
:class:`cubescale.FormatError` naming the location's event file, the event and its time.
docs/analysis.md has the definitions.

Example
-------
>>> import cubescale
>>> report = cubescale.analyze(cubescale.examples.trace_path())
>>> [p.name for p in patterns(report)]  # doctest: +NORMALIZE_WHITESPACE
['mpi_latesender', 'mpi_latesender_wo', 'mpi_lswo_different', 'mpi_lswo_same', 'mpi_latereceiver',
 'mpi_wait_nxn', 'mpi_nxn_completion']
"""

from __future__ import annotations

import collections
import math
import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._affinity import available_cores, thread_count
from ._core import analysis as _analysis
from ._memory import MemoryProjection
from ._polled import run_polled
from .profile import LocalProfile, _call_path_names
from .report import Report

__all__ = ["PATTERNS", "AnalysisStatistics", "PatternInstance", "PatternStatistics", "PatternSummary", "analyze",
           "available_cores",
           "clock_violations", "patterns", "statistics", "summary", "trace_stat"]

PATTERNS: list[str] = list(_analysis.pattern_names())
"""Unique names (Scalasca's) of the patterns the analysis computes."""

ROOT_CAUSES: list[str] = list(_analysis.root_cause_names())
"""Unique names (scout's) of the root-cause metrics, ``analyze(..., root_cause=True)``: the delay
costs, then the indirect and propagating waits."""


@dataclass(frozen=True)
class PatternInstance:
    """One of the most severe instances of a pattern (as scout lists them in ``trace.stat``):
    its waiting time, the MPI call's enter and leave (seconds since the trace's start; OpenMP:
    the barrier's, or the enter of the region around a lock acquisition and the acquisition),
    its call path and the location and process that waited.

    Example
    -------
    >>> import cubescale
    >>> top = statistics(analyze(cubescale.examples.trace_path())).patterns["mpi_wait_nxn"].top[0]
    >>> (top.call_path, top.process, top.leave > top.enter)
    ('main/solve/MPI_Allreduce', 'MPI Rank 1', True)
    """

    time: float
    enter: float
    leave: float
    call_path: str
    location: str
    process: str


@dataclass(frozen=True)
class PatternStatistics:
    """The instances of one pattern with waiting time (scout's ``trace.stat``): their number,
    sum, mean, smallest, largest, variance, and the most severe ones (at most 5, one per call
    path, largest first).

    Example
    -------
    >>> import cubescale
    >>> s = statistics(analyze(cubescale.examples.trace_path())).patterns["mpi_latesender"]
    >>> (s.count, s.max <= s.sum, len(s.top) <= 5)
    (29, True, True)
    """

    name: str
    count: int
    sum: float
    mean: float
    min: float
    max: float
    variance: float
    top: tuple[PatternInstance, ...]


@dataclass(frozen=True)
class AnalysisStatistics:
    """What an analysis found beyond the report's values: clock-condition violations as
    recorded (a receive before its send, a collective left before the enters it depends on;
    ``omp_violations``: OpenMP threads before their fork, joins before their threads' team end,
    barriers left before their team's last enter), whether the times were corrected (``time_correct=True``) and how many events that moved,
    and the instance statistics per pattern.

    Example
    -------
    >>> import cubescale
    >>> s = statistics(analyze(cubescale.examples.trace_path()))
    >>> (s.p2p_violations, s.collective_violations, s.time_corrected, sorted(s.patterns)[:2])
    (22, 55, False, ['mpi_latereceiver', 'mpi_latesender'])
    >>> statistics(analyze(cubescale.examples.trace_path(), time_correct=True)).corrected_jumps > 0
    True
    """

    p2p_violations: int
    collective_violations: int
    time_corrected: bool
    corrected_jumps: int
    patterns: dict[str, PatternStatistics]
    omp_violations: int = 0


_STATISTICS: weakref.WeakKeyDictionary[Report, AnalysisStatistics] = weakref.WeakKeyDictionary()


def statistics(report: Report) -> AnalysisStatistics | None:
    """The :class:`AnalysisStatistics` of a report that :func:`analyze` made in this process
    (None for a report read from a file: they are not stored in it).

    Example
    -------
    >>> import cubescale
    >>> statistics(analyze(cubescale.examples.trace_path())).corrected_jumps
    0
    """
    return _STATISTICS.get(report)


# scout's TOP_SEVERE_INSTANCES: the most severe instances kept per pattern, at most one per call
# path, ordered by time and among equal times by the report's call-path row, in one process and
# over ranks alike (the core hands over every call path's most severe instance).
_TOP = 5


def _call_path_rows(report: Report) -> dict[str, int]:
    """The report's row of every call path, by its name."""
    return {_path(report, c): c for c in range(report.shape[0])}


def _most_severe(top: list[tuple], rows: dict[str, int], path_of: Callable[[Any], str] = lambda p: p) -> list[tuple]:
    """Instances (time first, the call path at index 3, named by ``path_of``) ordered by time
    and, among equal times, by the report's row of the call path: the _TOP first."""
    return sorted(top, key=lambda e: (-e[0], rows.get(path_of(e[3]), len(rows))))[:_TOP]


def _statistics(report: Report, stats: dict, time_correct: bool, paths: list[str]) -> AnalysisStatistics:
    processes = [loc.process for loc in report.locations]
    column = {int(loc): c for c, loc in enumerate(stats["columns"])}
    out = {}
    for name, s in stats["patterns"].items():
        top = tuple(PatternInstance(t, enter, leave, paths[cnode], report.locations[column[loc]].name,
                                    str(processes[column[loc]]))
                    for t, enter, leave, cnode, loc in s["top"])
        n = s["count"]
        mean = s["sum"] / n
        out[name] = PatternStatistics(name, n, s["sum"], mean, s["min"], s["max"],
                                      max(s["sum_of_squares"] / n - mean * mean, 0.0), top)
    return AnalysisStatistics(stats["p2p_violations"], stats["collective_violations"], time_correct,
                              stats["corrected_jumps"], out, stats.get("omp_violations", 0))


def _merged_statistics(report: Report, merged: dict, time_correct: bool, trace_path) -> AnalysisStatistics:
    """The statistics of a replay over ranks (ticks, call paths by name) as one process has them:
    seconds as the core converts them, the 5 most severe call paths in the report's row order
    among equals."""
    from .trace import open as open_trace

    trace = open_trace(trace_path)
    resolution, offset, _ = trace.clock
    tick = 1.0 / resolution
    rows = _call_path_rows(report)
    paths = sorted({e[3] for s in merged["patterns"].values() for e in s["top"]}, key=lambda p: rows.get(p, len(rows)))
    index = {p: k for k, p in enumerate(paths)}

    def since_start(ticks: int) -> float:
        return float(ticks - min(ticks, offset)) * tick

    patterns = {}
    for name, s in merged["patterns"].items():
        top = _most_severe(s["top"], rows)
        patterns[name] = {"count": s["count"], "sum": float(s["sum"]) * tick, "min": float(s["min"]) * tick,
                          "max": float(s["max"]) * tick, "sum_of_squares": s["sum_of_squares"] * tick * tick,
                          "top": [(float(t) * tick, since_start(e), since_start(leave), index[p], loc)
                                  for t, e, leave, p, loc in top]}
    stats = {k: merged[k] for k in ("p2p_violations", "collective_violations", "omp_violations", "corrected_jumps")}
    return _statistics(report, dict(stats, patterns=patterns, columns=list(trace.location_indices())), time_correct,
                       paths)


def analyze(trace_path: str | os.PathLike, output: str | os.PathLike | None = None, compress: bool = False,
            time_correct: bool = False, min_latency: float = 0.0, comm: Any = None,
            root_cause: bool = False, threads: int | None = None,
            progress: Callable[[str], None] | None = None, min_thread_latency: float | None = None) -> Report | None:
    """The wait-state analysis of an OTF2 trace (its anchor, ``traces.otf2``, or the experiment
    directory holding it) as a
    :class:`cubescale.Report`: the trace's call-path profile (visits, time, ...) plus Scalasca's
    pattern metrics below ``time``, for the patterns whose MPI operations occur, and
    ``clock_violations`` (occurrences) when the trace has MPI communication or OpenMP teams.
    Written to ``output`` (``.cubex``) as well when given; an output that is one of the trace's
    files, or that could not be written, is refused before any reading (as the command line
    refuses it). ``time_correct=True`` first moves the
    communication events forward until no receive precedes its send by less than
    ``min_latency`` seconds, no collective is left before the enters it depends on (a
    non-blocking one's completion call before the starts), no OpenMP thread begins before its
    fork, joins before its team's ends or leaves a barrier before its team's enters
    (docs/analysis.md: a controlled logical clock); :func:`statistics` has the violations as
    recorded and the instance statistics. ``min_thread_latency``: the OpenMP threads' latency in
    seconds (default ``min_latency``; Scalasca's clc takes a shared-memory latency of its own,
    below its message latencies).

    ``root_cause=True`` adds scout's root-cause metrics (``delay_latesender`` ... ``delay_n21_longterm``,
    where the trace has OpenMP parallel regions ``delay_ompbarrier`` and ``delay_ompidle``,
    ``mpi_wait_indirect_*``, ``mpi_wait_propagating_*``: which time of which call path on the delaying
    process or thread caused the waits, and which waits propagated; docs/analysis.md, "Root causes").
    In one process only (ValueError under ``comm`` of several ranks); with ``time_correct`` on the
    corrected times (the events between the corrected ones move with them).

    ``comm`` (an mpi4py communicator of several ranks): collective over its ranks, each
    analyzing a share of the trace's locations (:func:`cubescale.parallel.analysis.analyze_trace`);
    ``output`` is needed then, rank 0 writes it, and the file is the same for any number of
    ranks and the same as in one process; rank 0 returns it (:func:`statistics` of it has the
    instance statistics of all ranks), the other ranks None (they need not see rank 0's file: a
    node-local output directory works). Inconsistent traces raise :class:`cubescale.FormatError` (on
    every rank) and write nothing.

    ``threads``: in one process, how many threads read the trace's events, each a share of its
    processes, and run the steps after the reading, each on a chunk of the processes (default:
    the cores this process may run on, :func:`available_cores`); under ``comm``, how many read
    each rank's share (default: its cores shared among its node's ranks,
    :func:`cubescale.parallel.analysis.rank_threads`; of the steps after the reading, the
    collectives' cut into as many chunks, the others on one). The report is the same for any
    number.

    ``progress``: called with a status line while the analysis runs (``cubescale analyze`` prints
    it on a terminal): every quarter second the events read of all announced, then the steps
    after the reading; under ``comm``, rank 0's share and steps, and the time correction's rounds.
    In one process, a :class:`RuntimeWarning` as soon as the memory the reading took so far
    projects beyond the memory available (``cubescale._memory``: a trace too large for one
    process is told within its first twentieth, not by the out-of-memory kill at its end).

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.analyze(cubescale.examples.trace_path())
    >>> late = r.values("mpi_latesender", inclusive=False).sum(axis=0)   # per process
    >>> [round(float(x) * 1e6, 3) for x in late]   # microseconds: the shipped ring trace is short
    [0.913, 0.338, 0.0, 0.0]
    >>> delay = cubescale.analyze(cubescale.examples.trace_path(), root_cause=True).values("delay_latesender",
    ...                                                                               inclusive=False)
    >>> bool(delay.sum() > 0)   # some process's time made another wait
    True
    """
    for name, value in (("min_latency", min_latency), ("min_thread_latency", min_thread_latency)):
        if value is not None and not (math.isfinite(value) and value >= 0):  # before any reading
            raise ValueError(f"{name} {value} s: the clock condition's latency must be a number of at least 0")
    if root_cause and comm is not None and comm.size > 1:
        raise ValueError("the root-cause analysis needs one process: run it without mpirun")
    if comm is not None and comm.size > 1:
        from .parallel.analysis import analyze_trace
        from .report import open as open_report

        if output is None:
            raise ValueError("an analysis over a communicator writes its report: give an output path")
        stats = analyze_trace(comm, trace_path, output, compress=compress, time_correct=time_correct,
                              min_latency=min_latency, min_thread_latency=min_thread_latency,
                              threads=None if threads is None else thread_count(threads),
                              progress=progress if comm.rank == 0 else None)
        if comm.rank != 0:
            return None
        report = open_report(output)
        _STATISTICS[report] = _merged_statistics(report, stats["statistics"], time_correct, trace_path)
        return report
    from .commands._inputs import checked_trace
    from .trace import open as open_trace

    anchor = checked_trace(trace_path, output)  # before the reading, not after it
    trace = open_trace(anchor)
    for name, value in (("min_latency", min_latency), ("min_thread_latency", min_thread_latency)):
        if value is not None and value * trace.clock[0] >= 2.0**62:  # as the core's latency_ticks, before reading
            raise ValueError(f"{name} {value} s: the clock condition's latency must be below 2^62 clock ticks")
    columns = trace.location_indices()
    count = available_cores() if threads is None else thread_count(threads)
    # Polled also without progress: a trace outgrowing the memory is told while it is read.
    watch = MemoryProjection(int(trace.announced_events().sum()))

    def status() -> str:
        watch.warn(min(int(trace._core.events_read()), watch.total))
        return _reading_status(trace, root_cause)

    core, stats = run_polled(lambda: _analysis.analyze(trace._core, columns, time_correct=time_correct,
                                                       min_latency=min_latency, root_cause=root_cause, threads=count,
                                                       min_thread_latency=min_thread_latency),
                             status, progress or (lambda text: None))
    local = LocalProfile.__new__(LocalProfile)
    local._core = core
    local.host = None
    local.process = None
    report = trace._report(local, output, compress)
    paths = _call_path_names(core)
    rows = _call_path_rows(report)
    for s in stats["patterns"].values():  # every call path's most severe: the 5 first, ties by row
        s["top"] = _most_severe(s["top"], rows, paths.__getitem__)
    _STATISTICS[report] = _statistics(report, dict(stats, columns=list(columns)), time_correct, paths)
    return report


def _reading_status(trace: Any, root_cause: bool = False) -> str:
    """How far a pass over ``trace`` (a :class:`cubescale.trace.Trace`) got, as a progress line:
    the events read of all its locations announce, then what follows the reading (and the root
    causes' second read of the MPI locations).

    Example
    -------
    >>> import cubescale
    >>> from cubescale.trace import open as open_trace
    >>> _reading_status(open_trace(cubescale.examples.trace_path()))
    'reading events: 0 of 1,448 (0 %)'
    """
    from ._polled import event_count as count

    done, total = int(trace._core.events_read()), int(trace.announced_events().sum())
    if done < total or total == 0:
        return f"reading events: {count(done)}" + (f" of {count(total)} ({100 * done // total} %)" if total else "")
    if root_cause and done > total:
        return f"root causes: events read again: {count(done - total)}"
    return f"{count(total)} events read: matching, collectives, critical path" + (", root causes" if root_cause else "")


@dataclass(frozen=True)
class PatternSummary:
    """One pattern of an analysis: its total time (seconds, over all call paths and
    locations), the call path and the process where it is largest, with their shares.

    Example
    -------
    >>> import cubescale
    >>> p = patterns(analyze(cubescale.examples.trace_path()))[5]
    >>> (p.name, p.call_path, p.process)
    ('mpi_wait_nxn', 'main/solve/MPI_Allreduce', 'MPI Rank 0')
    """

    name: str
    display_name: str
    total: float
    call_path: str
    call_path_time: float
    process: str
    process_time: float


def _path(report: Report, cnode: int) -> str:
    names = []
    c: int | None = cnode
    while c is not None:
        names.append(report.cnodes[c].region.name)
        c = report.cnodes[c].parent
    return "/".join(reversed(names))  # as top, stat and dump print call paths


def patterns(report: Report) -> list[PatternSummary]:
    """The patterns a report holds (in metric order), each summarized.

    Example
    -------
    >>> import cubescale
    >>> [round(p.total * 1e6, 3) for p in patterns(analyze(cubescale.examples.trace_path()))]   # microseconds
    [1.251, 0.0, 0.0, 0.0, 0.095, 3.219, 1.269]
    """
    return _summaries(report, PATTERNS)


def root_causes(report: Report) -> list[PatternSummary]:
    """The root-cause metrics a report holds (``analyze(..., root_cause=True)``; in metric
    order), each summarized as :func:`patterns` does: for a delay cost, the call path and process
    whose time made others wait most.

    Example
    -------
    >>> import cubescale
    >>> r = analyze(cubescale.examples.trace_path(), root_cause=True)
    >>> [(s.name, s.process, round(s.total * 1e6, 3)) for s in root_causes(r) if s.total > 0]
    [('delay_latesender', 'MPI Rank 3', 1.098), ('delay_latereceiver', 'MPI Rank 1', 0.095), ('delay_n2n', 'MPI Rank 3', 3.219)]
    """
    return _summaries(report, ROOT_CAUSES)


def _summaries(report: Report, which: list[str]) -> list[PatternSummary]:
    out = []
    processes = np.array([loc.process for loc in report.locations], dtype=object)
    names, group = np.unique(processes, return_inverse=True) if len(processes) else (np.array([]), np.array([]))
    for m in report.metrics:
        if m.name not in which:
            continue
        values = report.values(m.name, inclusive=False)
        per_path = values.sum(axis=1)
        per_process = np.bincount(group, weights=values.sum(axis=0), minlength=len(names))
        worst_path = int(np.argmax(per_path)) if per_path.size else 0
        worst_process = int(np.argmax(per_process)) if per_process.size else 0
        out.append(PatternSummary(m.name, m.display_name, float(values.sum()), _path(report, worst_path),
                                  float(per_path[worst_path]) if per_path.size else 0.0,
                                  str(names[worst_process]) if len(names) else "",
                                  float(per_process[worst_process]) if per_process.size else 0.0))
    return out


def _per_process(report: Report, values: np.ndarray) -> tuple[list[str], np.ndarray]:
    # The processes in the report's location order (MPI Rank 2 before MPI Rank 10).
    index: dict[str, int] = {}
    group = np.array([index.setdefault(str(loc.process), len(index)) for loc in report.locations], dtype=np.int64)
    names = list(index)
    if not names:
        return [], np.zeros(0)
    return names, np.bincount(group, weights=values, minlength=len(names))


def clock_violations(report: Report) -> dict[str, int]:
    """Clock-condition violations per process as the report counts them (its
    ``clock_violations`` metric: after the time correction when the analysis made one); ``{}``
    for a report without the metric.

    Example
    -------
    >>> import cubescale
    >>> clock_violations(analyze(cubescale.examples.trace_path()))
    {'MPI Rank 0': 37, 'MPI Rank 1': 22, 'MPI Rank 2': 18, 'MPI Rank 3': 0}
    >>> clock_violations(analyze(cubescale.examples.trace_path(), time_correct=True))
    {'MPI Rank 0': 0, 'MPI Rank 1': 0, 'MPI Rank 2': 0, 'MPI Rank 3': 0}
    """
    if "clock_violations" not in [m.name for m in report.metrics]:
        return {}
    names, counts = _per_process(report, report.values("clock_violations", inclusive=False).sum(axis=0).astype(float))
    return {n: int(round(c)) for n, c in zip(names, counts)}


def _clock_line(report: Report) -> str | None:
    counts = clock_violations(report)
    if not counts:
        return None
    total = sum(counts.values())
    found = [(n, c) for n, c in counts.items() if c]
    if len(found) > _SHOWN_PROCESSES:  # the most violations, in the report's order
        most = {n for n, _ in sorted(found, key=lambda nc: -nc[1])[:_SHOWN_PROCESSES]}
        shown = [(n, c) for n, c in found if n in most]
    else:
        shown = found
    where = ", ".join(f"{n}: {c:,}" for n, c in shown)
    if len(found) > len(shown):  # thousands of processes: the most, not one line of every one
        where += f", and {len(found) - len(shown):,} more processes"
    line = f"clock condition violations: {total:,}" + (f" ({where})" if where else "")
    stats = statistics(report)
    if stats is not None and not stats.time_corrected and stats.omp_violations:
        # the kinds, as the corrected line names them: thread violations follow other rules than
        # messages' (and may have a latency of their own, min_thread_latency)
        line += (f"; {stats.p2p_violations:,} point to point, {stats.collective_violations:,} collective, "
                 f"{stats.omp_violations:,} OpenMP")
    if stats is not None and stats.time_corrected:
        openmp = f", {stats.omp_violations:,} OpenMP" if stats.omp_violations else ""
        recorded = stats.p2p_violations + stats.collective_violations + stats.omp_violations
        line += (f"; as recorded {stats.p2p_violations:,} point to point, {stats.collective_violations:,} "
                 f"collective{openmp}" + (f", removed by the time correction ({stats.corrected_jumps:,} events "
                                          "moved forward)" if recorded else ""))
    return line


_SHOWN_PROCESSES = 8  # of the clock condition's line


def trace_stat(report: Report) -> str:
    """Scout's ``trace.stat`` for a report :func:`analyze` made in this process: per pattern
    with waiting time the number of instances, their sum, mean, largest, and the most severe
    instances (one per call path, at most 5) with their time, process (and thread, where the
    process has several), call path and the MPI call's enter and leave, an OpenMP barrier's,
    or a lock acquisition's enter and acquisition (seconds since the trace's start). Empty
    without statistics.

    Example
    -------
    >>> import cubescale
    >>> print(trace_stat(analyze(cubescale.examples.trace_path())))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    pattern             instances  sum [s]    mean [s]  max [s]
    mpi_latesender      29         1.251e-06  4.31e-08  5.9e-08
      - 5.9e-08 s  MPI Rank 0  main/solve/MPI_Recv  enter 0.000012351 s  leave 0.000012410 s
    ...
    """
    stats = statistics(report)
    if stats is None or not stats.patterns:
        return ""
    order = [m.name for m in report.metrics if m.name in stats.patterns]
    rows = [("pattern", "instances", "sum [s]", "mean [s]", "max [s]")]
    rows += [(n, str(stats.patterns[n].count), f"{stats.patterns[n].sum:.4g}", f"{stats.patterns[n].mean:.3g}",
              f"{stats.patterns[n].max:.4g}") for n in order]
    widths = [max(len(row[i]) for row in rows) + 2 for i in range(4)]
    threads = collections.Counter(loc.process for loc in report.locations if loc.type == "thread")  # not GPU streams
    lines = []
    for k, row in enumerate(rows):
        lines.append("".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + row[4])
        if k == 0:
            continue
        end = "acquire" if "lock_contention" in row[0] else "leave"  # a lock's wait ends where it is acquired
        for i in stats.patterns[row[0]].top:
            who = i.process if threads[i.process] <= 1 else f"{i.process}, {i.location}"
            lines.append(f"  - {i.time:.4g} s  {who}  {i.call_path}  enter {i.enter:.9f} s  {end} {i.leave:.9f} s")
    return "\n".join(lines)


def summary(report: Report) -> str:
    """A short text: per pattern with waiting time its total, and the call path and process
    where it is largest; then the patterns without any, the clock-condition violations, and
    for a report :func:`analyze` made in this process the most severe instances
    (:func:`trace_stat`). ``cubescale analyze`` prints it.

    Example
    -------
    >>> import cubescale
    >>> print(summary(analyze(cubescale.examples.trace_path())))  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    pattern             total [s]  most severe call path (s)                 most severe process (s)
    mpi_latesender      1.251e-06  main/solve/MPI_Recv (1.251e-06)       MPI Rank 0 (9.13e-07)
    mpi_latereceiver    9.5e-08    main/solve/MPI_Send (9.5e-08)         MPI Rank 0 (8.3e-08)
    mpi_wait_nxn        3.219e-06  main/solve/MPI_Allreduce (3.219e-06)  MPI Rank 0 (1.125e-06)
    mpi_nxn_completion  1.269e-06  main/solve/MPI_Allreduce (1.269e-06)  MPI Rank 3 (1.131e-06)
    no wait time in mpi_latesender_wo, mpi_lswo_different, mpi_lswo_same
    clock condition violations: 77 (MPI Rank 0: 37, MPI Rank 1: 22, MPI Rank 2: 18)
    most severe instances (as scout's trace.stat):
    pattern             instances  sum [s]    mean [s]  max [s]
    ...
    """
    parts = [_pattern_table(report)]
    causes = [s for s in root_causes(report) if s.total > 0]
    if causes:  # analyze(..., root_cause=True): whose time made others wait
        parts.append(_table(("root cause", "total [s]", "most severe call path (s)", "most severe process (s)"), causes))
    clock = _clock_line(report)
    if clock:
        parts.append(clock)
    stat = trace_stat(report)
    if stat:
        parts.append("most severe instances (as scout's trace.stat):\n" + stat)
    return "\n".join(parts)


def _pattern_table(report: Report) -> str:
    every = patterns(report)
    if not every:
        # (OpenMP barriers and locks are matched within a team: OMPT traces without fork, join or
        # team events leave them unmatched)
        return ("no MPI operation and no OpenMP team (fork, join or team events) for any wait-state pattern "
                "in this trace")
    found = [p for p in every if p.total > 0]
    zero = [p.name for p in every if p.total <= 0]
    if not found:
        return "no wait time in " + ", ".join(zero)
    lines = [_table(("pattern", "total [s]", "most severe call path (s)", "most severe process (s)"), found)]
    if zero:
        lines.append("no wait time in " + ", ".join(zero))
    return "\n".join(lines)


def _table(header: tuple[str, str, str, str], found: list[PatternSummary]) -> str:
    rows = [header]
    rows += [(p.name, f"{p.total:.6g}", f"{p.call_path} ({p.call_path_time:.6g})", f"{p.process} ({p.process_time:.6g})")
             for p in found]
    widths = [max(len(row[i]) for row in rows) + 2 for i in range(3)]
    return "\n".join("".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + row[3] for row in rows)
