"""Flat profiles and statistics across locations, as CubeLib's ``cube_stat`` gives them.

:func:`stat` sums a metric per *region* over all its call paths (the flat profile of
``cube_stat -t N``): exclusive values add the call paths' exclusive values, inclusive values
add the inclusive values of the region's outermost call paths (as ``cube_stat`` does, so a
recursive region's nested calls are counted once, inside their outermost call), visits are
exclusive. Regions are sorted by their exclusive value, largest
first, and the list ends at the first region without visits, as in ``cube_stat``.

MINDOUBLE / MAXDOUBLE metrics combine as CubeLib aggregates them, and as the rest of cubescale
does (``Report.cnode_values``, the panes; docs/cube.md, "Aggregation"): per region and location
the minimum (maximum) over the region's call paths whose rows the report stores (an absent row
has no values; a region without any has 0), and over locations the minimum (maximum) of those;
regions are ranked by that value. Metrics that are not one real number per value (TAU_ATOMIC,
RATE, HISTOGRAM(n), NDOUBLES(n), SCALE_FUNC, COMPLEX) are refused with a ``ValueError``.

For each of those regions it also gives statistics of the per-location values (the
``cube_stat -%`` columns, one row for the inclusive and one for the exclusive value): count,
sum, mean, sample variance, minimum, quartiles, median and maximum. ``cube_stat`` estimates
quartiles and the median with the P² algorithm (exact below five values); here they are exact
(NumPy's linear interpolation between order statistics), and quartiles are given for any
count. See ``docs/score.md``.

The call-path -> region sums run in the C++ core (``_core.stat.group_sums``, one pass over the
``[cnode, location]`` matrix); the statistics are NumPy over the small ``[region, location]``
result.

Example
-------
>>> import cubescale
>>> s = cubescale.stat(cubescale.open(cubescale.examples.report_path()), "time", top=3)
>>> [row.region for row in s.flat]
['Barrier.wait', 'update_chunk', 'MPI_Allreduce']
>>> round(s.flat[0].exclusive, 3), s.flat[0].visits
(20.67, 1220)
>>> st = s.statistics[0]
>>> (st.region, st.kind, st.count, round(st.maximum, 3))
('Barrier.wait', 'inclusive', 20, 1.284)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._core import stat as _stat
from .call_tree import outermost_calls
from .dtypes import is_real
from .report import Metric, Report

__all__ = ["RegionRow", "Stat", "Statistics", "region_values", "stat"]

# cube_stat's pretty printer: the numbers of the statistics table and their captions.
_CAPTIONS = ("Count", "Sum", "Mean", "Variance", "Minimum", "Quartile 25", "Median", "Quartile 75", "Maximum")


@dataclass(frozen=True)
class RegionRow:
    """One region of the flat profile: visits and the metric, exclusive and inclusive, summed
    over all call paths of the region and all locations (for MINDOUBLE / MAXDOUBLE their
    minimum / maximum).

    Example
    -------
    >>> import cubescale
    >>> row = cubescale.stat(cubescale.open(cubescale.examples.report_path()), top=1).flat[0]
    >>> row.region, row.visits
    ('Barrier.wait', 1220)
    """

    region: str
    visits: int | None
    exclusive: float
    inclusive: float


@dataclass(frozen=True)
class Statistics:
    """Statistics of a region's per-location values (``kind``: ``"inclusive"`` or
    ``"exclusive"``); ``variance`` is the sample variance (n - 1), NaN for one location.

    Example
    -------
    >>> import cubescale
    >>> s = cubescale.stat(cubescale.open(cubescale.examples.report_path()), top=1).statistics[1]
    >>> s.kind, s.count, s.minimum <= s.q1 <= s.median <= s.q3 <= s.maximum
    ('exclusive', 20, True)
    """

    region: str
    kind: str
    count: int
    sum: float
    mean: float
    variance: float
    minimum: float
    q1: float
    median: float
    q3: float
    maximum: float


@dataclass(frozen=True)
class Stat:
    """The result of :func:`stat`: the flat profile (``flat``, largest exclusive value first)
    and per-location statistics of those regions (``statistics``: inclusive, then exclusive,
    per region).

    Example
    -------
    >>> import cubescale
    >>> s = cubescale.stat(cubescale.open(cubescale.examples.report_path()), top=2)
    >>> print(s.flat_table().splitlines()[0])
    Region                Visits   Exclusive time   Inclusive time
    """

    metric: str
    unit: str
    integer: bool
    flat: tuple[RegionRow, ...]
    statistics: tuple[Statistics, ...]

    def flat_table(self) -> str:
        """The flat profile as ``cube_stat -p -t N`` prints it (region, visits, exclusive and
        inclusive value).

        Example
        -------
        >>> import cubescale
        >>> s = cubescale.stat(cubescale.open(cubescale.examples.report_path()), top=1)
        >>> print(s.flat_table().splitlines()[1])
        Barrier.wait            1220        20.669523        20.669523
        """
        width = max([len("Region")] + [len(r.region) for r in self.flat]) + 1
        excl, incl = f"Exclusive {self.metric}", f"Inclusive {self.metric}"
        cols = max(14, len(excl) + 1)
        lines = [f"{'Region':<{width}}{'Visits':>14}{excl:>{cols + 2}}{incl:>{cols + 2}}"]
        for r in self.flat:
            visits = "" if r.visits is None else str(r.visits)
            lines.append(f"{r.region:<{width}}{visits:>14}{self._number(r.exclusive):>{cols + 2}}"
                         f"{self._number(r.inclusive):>{cols + 2}}")
        return "\n".join(lines)

    def statistics_table(self) -> str:
        """Statistics across locations as ``cube_stat -p -%`` prints them: one row per
        region and kind (``INCL(region)``, ``EXCL(region)``).

        Example
        -------
        >>> import cubescale
        >>> s = cubescale.stat(cubescale.open(cubescale.examples.report_path()), top=1)
        >>> print(s.statistics_table().splitlines()[0].split())
        ['Routine', 'Count', 'Sum', 'Mean', 'Variance', 'Minimum', 'Quartile', '25', 'Median', 'Quartile', '75', 'Maximum']
        """
        names = [f"{'INCL' if s.kind == 'inclusive' else 'EXCL'}({s.region})" for s in self.statistics]
        width = max([len("Routine")] + [len(n) for n in names]) + 1
        lines = [f"{'Routine':<{width}}" + "".join(f"{c:>15}" for c in _CAPTIONS)]
        for name, s in zip(names, self.statistics):
            numbers = (s.sum, s.mean, s.variance, s.minimum, s.q1, s.median, s.q3, s.maximum)
            lines.append(f"{name:<{width}}{s.count:>15}" + "".join(f"{self._number(v):>15}" for v in numbers))
        return "\n".join(lines)

    def _number(self, value: float) -> str:
        if np.isnan(value):
            return ""
        if self.integer and float(value).is_integer():
            return str(int(value))
        return f"{value:.6f}"


def region_values(report: Report, metric: str | Metric, inclusive: bool) -> np.ndarray:
    """The metric per region and location, ``float64 [region, location]``: the sum over the
    region's call paths of their exclusive values, or of the inclusive values of its outermost
    call paths (those without a caller of the same region: a recursive region's nested calls
    are inside them already), as ``cube_stat`` takes them (CubeLib's ``AggrCube::get_vrsev``
    over ``Region::get_incl_cnodev``); for MINDOUBLE / MAXDOUBLE the minimum / maximum over
    the same call paths whose rows are stored (0 where a region has none). ``ValueError`` for
    metrics that are not one real number per value.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> v = region_values(r, "visits", inclusive=False)
    >>> v.shape, int(v.sum()) == int(r.values("visits", inclusive=False).sum())
    ((19, 20), True)
    >>> high = region_values(r, "max_time", inclusive=False)   # MAXDOUBLE: the longest call
    >>> calls = [c.index for c in r.cnodes if c.region.name == "Barrier.wait"]   # 3 call paths
    >>> wait = r.cnodes[calls[0]].region.index
    >>> bool(high[wait].max() == r.cnode_values("max_time", inclusive=False)[calls].max())
    True
    """
    m = report.metric(metric)
    if not is_real(m.dtype):
        raise ValueError(f"metric {m.name} holds {m.dtype} values; stat needs one real number per value")
    values = report.values(m, inclusive=inclusive)
    if values.dtype not in (np.float64, np.uint64):
        values = values.astype(np.float64)
    cnodes, locations = report.shape
    rows = report._core.cnode_regions().astype(np.uint32)
    counted = (outermost_calls(np.asarray(report.cnode_parents), rows) if inclusive
               else np.ones(cnodes, dtype=bool))
    if m.dtype in ("MINDOUBLE", "MAXDOUBLE"):
        present = np.asarray(report._core.present(m.index, bool(inclusive)), dtype=bool) & counted
        ufunc = np.minimum if m.dtype == "MINDOUBLE" else np.maximum
        return _region_extremes(values, rows, present, len(report.regions), ufunc)
    columns = np.arange(locations, dtype=np.uint32)
    regions = len(report.regions)
    rows[~counted] = regions  # nested calls of a recursive region: into a row dropped below
    return _stat.group_sums(values, rows, regions + 1, columns, locations)[:regions]


_EXTREME_BLOCK = 256  # call-path rows copied at a time while a region's minimum (maximum) is taken


def _region_extremes(values: np.ndarray, rows: np.ndarray, present: np.ndarray, regions: int,
                     ufunc: np.ufunc) -> np.ndarray:
    """Per region and location, ``ufunc`` (np.minimum or np.maximum) over the present rows of
    the region's call paths; 0 for regions without a present row (the panes' rule: an absent
    row has no values, a call path without any shows 0). Copies at most ``_EXTREME_BLOCK``
    rows at a time."""
    out = np.zeros((regions, values.shape[1]), dtype=np.float64)
    cnodes = np.flatnonzero(present)
    if not len(cnodes) or not values.shape[1]:
        return out
    cnodes = cnodes[np.argsort(rows[cnodes], kind="stable")]  # grouped by region, in preorder within one
    starts = np.concatenate(([0], np.flatnonzero(np.diff(rows[cnodes])) + 1, [len(cnodes)]))
    for first, end in zip(starts[:-1].tolist(), starts[1:].tolist()):
        region = int(rows[cnodes[first]])
        acc = np.array(values[cnodes[first]], dtype=np.float64)
        for block in range(first + 1, end, _EXTREME_BLOCK):
            chunk = cnodes[block:min(block + _EXTREME_BLOCK, end)]
            ufunc(acc, ufunc.reduce(values[chunk], axis=0), out=acc)
        out[region] = acc
    return out


def _over_locations(values: np.ndarray, dtype: str) -> np.ndarray:
    """Each row of ``values [region, location]`` combined over the locations as the metric
    combines: the minimum (MINDOUBLE), maximum (MAXDOUBLE) or sum; 0 without locations."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    if dtype == "MINDOUBLE":
        return values.min(axis=1)
    if dtype == "MAXDOUBLE":
        return values.max(axis=1)
    return values.sum(axis=1)


def _statistics(regions: list[str], kind: str, values: np.ndarray) -> list[Statistics]:
    """Statistics of each row of ``values`` ``[region, location]``, all rows at once."""
    q1, median, q3 = np.quantile(values, [0.25, 0.5, 0.75], axis=1)
    n = values.shape[1]
    variance = np.var(values, axis=1, ddof=1) if n > 1 else np.full(len(regions), np.nan)
    sums, means, low, high = values.sum(axis=1), values.mean(axis=1), values.min(axis=1), values.max(axis=1)
    return [Statistics(r, kind, n, float(sums[i]), float(means[i]), float(variance[i]), float(low[i]),
                       float(q1[i]), float(median[i]), float(q3[i]), float(high[i])) for i, r in enumerate(regions)]


def _visits_metric(report: Report) -> Metric | None:
    for name in ("visits", "Visits"):
        try:
            return report.metric(name)
        except KeyError:
            continue
    return None


def stat(report: Report, metric: str | Metric = "time", top: int | None = 10) -> Stat:
    """The ``top`` regions with the largest exclusive ``metric`` (``None``: all regions with
    visits), their visits and inclusive values, and statistics of each across locations.

    Example
    -------
    >>> import cubescale
    >>> s = cubescale.stat(cubescale.open(cubescale.examples.report_path()), "visits", top=2)
    >>> [(row.region, row.exclusive) for row in s.flat]
    [('Barrier.wait', 1220.0), ('cumsum', 480.0)]
    """
    m = report.metric(metric)
    exclusive = region_values(report, m, inclusive=False)
    inclusive = region_values(report, m, inclusive=True)
    visits_metric = _visits_metric(report)
    visits = region_values(report, visits_metric, inclusive=False).sum(axis=1) if visits_metric else None
    excl_total, incl_total = _over_locations(exclusive, m.dtype), _over_locations(inclusive, m.dtype)
    order = np.argsort(-excl_total, kind="stable")  # cube_stat: stable sort by exclusive value
    if visits is not None:
        visited = visits[order] > 0
        order = order[: int(np.argmin(visited)) if not visited.all() else len(order)]  # ends at the first unvisited
    if top is not None:
        order = order[: max(int(top), 0)]
    names = [report.regions[int(i)].name for i in order]
    flat = tuple(RegionRow(name, None if visits is None else int(visits[i]), float(excl_total[i]),
                           float(incl_total[i])) for name, i in zip(names, order))
    statistics: list[Statistics] = []
    if report.shape[1] > 0 and len(order):
        pairs = zip(_statistics(names, "inclusive", inclusive[order]), _statistics(names, "exclusive", exclusive[order]))
        statistics = [s for pair in pairs for s in pair]
    integer = m.dtype in ("UINT64", "INT64") or m.dtype.startswith(("INT", "UINT"))
    return Stat(m.name, m.unit, integer, flat, tuple(statistics))
