"""POP efficiency metrics: how well a parallel run uses its CPUs, and why not (docs/pop.md).

The POP Centre of Excellence judges a run by a hierarchy of efficiencies, each between 0 and 1
(higher is better; POP calls 0.8 acceptable). From the useful computation time ``U[l]`` of
every CPU thread (GPU streams and other locations are no CPUs) and the runtime ``T`` (the
longest CPU thread):

* load balance ``LB = mean(U) / max(U)``;
* communication efficiency ``CommE = max(U) / T``;
* parallel efficiency ``PE = LB × CommE = mean(U) / T``;
* with a wait-state report (``cubescale analyze``, Scalasca's scout): serialisation efficiency
  ``SerE = max(U) / T_ideal`` and transfer efficiency ``TE = T_ideal / T`` (so
  ``CommE = SerE × TE``), where ``T_ideal`` is the runtime without the MPI time in which no
  partner was late (the time an ideal network would not spend), taken per process: a process
  lasts as long as its longest thread, and loses the transfer time of its MPI thread;
* over several runs of different scale: computation scalability ``CompS = sum(U) of the
  smallest run / sum(U)`` (strong scaling; weak scaling scales by the number of locations) and
  global efficiency ``GE = PE × CompS``.

Useful computation is time outside MPI and the OpenMP runtime: ``comp`` where a Scalasca report
has it, else ``execution - mpi - omp_time`` of a Scalasca metric tree, else (Score-P profiles)
``time`` minus the exclusive time of MPI regions and of the OpenMP runtime's regions (as
Score-P's own metric tree, ``scorep.spec``'s ``omp_time``, counts them: parallel-region
management, barriers, critical, atomic, flush, ordered, locks).

Reports whose locations aggregate threads (``cubescale threads``) are refused: POP needs
every thread's own time.

Example
-------
>>> import cubescale
>>> runs = pop_metrics(cubescale.open(cubescale.examples.report_path()))
>>> round(runs[0].parallel_efficiency, 4) == round(runs[0].load_balance * runs[0].communication_efficiency, 4)
True
>>> print(table_text(runs).splitlines()[2])        # doctest: +NORMALIZE_WHITESPACE
Global efficiency             ...%
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._optional import require
from .dtypes import is_scalar

if TYPE_CHECKING:  # report.py imports this module (Report.pop): no cycle at run time
    from .report import Report

__all__ = ["METRICS", "WAIT_STATES", "PopRun", "cpu_locations", "ideal_runtime", "location_time", "mpi_time", "pop",
           "pop_metrics", "table_text", "transfer_time", "useful_time", "wait_time"]

WAIT_STATES = ("mpi_latesender", "mpi_latereceiver", "mpi_barrier_wait", "mpi_wait_nxn", "mpi_latebroadcast",
               "mpi_earlyreduce", "mpi_earlyscan", "mpi_finalize_wait")
"""Scalasca's MPI wait-state patterns (none inside another): time a location waited in MPI
for a late partner. The rest of the MPI time (completions, data movement) is transfer."""

METRICS = ("Global efficiency", "Parallel efficiency", "Load balance", "Communication efficiency",
           "Serialisation efficiency", "Transfer efficiency", "Computation scalability")
"""The efficiencies in POP's order (the rows of :func:`pop`'s frame)."""

# The OpenMP runtime's regions, by name as Score-P's own metric tree counts them (scorep.spec's
# omp_time: management, flush, barriers, atomic, critical, ordered, the lock API); loop bodies,
# master, single and the like are the program's computation.
_OMP_RUNTIME = re.compile(r"^(!\$omp (parallel\s@|flush|barrier|implicit barrier|atomic|critical(?! sblock)|ordered\s@)"
                          r"|omp_.*_lock$)")


@dataclass(frozen=True)
class PopRun:
    """The POP metrics of one run. Efficiencies are fractions (1.0 = 100 %); those that need a
    wait-state report are None without one.

    Example
    -------
    >>> import cubescale
    >>> run = pop_metrics(cubescale.open(cubescale.examples.report_path()))[0]
    >>> run.name, run.locations, run.processes
    ('demo.cubex', 20, 4)
    """

    name: str
    processes: int
    locations: int
    runtime: float
    useful: np.ndarray  # per location, seconds
    useful_from: str
    ideal_runtime: float | None
    load_balance: float
    communication_efficiency: float
    parallel_efficiency: float
    serialisation_efficiency: float | None
    transfer_efficiency: float | None
    computation_scalability: float
    global_efficiency: float
    other_locations: int = 0  # GPU streams and other locations that are no CPUs, left out

    def efficiencies(self) -> dict[str, float | None]:
        """The efficiencies by their POP names, in POP's order.

        Example
        -------
        >>> import cubescale
        >>> list(pop_metrics(cubescale.open(cubescale.examples.report_path()))[0].efficiencies())[:2]
        ['Global efficiency', 'Parallel efficiency']
        """
        return dict(zip(METRICS, (self.global_efficiency, self.parallel_efficiency, self.load_balance,
                                  self.communication_efficiency, self.serialisation_efficiency,
                                  self.transfer_efficiency, self.computation_scalability)))


def _has(report: Report, name: str) -> bool:
    return any(m.name == name for m in report.metrics)


def _name(report: Report) -> str:
    return report.path or "the report"


def _totals(report: Report, metric: str) -> np.ndarray:
    """Per location, a metric over the whole call tree (its roots' inclusive values): the C++
    core reads only the rows it needs."""
    dtype = report.metric(metric).dtype
    if not is_scalar(dtype):  # TAU_ATOMIC tuples (threads --strategy set): statistics, not one time
        raise ValueError(f"{_name(report)}: its metric {metric!r} holds {dtype} values, not one number per "
                         f"location; POP metrics need every thread's own time")
    roots = [c.index for c in report.cnodes if c.parent is None]
    total = np.zeros(report.shape[1])
    for root in roots:
        total += report.system_values(metric, root, inclusive=True)
    return total


def _region_time(report: Report, chosen) -> np.ndarray:
    """Per location, the exclusive ``time`` of the call paths whose region ``chosen`` accepts."""
    mask = np.array([chosen(c.region) for c in report.cnodes], dtype=bool)
    if not mask.any():
        return np.zeros(report.shape[1])
    return np.asarray(report.values("time", inclusive=False), dtype=np.float64)[mask].sum(axis=0)


def _paradigm(region) -> str:
    """The region's paradigm; Score-P 1.x wrote it into the description instead."""
    return region.paradigm or region.description


def _is_mpi(region) -> bool:
    # scorep.spec counts the module "MPI"; newer files leave the module empty, so also the
    # paradigm with an MPI_ name (which leaves out Score-P's artificial PARALLEL region)
    return region.module == "MPI" or (_paradigm(region) == "mpi" and region.name.lower().startswith("mpi_"))


def _is_omp_runtime(region) -> bool:
    return _paradigm(region) == "openmp" and bool(_OMP_RUNTIME.match(region.name.lower()))


# What `cubescale threads` (and Score-P's thread aggregation) name the locations that stand for
# several threads; "cluster N" of calltree / value comes with num_threads.
_AGGREGATE_NAMES = ("aggregated threads", "aggregated worker threads")


def _aggregated(report: Report) -> str | None:
    """Why the report's locations are aggregates of threads, or None if they are threads."""
    if _has(report, "num_threads"):
        return "its metric 'num_threads' counts the threads in each"
    named = next((loc.name for loc in report.locations if loc.name.lower() in _AGGREGATE_NAMES), None)
    if named is not None:
        return f"a location is named {named!r}"
    return None


def cpu_locations(report: Report) -> np.ndarray:
    """Which locations are CPU threads (a boolean mask): POP's CPUs. GPU streams and metric
    locations are no CPUs; an idle stream would otherwise count as an idle CPU. Refuses, in
    one line, reports whose locations aggregate threads (``cubescale threads``): their times
    are sums or statistics over threads, so no runtime or balance can be told from them.

    Example
    -------
    >>> import cubescale
    >>> int(cpu_locations(cubescale.open(cubescale.examples.report_path())).sum())
    20
    """
    reason = _aggregated(report)
    if reason is not None:
        raise ValueError(f"{_name(report)}: its locations aggregate threads ({reason}); POP metrics need every "
                         f"thread's own time: use the report before `cubescale threads`")
    mask = np.array([loc.type == "thread" for loc in report.locations], dtype=bool)
    if not mask.any():
        raise ValueError(f"{_name(report)} has no CPU thread locations (only GPU streams or metrics): "
                         f"POP metrics count CPUs")
    return mask


def location_time(report: Report) -> np.ndarray:
    """Per location, its ``time`` over the whole call tree (the longest is the runtime).

    Example
    -------
    >>> import cubescale
    >>> round(float(location_time(cubescale.open(cubescale.examples.report_path())).max()), 4)
    1.3305
    """
    if not _has(report, "time"):
        raise ValueError(f"{_name(report)} has no metric 'time': POP metrics need it")
    return _totals(report, "time")


def mpi_time(report: Report) -> np.ndarray:
    """Per location, the time in MPI: the ``mpi`` metric of a Scalasca metric tree, else the
    exclusive time of call paths of MPI regions.

    Example
    -------
    >>> import cubescale
    >>> bool((mpi_time(cubescale.open(cubescale.examples.report_path())) >= 0).all())
    True
    """
    return _totals(report, "mpi") if _has(report, "mpi") else _region_time(report, _is_mpi)


def useful_time(report: Report) -> tuple[np.ndarray, str]:
    """Per location, the useful computation time (outside MPI and the OpenMP runtime), and
    where it came from: ``"comp"``, ``"execution - mpi - omp_time"`` (the metrics a Scalasca
    tree has) or ``"time - MPI and OpenMP runtime regions"`` (Score-P profiles).

    Example
    -------
    >>> import cubescale
    >>> useful, source = useful_time(cubescale.open(cubescale.examples.report_path()))
    >>> useful.shape, source
    ((20,), 'time - MPI and OpenMP runtime regions')
    """
    if _has(report, "comp"):
        return _totals(report, "comp"), "comp"
    if _has(report, "execution"):
        parts = [name for name in ("mpi", "omp_time") if _has(report, name)]
        useful = _totals(report, "execution") - sum((_totals(report, p) for p in parts), np.zeros(report.shape[1]))
        return useful, " - ".join(["execution", *parts])
    useful = location_time(report) - _region_time(report, lambda g: _is_mpi(g) or _is_omp_runtime(g))
    return useful, "time - MPI and OpenMP runtime regions"


def wait_time(scout: Report) -> np.ndarray | None:
    """Per location, the time in Scalasca's MPI wait states (:data:`WAIT_STATES` present in
    the report), or None if it has none (not a wait-state report).

    Example
    -------
    >>> import cubescale
    >>> waits = wait_time(cubescale.analyze(cubescale.examples.trace_path()))
    >>> waits.shape, bool((waits > 0).any())
    ((4,), True)
    >>> wait_time(cubescale.open(cubescale.examples.report_path())) is None
    True
    """
    present = [name for name in WAIT_STATES if _has(scout, name)]
    if not present:
        return None
    return sum((_totals(scout, name) for name in present), np.zeros(scout.shape[1]))


def _mpi_io_time(report: Report) -> np.ndarray:
    """Per location, the time in MPI file I/O (the ``mpi_io`` metric of a Scalasca tree, else
    the exclusive time of ``MPI_File_*`` calls): no network transfer, as Cube's advisor counts it."""
    if _has(report, "mpi") and _has(report, "mpi_io"):
        return _totals(report, "mpi_io")
    return _region_time(report, lambda g: _is_mpi(g) and g.name.lower().startswith("mpi_file"))


def transfer_time(report: Report, scout: Report) -> np.ndarray:
    """Per location, the MPI time an ideal network would not spend: ``mpi − waits − MPI I/O``
    (never below 0), the MPI time from ``report`` and the wait states from ``scout`` (the
    same run's wait-state report; the report itself if it holds them), as Cube's advisor
    defines its transfer time.

    Example
    -------
    >>> import cubescale
    >>> scout = cubescale.analyze(cubescale.examples.trace_path())
    >>> bool((transfer_time(scout, scout) >= 0).all())
    True
    """
    waits = wait_time(scout)
    if waits is None:
        raise ValueError(f"{scout.path or 'the wait-state report'} holds none of Scalasca's wait-state metrics "
                         f"({', '.join(WAIT_STATES[:3])} ...); `cubescale analyze` writes them")
    if scout.shape[1] != report.shape[1]:
        raise ValueError(f"the wait-state report {scout.path or ''} has {scout.shape[1]} locations, the report "
                         f"{report.path or ''} {report.shape[1]}: they must come from the same run")
    return np.maximum(mpi_time(report) - waits - _mpi_io_time(report), 0.0)


def ideal_runtime(report: Report, per_location: np.ndarray, transfer: np.ndarray) -> float:
    """The runtime on an ideal network from each location's time and transfer time, process
    by process (POP's hybrid model): a process lasts as long as its longest CPU thread and
    loses its MPI thread's transfer time (the largest of its threads', so that threads that
    transfer at the same time are not counted twice). Per location instead, a worker
    thread idling while its master communicates would set the maximum and hide the transfer.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> ideal_runtime(r, location_time(r), np.zeros(r.shape[1])) == float(location_time(r).max())
    True
    """
    cpu = cpu_locations(report)
    ranks = np.array([loc.process_rank for loc in report.locations])[cpu]
    _, process = np.unique(ranks, return_inverse=True)
    longest = np.zeros(process.max() + 1)
    moved = np.zeros_like(longest)
    np.maximum.at(longest, process, per_location[cpu])
    np.maximum.at(moved, process, transfer[cpu])
    return float((longest - moved).max())


def _one_run(report: Report, scout: Report | None) -> dict:
    """The metrics of one run that do not need the other runs, over its CPU threads."""
    cpu = cpu_locations(report)
    per_location = location_time(report)
    useful_all, source = useful_time(report)
    useful = useful_all[cpu]
    runtime = float(per_location[cpu].max())
    if runtime <= 0:
        raise ValueError(f"{_name(report)}: its time is zero everywhere; no efficiency to compute")
    if scout is not None:
        cpu_locations(scout)  # a thread-aggregated wait-state report is refused as well
    top = float(useful.max())
    result = {"runtime": runtime, "useful": useful, "useful_from": source, "ideal_runtime": None,
              "load_balance": float(useful.mean()) / top if top > 0 else 0.0,
              "communication_efficiency": top / runtime, "serialisation_efficiency": None,
              "transfer_efficiency": None, "other_locations": int((~cpu).sum())}
    if scout is not None or wait_time(report) is not None:
        ideal = ideal_runtime(report, per_location, transfer_time(report, scout if scout is not None else report))
        result.update(ideal_runtime=ideal, serialisation_efficiency=top / ideal if ideal > 0 else 0.0,
                      transfer_efficiency=ideal / runtime)
    return result


def _as_list(value, n: int, what: str) -> list:
    if value is None:
        return [None] * n
    items = list(value) if isinstance(value, (list, tuple)) else [value]  # one report, or one per run
    if len(items) != n:
        raise ValueError(f"{what}: {len(items)} given for {n} runs")
    return items


def _names(reports: Sequence[Report]) -> list[str]:
    names = [os.path.basename(r.path) if r.path else f"run {i + 1}" for i, r in enumerate(reports)]
    if len(set(names)) < len(names):  # the same file name in several folders
        names = [f"{i + 1}: {n}" for i, n in enumerate(names)]
    return names


def pop_metrics(reports: Report | Sequence[Report], scout: Report | Sequence[Report | None] | None = None,
                scaling: str = "strong") -> list[PopRun]:
    """The POP metrics of one run or of several runs of different scale, as :class:`PopRun`
    records (NumPy only). ``scout`` is a wait-state report of each run (``cubescale analyze``
    of its trace; a report that holds wait states is its own). Computation scalability is
    relative to the run with the fewest locations; ``scaling="weak"`` expects the useful time
    to grow with the number of locations.

    Example
    -------
    >>> import cubescale
    >>> report = cubescale.open(cubescale.examples.report_path())
    >>> runs = pop_metrics([report, report])
    >>> [round(r.computation_scalability, 6) for r in runs]
    [1.0, 1.0]
    """
    if scaling not in ("strong", "weak"):
        raise ValueError(f"scaling= must be 'strong' or 'weak', not {scaling!r}")
    reports = list(reports) if isinstance(reports, (list, tuple)) else [reports]  # type: ignore[list-item]
    if not reports:
        raise ValueError("POP metrics need at least one report")
    scouts = _as_list(scout, len(reports), "wait-state reports")
    parts = [_one_run(r, s) for r, s in zip(reports, scouts)]
    sizes = [len(p["useful"]) for p in parts]  # CPUs
    reference = int(np.argmin(sizes))  # the first of the smallest runs
    reference_useful = float(parts[reference]["useful"].sum())
    runs = []
    for name, report, part, size in zip(_names(reports), reports, parts, sizes):
        useful_sum = float(part["useful"].sum())
        expected = reference_useful * (size / sizes[reference] if scaling == "weak" else 1.0)
        scalability = expected / useful_sum if useful_sum > 0 else 0.0
        parallel = part["load_balance"] * part["communication_efficiency"]
        processes = len({loc.process_rank for loc, cpu in zip(report.locations, cpu_locations(report)) if cpu})
        runs.append(PopRun(name=name, processes=processes, locations=size,
                           parallel_efficiency=parallel, computation_scalability=scalability,
                           global_efficiency=parallel * scalability, **part))
    return runs


def pop(reports: Report | Sequence[Report], scout: Report | Sequence[Report | None] | None = None,
        scaling: str = "strong"):
    """The POP metrics as a pandas DataFrame: one column per run, one row per efficiency
    (:data:`METRICS`, fractions; NaN where a wait-state report is missing) and the rows
    ``processes``, ``locations``, ``runtime``, ``useful mean``, ``useful max`` (seconds).
    Needs pandas (``pip install 'cubescale[pandas]'``); :func:`pop_metrics` does not.

    Example
    -------
    >>> import cubescale
    >>> frame = cubescale.pop(cubescale.open(cubescale.examples.report_path()))
    >>> list(frame.columns), float(frame.loc["locations", "demo.cubex"])
    (['demo.cubex'], 20.0)
    """
    pd = require("pandas", "pandas", "pop")
    runs = pop_metrics(reports, scout, scaling)
    rows = list(METRICS) + ["processes", "locations", "runtime", "useful mean", "useful max"]
    columns = {}
    for run in runs:
        efficiencies = [np.nan if v is None else v for v in run.efficiencies().values()]
        columns[run.name] = efficiencies + [run.processes, run.locations, run.runtime, float(run.useful.mean()),
                                            float(run.useful.max())]
    return pd.DataFrame(columns, index=rows, dtype=float)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100.0 * value:.2f}%"


def table_text(runs: Sequence[PopRun]) -> str:
    """POP's table: the efficiencies indented by their place in the hierarchy, one column per
    run, then the numbers they come from.

    Example
    -------
    >>> import cubescale
    >>> print(table_text(pop_metrics(cubescale.open(cubescale.examples.report_path()))))  # doctest: +ELLIPSIS
    POP metrics                   demo.cubex
    (useful computation: time - MPI and OpenMP runtime regions)
    Global efficiency ...
    """
    width = max(14, *(len(r.name) + 2 for r in runs))
    indent = {"Global efficiency": 0, "Parallel efficiency": 1, "Load balance": 2, "Communication efficiency": 2,
              "Serialisation efficiency": 3, "Transfer efficiency": 3, "Computation scalability": 1}
    sources = sorted({r.useful_from for r in runs})
    lines = [f"{'POP metrics':<34}" + "".join(f"{r.name:>{width}}" for r in runs),
             f"(useful computation: {'; '.join(sources)})"]
    if any(r.other_locations for r in runs):  # say why the location count is below the file's
        lines.append(f"(CPU threads only: left out {', '.join(str(r.other_locations) for r in runs)} "
                     f"GPU or other locations)")
    for name in METRICS:
        label = ("  " * indent[name] + ("-- " if indent[name] else "") + name)
        lines.append(f"{label:<34}" + "".join(f"{_percent(r.efficiencies()[name]):>{width}}" for r in runs))
    lines.append(f"{'Processes / CPU threads':<34}" + "".join(f"{f'{r.processes} / {r.locations}':>{width}}" for r in runs))
    lines.append(f"{'Runtime (s)':<34}" + "".join(f"{r.runtime:>{width}.6g}" for r in runs))
    lines.append(f"{'Useful mean / max (s)':<34}" +
                 "".join(f"{f'{r.useful.mean():.4g} / {r.useful.max():.4g}':>{width}}" for r in runs))
    if any(r.ideal_runtime is not None for r in runs):
        lines.append(f"{'Runtime, ideal network (s)':<34}" +
                     "".join(f"{'-' if r.ideal_runtime is None else f'{r.ideal_runtime:.6g}':>{width}}" for r in runs))
    return "\n".join(lines)
