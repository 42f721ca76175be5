"""Wait-state analysis of OTF2 traces (the Scalasca architecture paper, section 5.2): where MPI processes wait, and
why, as Scalasca's scout names it.

:func:`analyze` reads a trace once (the C++ core, ``_core.analysis``): beside the trace ->
profile builder it keeps one small record per MPI message and collective, matches them across
locations and computes Scalasca's patterns (``mpi_latesender``, ``mpi_barrier_wait``,
``mpi_wait_nxn``, ``mpi_latebroadcast``, ``mpi_earlyreduce``). The result is the call-path
profile of the same trace with Scalasca's metric tree below ``time`` (``execution`` > ``mpi`` >
``mpi_communication`` > ``mpi_point2point`` > ``mpi_latesender`` ...), each pattern on the call
path of the MPI call where the waiting happened, on the waiting location. A parent metric
stores its children's values too (CubeLib reads metric trees so). With an mpi4py communicator
the analysis is a parallel replay: each rank analyzes a share of the locations and the ranks
exchange only their communication records (:mod:`cubescale.parallel.analysis`); the report is
the same byte for byte for any number of ranks. Inconsistent traces raise
:class:`cubescale.FormatError` naming the location's event file, the event and its time.
docs/analysis.md has the definitions.

Example
-------
>>> import cubescale
>>> report = cubescale.analyze(cubescale.examples.trace_path())
>>> [p.name for p in patterns(report)]  # doctest: +NORMALIZE_WHITESPACE
['mpi_latesender', 'mpi_latesender_wo', 'mpi_lswo_different', 'mpi_lswo_same', 'mpi_wait_nxn',
 'mpi_nxn_completion']
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._core import analysis as _analysis
from .profile import LocalProfile
from .report import Report

__all__ = ["PATTERNS", "PatternSummary", "analyze", "patterns", "summary"]

PATTERNS: list[str] = list(_analysis.pattern_names())
"""Unique names (Scalasca's) of the patterns the analysis computes."""


def analyze(trace_path: str | os.PathLike, output: str | os.PathLike | None = None, compress: bool = False,
            comm: Any = None) -> Report:
    """The wait-state analysis of an OTF2 trace (its anchor, ``traces.otf2``) as a
    :class:`cubescale.Report`: the trace's call-path profile (visits, time, ...) plus Scalasca's
    pattern metrics below ``time``, for the patterns whose MPI operations occur. Written to
    ``output`` (``.cubex``) as well when given.

    ``comm`` (an mpi4py communicator): collective over its ranks, each analyzing a share of
    the trace's locations (:func:`cubescale.parallel.analysis.analyze_trace`); ``output`` is
    needed then, rank 0 writes it, and the file is the same for any number of ranks and the
    same as without ``comm``. Inconsistent traces raise :class:`cubescale.FormatError` (on
    every rank) and write nothing.

    Example
    -------
    >>> import cubescale
    >>> r = analyze(cubescale.examples.trace_path())
    >>> late = r.values("mpi_latesender", inclusive=False).sum(axis=0)   # per process
    >>> [round(float(x) * 1e6, 3) for x in late]   # microseconds: the shipped ring trace is short
    [0.913, 0.338, 0.0, 0.0]
    """
    from . import trace

    if comm is not None:
        from .parallel.analysis import analyze_trace
        from .report import open as open_report

        if output is None:
            raise ValueError("an analysis over a communicator writes its report: give an output path")
        analyze_trace(comm, trace_path, output, compress)
        return open_report(output)
    trace = trace.open(trace_path)
    core, _ = _analysis.analyze(trace._core, trace.location_indices())
    local = LocalProfile.__new__(LocalProfile)
    local._core = core
    local.host = None
    local.process = None
    return trace._report(local, output, compress)


@dataclass(frozen=True)
class PatternSummary:
    """One pattern of an analysis: its total time (seconds, over all call paths and
    locations), the call path and the process where it is largest, with their shares.

    Example
    -------
    >>> import cubescale
    >>> p = patterns(analyze(cubescale.examples.trace_path()))[4]
    >>> (p.name, p.call_path, p.process)
    ('mpi_wait_nxn', 'main > solve > MPI_Allreduce', 'MPI Rank 0')
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
    return " > ".join(reversed(names))


def patterns(report: Report) -> list[PatternSummary]:
    """The patterns a report holds (in metric order), each summarized.

    Example
    -------
    >>> import cubescale
    >>> [round(p.total * 1e6, 3) for p in patterns(analyze(cubescale.examples.trace_path()))]   # microseconds
    [1.251, 0.0, 0.0, 0.0, 3.219, 1.269]
    """
    out = []
    processes = np.array([loc.process for loc in report.locations], dtype=object)
    names, group = np.unique(processes, return_inverse=True) if len(processes) else (np.array([]), np.array([]))
    for m in report.metrics:
        if m.name not in PATTERNS:
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


def summary(report: Report) -> str:
    """A short text: per pattern with waiting time its total, and the call path and process
    where it is largest; then the patterns without any (``cubescale analyze`` prints it).

    Example
    -------
    >>> import cubescale
    >>> print(summary(analyze(cubescale.examples.trace_path())))  # doctest: +NORMALIZE_WHITESPACE
    pattern             total [s]  most severe call path (s)                 most severe process (s)
    mpi_latesender      1.251e-06  main > solve > MPI_Recv (1.251e-06)       MPI Rank 0 (9.13e-07)
    mpi_wait_nxn        3.219e-06  main > solve > MPI_Allreduce (3.219e-06)  MPI Rank 0 (1.125e-06)
    mpi_nxn_completion  1.269e-06  main > solve > MPI_Allreduce (1.269e-06)  MPI Rank 3 (1.131e-06)
    no wait time in mpi_latesender_wo, mpi_lswo_different, mpi_lswo_same
    """
    every = patterns(report)
    if not every:
        return "no MPI operation for any wait-state pattern in this trace"
    found = [p for p in every if p.total > 0]
    zero = [p.name for p in every if p.total <= 0]
    if not found:
        return "no wait time in " + ", ".join(zero)
    rows = [("pattern", "total [s]", "most severe call path (s)", "most severe process (s)")]
    rows += [(p.name, f"{p.total:.6g}", f"{p.call_path} ({p.call_path_time:.6g})", f"{p.process} ({p.process_time:.6g})")
             for p in found]
    widths = [max(len(row[i]) for row in rows) + 2 for i in range(3)]
    lines = ["".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + row[3] for row in rows]
    if zero:
        lines.append("no wait time in " + ", ".join(zero))
    return "\n".join(lines)
