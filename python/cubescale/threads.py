"""Thread aggregation: fewer locations per process, the findings kept (the Score-P thread-aggregation paper).

With hundreds of threads per process the per-thread columns dominate a report's size and a
viewer's memory. Each strategy replaces a process's CPU threads by a few locations (other
locations, such as GPU streams, are kept as they are):

=========  ==================================================================================
strategy   what each process keeps (Score-P's ``SCOREP_PROFILING_FORMAT`` in brackets)
=========  ==================================================================================
sum        "aggregated threads": the sum (min / max for MIN/MAXDOUBLE) over its threads,
           plus a metric ``num_threads``: threads that visited the call path (thread_sum)
set        "aggregated threads" with every metric a TAU_ATOMIC tuple (N, min, max, sum, sum
           of squares) over the threads; N = threads that visited the call path (thread_tuple)
key        "master thread", "fastest thread", "slowest thread", "aggregated worker threads":
           fastest / slowest among the workers by work = time outside synchronization
           regions, both always kept (key_threads; no num_threads, as there)
calltree   "cluster i": threads that visited the same call paths, plus num_threads
           (cluster_threads)
value      "cluster i": threads with similar per-call-path time profiles (deterministic
           farthest-first seeding and k-means, at most ``max_clusters``), plus num_threads;
           tells apart threads that CALLTREE cannot, e.g. those that did less work
=========  ==================================================================================

Sums keep every process's totals (exact for integers). For key, calltree and value the
member threads of every new location are in the report's attributes
(:func:`memberships`); a location of a single thread keeps that thread's rank.

Example
-------
>>> import cubescale
>>> r = cubescale.open(cubescale.examples.report_path())
>>> key = cubescale.threads.aggregate(r, "key")
>>> [loc.name for loc in key.locations][:4]
['master thread', 'fastest thread', 'slowest thread', 'aggregated worker threads']
>>> int(key.values("visits", inclusive=None).sum()) == int(r.values("visits", inclusive=None).sum())
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ._core import threads as _threads
from .profile import LocalProfile
from .records import Metric, Region

if TYPE_CHECKING:  # report.py imports this module (Report.aggregate_threads): no cycle at run time
    from .report import Report

__all__ = ["STRATEGIES", "aggregate", "aggregate_profile", "is_synchronization", "memberships"]

STRATEGIES: tuple[str, ...] = tuple(_threads.strategy_names())
"""The strategies' names, in the order of the paper: sum, set, key, calltree, value."""

Synchronization = Callable[[Region], bool] | Iterable[str] | None


def aggregate(report: Report, strategy: str = "sum", *, work_metric: int | str | Metric | None = None,
              synchronization: Synchronization = None, max_clusters: int = 8, tolerance: float = 0.1,
              progress: Callable[[int, int], None] | None = None) -> Report:
    """A new report with every process's CPU threads aggregated by ``strategy``.

    ``work_metric`` is the time metric that tells work from waiting for ``key`` and
    ``value`` (default: ``time``, else the first metric in seconds). ``synchronization``
    overrides which regions are not work: a function ``Region -> bool`` or a collection of
    region names (default: by role, e.g. barriers, critical sections, task waits, and for
    older reports by name, see :func:`is_synchronization`). ``value`` opens a new cluster
    for a thread farther than ``tolerance`` x the largest thread profile from every cluster,
    up to ``max_clusters``. ``progress(done, total)`` is called after each metric. The result
    is in memory; write it with :func:`cubescale.write`.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> s = aggregate(r, "sum")
    >>> s.shape, s.metrics[-1].name    # one location per process, and how many threads it had
    ((21, 4), 'num_threads')
    >>> aggregate(r, "set").metric("time").dtype
    'TAU_ATOMIC'
    """
    options = _options(report.regions, report.metrics, work_metric, synchronization)
    core = _threads.aggregate_report(report._core, _strategy(strategy), max_clusters=int(max_clusters),
                                     tolerance=float(tolerance), progress=progress, **options)
    return type(report)(core, "")  # the input's class: no import of report.py at run time


def aggregate_profile(profile: LocalProfile, strategy: str = "sum", *, work_metric: int | str | Metric | None = None,
                      synchronization: Synchronization = None, max_clusters: int = 8,
                      tolerance: float = 0.1) -> LocalProfile:
    """One rank's :class:`~cubescale.profile.LocalProfile` with its threads aggregated, before
    any value leaves the rank (what ``write_report(..., threads=strategy)`` does). Options as
    for :func:`aggregate`.

    Example
    -------
    >>> import cubescale
    >>> from cubescale.profile import LocalProfile
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> p = LocalProfile.from_report(r, part=(0, 2))
    >>> aggregate_profile(p, "key").locations[:2]
    [('master thread', 'thread'), ('fastest thread', 'thread')]
    """
    options = _options([Region.from_definition(i, d) for i, d in enumerate(profile._core.regions)],
                       [Metric.from_definition(i, d) for i, d in enumerate(profile.metrics)], work_metric,
                       synchronization)
    core = _threads.aggregate_profile(profile._core, _strategy(strategy), max_clusters=int(max_clusters),
                                      tolerance=float(tolerance), **options)
    return LocalProfile._from_core(core, host=profile.host, process=profile.process)


def is_synchronization(region: Region) -> bool:
    """Whether time in ``region`` is synchronization, idling or waiting rather than work: by
    its role (barrier, implicit barrier, critical, taskwait, thread wait, lock, ordered,
    flush) or, for reports that do not record roles, by name (``!$omp implicit barrier``,
    ``omp_set_lock``, ``MPI_Wait*``, ``MPI_Barrier``, ``pthread_join`` ...).

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> sorted({g.name for g in r.regions if is_synchronization(g)})   # the demo's thread barrier
    ['Barrier.wait']
    """
    return bool(_threads.is_synchronization(region.definition()))


def memberships(report: Report) -> dict[tuple[int, str], list[int]]:
    """The threads folded into each location of an aggregated report (key, calltree, value):
    ``{(process rank, location name): [thread ranks]}``, from its attributes.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> memberships(aggregate(r, "calltree"))[(0, "cluster 1")]   # the 4 workers; the master apart
    [1, 2, 3, 4]
    """
    out = {}
    prefix = "cubescale::threads::"
    for key, value in report.attrs.items():
        if key.startswith(prefix):
            rank, _, name = key[len(prefix):].partition("::")
            members: list[int] = []
            for part in value.split():
                first, _, last = part.partition("-")
                members.extend(range(int(first), int(last or first) + 1))
            out[(int(rank), name)] = members
    return out


def _strategy(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"strategy must be a name ({', '.join(STRATEGIES)}), not {type(name).__name__}")
    return name


def _options(regions: list[Region], metrics: list[Metric], work_metric, synchronization) -> dict:
    options: dict = {}
    if work_metric is not None:
        if isinstance(work_metric, Metric):
            work_metric = work_metric.index
        if isinstance(work_metric, str):
            metric_names = [m.name for m in metrics]
            if work_metric not in metric_names:
                raise KeyError(f"no metric {work_metric!r}")
            work_metric = metric_names.index(work_metric)
        options["work_metric"] = int(work_metric)
    if synchronization is not None:
        if callable(synchronization):
            options["synchronization"] = [bool(synchronization(r)) for r in regions]
        else:
            names = {str(n) for n in synchronization}
            options["synchronization"] = [r.name in names for r in regions]
    return options
