"""Cube's three panes: what a metric selection and a call-path selection show.

Cube shows a report as three coupled panes: the metric tree (each metric over the whole
program and machine), the call tree (the selected metric per call path) and the system tree
(the selected metric at the selected call path per location).

Along the metric tree, a metric's *stored* values already include its child metrics (as
CubeLib defines it: Scalasca stores ``mpi_latesender`` including ``mpi_latesender_wo``, a
remapped summary's ``time`` including ``omp_idle_threads``). So a collapsed metric shows its
stored values, and an expanded one its stored values minus its children's stored values
(CubeLib's ``services::expand_metrics``); children are never added to a parent. Along the
call tree, a collapsed call path includes its callees, an expanded one shows its own share.
:meth:`Report.panes <cubescale.Report.panes>` is the entry point; this module holds the
selection logic.

Example
-------
>>> import cubescale
>>> p = cubescale.open(cubescale.examples.report_path()).panes("visits", cnode=0)
>>> int(p.metric_inclusive[0]), p.system[:5].tolist()   # process 0: the master, then 4 workers
(3372, [220.0, 152.0, 152.0, 152.0, 152.0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .dtypes import numpy_type
from .records import Metric

if TYPE_CHECKING:
    from .report import Report

__all__ = ["Panes", "metric_totals", "select", "subtracted_children"]


@dataclass(frozen=True)
class Panes:
    """The values of Cube's three panes for one selection (see :meth:`Report.panes`).

    ``metric_inclusive[m]`` / ``metric_exclusive[m]``: metric ``m`` over the whole program
    and machine as Cube's metric pane shows it collapsed (its stored value, which includes
    its child metrics) / expanded (stored minus its children's stored values).
    ``call_inclusive[c]`` / ``call_exclusive[c]``: the selected metric (collapsed or
    expanded as selected) at call path ``c`` over all locations, with / without the callees
    (collapsed / expanded in the call pane). ``system[l]``: the selected metric at the
    selected call path for location ``l``. Sums, or minimum / maximum for MINDOUBLE /
    MAXDOUBLE metrics.

    Example
    -------
    >>> import cubescale
    >>> p = cubescale.open(cubescale.examples.report_path()).panes("visits", cnode=0)
    >>> int(p.metric_exclusive[0]), int(p.call_inclusive[0]), p.system[:5].tolist()
    (3372, 3372, [220.0, 152.0, 152.0, 152.0, 152.0])
    """

    metric: int
    cnode: int
    metric_inclusive: np.ndarray
    metric_exclusive: np.ndarray
    call_inclusive: np.ndarray
    call_exclusive: np.ndarray
    system: np.ndarray


def metric_totals(report: Report, inclusive: bool = True) -> np.ndarray:
    """Per metric, its value over the whole program and machine (Cube's metric pane):
    with ``inclusive=True`` as a collapsed metric shows it (its stored value, which already
    includes its child metrics), with ``inclusive=False`` as an expanded one (stored minus
    the children's stored values). A derived metric whose expression cannot be computed
    gives NaN (``Report.values`` raises the reason).

    Example
    -------
    >>> import cubescale
    >>> int(metric_totals(cubescale.open(cubescale.examples.report_path()))[0])
    3372
    """
    stored = _stored_totals(report)
    return stored if inclusive else _minus_children(report, stored)


def subtracted_children(report: Report, metric: Metric) -> list[int]:
    """The child metrics whose stored values an expanded ``metric`` leaves out: children
    of the same unit whose values can be subtracted (summable scalars, as the parent).
    CubeLib subtracts every child; Score-P and Scalasca only nest metrics of one unit, so
    the two agree on their reports, and a child of another unit (seconds under bytes) or a
    MIN/MAX or tuple metric, where a difference means nothing, is left alone here.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> subtracted_children(r, r.metric("time"))
    []
    """
    if not _subtractable(metric):
        return []
    return [c for c in metric.children
            if _subtractable(report.metrics[c]) and report.metrics[c].unit == metric.unit]


def select(report: Report, metric: Metric, cnode: int | None = None, metric_expanded: bool = False,
           cnode_expanded: bool = False) -> Panes:
    """The panes for a selection; see :meth:`Report.panes <cubescale.Report.panes>`.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> select(r, r.metric("visits"), 0).call_exclusive[:2].tolist()
    [4.0, 4.0]
    """
    c = int(_roots(report)[0]) if cnode is None else int(cnode)
    if not 0 <= c < report.shape[0]:
        raise IndexError(f"call path {c} out of range ({report.shape[0]} call paths)")
    minus = subtracted_children(report, metric) if metric_expanded else []

    def selected(fn):
        value = fn(report.metrics[metric.index])
        for child in minus:  # stored values include the children: take them out again
            value = value - fn(report.metrics[child])
        return value

    stored = _stored_totals(report)  # once: the expanded totals are derived from it
    return Panes(
        metric=metric.index,
        cnode=c,
        metric_inclusive=stored,
        metric_exclusive=_minus_children(report, stored),
        call_inclusive=selected(lambda x: report.cnode_values(x, inclusive=True)),
        call_exclusive=selected(lambda x: report.cnode_values(x, inclusive=False)),
        system=selected(lambda x: report.system_values(x, c, inclusive=not cnode_expanded)),
    )


def _roots(report: Report) -> np.ndarray:
    """The root call paths (without building the call-path records: they need the regions)."""
    return np.flatnonzero(report.cnode_parents < 0)


def _stored_totals(report: Report) -> np.ndarray:
    roots = _roots(report)
    return np.asarray([_total(report, m, roots) for m in report.metrics], dtype=float)


def _minus_children(report: Report, stored: np.ndarray) -> np.ndarray:
    """Each metric's stored total minus the stored totals of its subtracted children."""
    out = stored.copy()
    for m in report.metrics:
        for child in subtracted_children(report, m):
            out[m.index] -= stored[child]
    return out


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


def _subtractable(metric: Metric) -> bool:
    """Whether differences of the metric's values mean something: summable scalars."""
    return metric.dtype not in ("MINDOUBLE", "MAXDOUBLE") and not numpy_type(metric.dtype)[1]
