"""Cube's three panes: what a metric selection and a call-path selection show.

Cube shows a report as three coupled panes: the metric tree (each metric over the whole
program and machine), the call tree (the selected metric per call path) and the system tree
(the selected metric at the selected call path per location). A collapsed metric includes
its child metrics of the same unit; a collapsed call path includes its callees.
:meth:`Report.panes <cubescale.Report.panes>` is the entry point; this module holds the
selection logic.

Example
-------
>>> import cubescale
>>> p = cubescale.open(cubescale.report._example_path()).panes("visits", cnode=0)
>>> int(p.metric_own[0]), p.system.tolist()
(72, [72.0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .dtypes import numpy_type
from .records import Metric

if TYPE_CHECKING:
    from .report import Report

__all__ = ["Panes", "metric_family", "metric_totals", "select"]


@dataclass(frozen=True)
class Panes:
    """The values of Cube's three panes for one selection (see :meth:`Report.panes`).

    ``metric_own[m]`` / ``metric_inclusive[m]``: metric ``m`` over the whole program and
    machine, without / with its child metrics (a node expanded / collapsed in the metric
    pane). ``call_inclusive[c]`` / ``call_exclusive[c]``: the selected metric at call path
    ``c`` over all locations, with / without the callees (collapsed / expanded in the call
    pane). ``system[l]``: the selected metric at the selected call path for location ``l``.
    Sums, or minimum / maximum for MINDOUBLE / MAXDOUBLE metrics.

    Example
    -------
    >>> import cubescale
    >>> p = cubescale.open(cubescale.report._example_path()).panes("visits", cnode=0)
    >>> int(p.metric_own[0]), int(p.call_inclusive[0]), p.system.tolist()
    (72, 72, [72.0])
    """

    metric: int
    cnode: int
    metric_own: np.ndarray
    metric_inclusive: np.ndarray
    call_inclusive: np.ndarray
    call_exclusive: np.ndarray
    system: np.ndarray


def metric_totals(report: Report, inclusive: bool = True) -> np.ndarray:
    """Per metric, its value over the whole program and machine (Cube's metric pane); with
    ``inclusive=True`` a metric includes its child metrics of the same unit. A derived metric
    whose expression cannot be computed gives NaN (``Report.values`` raises the reason).

    Example
    -------
    >>> import cubescale
    >>> int(metric_totals(cubescale.open(cubescale.report._example_path()))[0])
    72
    """
    own = _own_totals(report)
    return _with_child_metrics(report, own) if inclusive else own


def metric_family(report: Report, metric: Metric) -> list[int]:
    """The metric and its descendants that add up with it: summable scalar metrics of the
    same unit (Cube's collapsed metric node). MIN/MAX metrics and tuples stand alone.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.report._example_path())
    >>> metric_family(r, r.metric("visits"))
    [0]
    """
    if not _summable(metric) or numpy_type(metric.dtype)[1]:
        return [metric.index]
    family, stack = [], [metric.index]
    while stack:
        m = report.metrics[stack.pop()]
        if m.index == metric.index or (_summable(m) and m.unit == metric.unit and not numpy_type(m.dtype)[1]):
            family.append(m.index)
            stack.extend(m.children)
    return family


def select(report: Report, metric: Metric, cnode: int | None = None, metric_expanded: bool = False,
           cnode_expanded: bool = False) -> Panes:
    """The panes for a selection; see :meth:`Report.panes <cubescale.Report.panes>`.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.report._example_path())
    >>> select(r, r.metric("visits"), 0).call_exclusive[:2].tolist()
    [1.0, 1.0]
    """
    c = int(_roots(report)[0]) if cnode is None else int(cnode)
    if not 0 <= c < report.shape[0]:
        raise IndexError(f"call path {c} out of range ({report.shape[0]} call paths)")
    family = [metric.index] if metric_expanded else metric_family(report, metric)

    def combined(fn):
        parts = [fn(report.metrics[f]) for f in family]
        return parts[0] if len(parts) == 1 else np.sum(parts, axis=0)

    own = _own_totals(report)  # once: the inclusive totals are derived from it
    return Panes(
        metric=metric.index,
        cnode=c,
        metric_own=own,
        metric_inclusive=_with_child_metrics(report, own),
        call_inclusive=combined(lambda x: report.cnode_values(x, inclusive=True)),
        call_exclusive=combined(lambda x: report.cnode_values(x, inclusive=False)),
        system=combined(lambda x: report.system_values(x, c, inclusive=not cnode_expanded)),
    )


def _roots(report: Report) -> np.ndarray:
    """The root call paths (without building the call-path records: they need the regions)."""
    return np.flatnonzero(report.cnode_parents < 0)


def _own_totals(report: Report) -> np.ndarray:
    roots = _roots(report)
    return np.asarray([_total(report, m, roots) for m in report.metrics], dtype=float)


def _with_child_metrics(report: Report, own: np.ndarray) -> np.ndarray:
    return np.asarray([sum(own[d] for d in metric_family(report, m)) for m in report.metrics])


def _total(report: Report, metric: Metric, roots: np.ndarray) -> float:
    if numpy_type(metric.dtype)[1]:  # tuples (TAU_ATOMIC, NDOUBLES ...): no single total
        return 0.0
    try:
        at_roots = report.cnode_values(metric, inclusive=True)[roots]
    except ValueError:
        if not metric.derived:
            raise
        return float("nan")  # an expression outside the supported CubePL subset: values() says why
    if metric.dtype == "MINDOUBLE":
        return float(at_roots.min())
    if metric.dtype == "MAXDOUBLE":
        return float(at_roots.max())
    return float(at_roots.sum())


def _summable(metric: Metric) -> bool:
    return metric.dtype not in ("MINDOUBLE", "MAXDOUBLE")
