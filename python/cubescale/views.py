"""Views of a report for people: indented call-tree text, the largest values by call path
and process, HTML for notebooks, pandas frames.

:class:`~cubescale.Report` exposes these as methods (``call_tree_text``, ``to_dataframe``,
``_repr_html_``); the functions here take the report as their first argument.

Example
-------
>>> import cubescale
>>> from cubescale.views import call_tree_text
>>> r = cubescale.open(cubescale.examples.report_path())
>>> print(call_tree_text(r, "visits", max_depth=0))
visits (occ, inclusive)
3372  stencil.py
"""

from __future__ import annotations

import html
import math
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ._optional import require
from .dtypes import is_real, is_scalar
from .records import Metric

if TYPE_CHECKING:
    from .report import Report

__all__ = ["call_path", "call_paths", "call_tree_text", "format_value", "program_total", "report_html", "to_dataframe", "top"]


def format_value(value: float) -> str:
    """A value as Cube shows it: integers without a fraction, else 6 significant digits.

    Example
    -------
    >>> format_value(72.0), format_value(0.0005594)
    ('72', '0.0005594')
    """
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def call_paths(report: Report) -> list[str]:
    """Every call path as the regions from its root, ``"main/solve/MPI_Send"``, in cnode order.

    Example
    -------
    >>> import cubescale
    >>> call_paths(cubescale.open(cubescale.examples.report_path()))[:2]
    ['stencil.py', 'stencil.py/<module>']
    """
    paths: list[str] = []
    for c in report.cnodes:  # preorder: a parent's path is known before its children's
        paths.append(c.region.name if c.parent is None else f"{paths[c.parent]}/{c.region.name}")
    return paths


def call_path(report: Report, cnode: int) -> str:
    """One call path as the regions from its root: what printing a few rows needs (all of
    them, :func:`call_paths`, hold call paths x depth characters: gigabytes on deep trees).

    Example
    -------
    >>> import cubescale
    >>> call_path(cubescale.open(cubescale.examples.report_path()), 1)
    'stencil.py/<module>'
    """
    cnodes, names = report.cnodes, []
    at: int | None = int(cnode)
    while at is not None:
        names.append(cnodes[at].region.name)
        at = cnodes[at].parent
    return "/".join(reversed(names))


def _rounding_zeros(values: np.ndarray) -> np.ndarray:
    """``values`` with tiny negatives (an exclusive value computed as a difference of nearly
    equal inclusive ones, e.g. -1e-17 s) set to 0: they are rounding, not measurements."""
    if values.dtype.kind != "f" or values.size == 0:
        return values
    scale = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0
    tiny = (values < 0) & (values > -1e-9 * scale)
    if not tiny.any():
        return values
    values = values.copy()
    values[tiny] = 0.0
    return values


def _names_column(pd, names: list[str], codes: np.ndarray):
    """A categorical column from per-item names and each row's item (few strings, many rows)."""
    categories, inverse = np.unique(np.asarray(names, dtype=object), return_inverse=True)
    return pd.Categorical.from_codes(inverse[codes], categories=categories)


def to_dataframe(report: Report, metrics: Iterable[int | str | Metric] | None = None, inclusive: bool = True,
                 names: bool = True):
    """A pandas DataFrame with one row per (cnode, location) and one column per metric with
    scalar values; with ``names`` also the columns ``region``, ``call_path``, ``process`` and
    ``thread`` (categorical); see :meth:`Report.to_dataframe <cubescale.Report.to_dataframe>`.

    Example
    -------
    >>> import cubescale
    >>> df = to_dataframe(cubescale.open(cubescale.examples.report_path()), ["visits"])
    >>> int(df.loc[(0, 0), "visits"]), df.loc[(1, 0), "call_path"]
    (220, 'stencil.py/<module>')
    """
    pd = require("pandas", "pandas", "to_dataframe")
    chosen = [report.metric(m) for m in (metrics if metrics is not None else report.metrics)]
    cnodes, locations = report.shape
    columns = {}
    if names:
        rows_cnode = np.repeat(np.arange(cnodes), locations)
        rows_location = np.tile(np.arange(locations), cnodes)
        groups = report.locations
        columns["region"] = _names_column(pd, [c.region.name for c in report.cnodes], rows_cnode)
        columns["call_path"] = _names_column(pd, call_paths(report), rows_cnode)
        columns["process"] = _names_column(pd, [loc.process for loc in groups], rows_location)
        columns["thread"] = _names_column(pd, [loc.name for loc in groups], rows_location)
    for m in chosen:
        if is_scalar(m.dtype):
            columns[m.name] = np.asarray(report.values(m, inclusive)).reshape(-1)
    index = pd.MultiIndex.from_product([range(cnodes), range(locations)], names=["cnode", "location"])
    return pd.DataFrame(columns, index=index)


def program_total(report: Report, metric: int | str | Metric) -> float:
    """A metric's value over the whole program: the sum of its roots' inclusive values in the
    call tree (the denominator of the percentages that views show).

    Example
    -------
    >>> import cubescale
    >>> program_total(cubescale.open(cubescale.examples.report_path()), "visits")
    3372.0
    """
    roots = [c.index for c in report.cnodes if c.parent is None]
    return float(report.cnode_values(metric, inclusive=True)[roots].sum())


def _subtree_nonzero(report: Report, m: Metric) -> np.ndarray:
    """Per call path, whether it or any call path below it has a non-zero value."""
    own = _rounding_zeros(report.cnode_values(m, inclusive=False)) != 0
    parents = report.cnode_parents
    for c in range(len(parents) - 1, 0, -1):  # children after parents: fold upwards
        if own[c] and parents[c] >= 0:
            own[parents[c]] = True
    return own


def call_tree_text(report: Report, metric: int | str | Metric | None = None, inclusive: bool = True,
                   max_depth: int | None = None, max_lines: int = 200, *, percent: bool = False,
                   sort: bool = False, hide_zero: bool = False) -> str:
    """The call tree as indented text with each call path's value over all locations; see
    :meth:`Report.call_tree_text <cubescale.Report.call_tree_text>`. ``percent`` adds each
    value's share of the whole program (the roots' inclusive values), ``sort`` orders
    siblings by value (largest first), ``hide_zero`` leaves out subtrees whose values are
    all zero. Tiny negative values from rounding are shown as 0.

    Example
    -------
    >>> import cubescale
    >>> print(call_tree_text(cubescale.open(cubescale.examples.report_path()), "time", max_depth=0))
    time (sec, inclusive)
    25.9828  stencil.py
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> print(call_tree_text(r, "visits", inclusive=False, max_depth=2, percent=True, sort=True, hide_zero=True))
    visits (occ, exclusive), % of 3372
    4    0.1%  stencil.py
      16    0.5%  Team._work
        976   28.9%  Barrier.wait
        480   14.2%  cumsum
        480   14.2%  update_chunk
      4    0.1%  <module>
        4    0.1%  Team
        4    0.1%  main
    """
    m = report.metric(metric if metric is not None else 0)
    values = _rounding_zeros(report.cnode_values(m, inclusive))
    share = percent and m.dtype not in ("MINDOUBLE", "MAXDOUBLE")
    header = f"{m.name} ({m.unit}, {'inclusive' if inclusive else 'exclusive'})"
    roots = [c for c in report.cnodes if c.parent is None]
    total = program_total(report, m) if share else 0.0
    if share:
        header += f", % of {format_value(total)}"
    shown = _subtree_nonzero(report, m) if hide_zero else None
    lines = [header]
    stack = [(c, 0) for c in reversed(_ordered(roots, values, sort))]
    while stack:  # depth first, the first sibling on top
        c, depth = stack.pop()
        if shown is not None and not shown[c.index]:
            continue
        if len(lines) > max_lines:
            lines.append("...")
            break
        part = f"  {_percent(values[c.index], total)}" if share else ""
        lines.append(f"{'  ' * depth}{format_value(values[c.index])}{part}  {c.region.name}")
        if max_depth is None or depth < max_depth:
            children = [report.cnodes[k] for k in c.children]
            stack.extend((k, depth + 1) for k in reversed(_ordered(children, values, sort)))
    if len(lines) == 1 and hide_zero:
        lines.append("(zero everywhere)")
    return "\n".join(lines)


def _ordered(cnodes: list, values: np.ndarray, sort: bool) -> list:
    """Siblings in file order, or largest value first (ties in file order)."""
    return sorted(cnodes, key=lambda c: -values[c.index]) if sort else cnodes


def _percent(value: float, total: float) -> str:
    return f"{100.0 * value / total:5.1f}%" if total else "    -"


def top(report: Report, metric: int | str | Metric, n: int = 10, inclusive: bool = False) -> list[dict]:
    """The ``n`` largest values of a metric per (call path, process), largest first: which call
    path, on which process. Each entry has ``value``, ``percent`` (of the whole program: the
    roots' inclusive values; None for MINDOUBLE / MAXDOUBLE), ``cnode``, ``call_path``,
    ``process`` (its name), ``process_index`` (its column among the processes) and ``thread``
    (the name of its location with the largest value there). Values are exclusive by default
    (the time spent in the call path itself); tiny negatives from rounding count as 0.
    ``ValueError`` for metrics that are not one real number per value (COMPLEX values have no
    order; TAU_ATOMIC, RATE, HISTOGRAM(n), NDOUBLES(n), SCALE_FUNC are not single numbers),
    as ``cubescale stat`` refuses them.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> best = top(r, "time", n=2)
    >>> [(e["process"], e["call_path"].split("/")[-1]) for e in best]  # doctest: +SKIP
    [('MPI Rank 3', 'MPI_Recv'), ...]
    >>> best[0]["value"] >= best[1]["value"]
    True
    """
    m = report.metric(metric)
    if not is_real(m.dtype):
        raise ValueError(f"metric {m.name} holds {m.dtype} values; top needs one real number per value")
    per_process, names = report.location_values(m, "process", inclusive=inclusive)
    chosen, largest = _largest(per_process, n)
    share = m.dtype not in ("MINDOUBLE", "MAXDOUBLE")
    total = program_total(report, m) if share else 0.0
    groups = report._core.location_ancestors(report._depth_of_class(report._core.system_tree(), "process"))
    elements = np.unique(groups)
    tree, location_elements = report._core.system_tree(), report._core.location_elements()
    entries = []
    for k, value in zip(chosen.tolist(), largest.tolist()):
        cnode, process = divmod(k, len(names))
        columns = np.flatnonzero(groups == elements[process])
        row = report.system_values(m, cnode, inclusive=inclusive)[columns]
        thread = tree.name(int(location_elements[columns[np.argmax(row)]]))
        entries.append({"value": value, "percent": 100.0 * value / total if share and total else None,
                        "cnode": cnode, "call_path": call_path(report, cnode), "process": names[process],
                        "process_index": process, "thread": thread})
    return entries


_LARGEST_BLOCK = 1 << 20  # values looked at a time while the largest are chosen


def _largest(values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices and values (float64) of the ``n`` largest of ``values``, largest first,
    ties in index order (NaN last), tiny negatives from rounding as 0 (:func:`_rounding_zeros`,
    relative to the largest magnitude of all). Looks at ``_LARGEST_BLOCK`` values at a time,
    keeping the best ``n`` so far, so that choosing holds no copy of a huge matrix.

    Example
    -------
    >>> _largest(np.array([[3.0, 7.0], [7.0, -1e-20]]), 3)
    (array([1, 2, 0]), array([7., 7., 3.]))
    """
    flat = values.reshape(-1)
    n = max(0, min(int(n), flat.size))
    best, best_values = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    if n == 0:
        return best, best_values
    with warnings.catch_warnings():  # all NaN: no scale, nothing is rounding
        warnings.simplefilter("ignore", RuntimeWarning)
        scale = max(abs(float(np.nanmax(flat))), abs(float(np.nanmin(flat))))
    scale = scale if math.isfinite(scale) else 0.0
    for start in range(0, flat.size, _LARGEST_BLOCK):
        block = np.asarray(flat[start:start + _LARGEST_BLOCK], dtype=np.float64).copy()
        block[(block < 0) & (block > -1e-9 * scale)] = 0.0
        block[np.isnan(block)] = -np.inf  # chosen only after every number
        k = min(n, block.size)
        # The block's k largest, ties at the k-th value taken in index order.
        kth = np.partition(block, block.size - k)[block.size - k]
        above = np.flatnonzero(block > kth)
        at = np.flatnonzero(block == kth)[:k - len(above)]
        picked = np.concatenate((above, at))
        candidates = np.concatenate((best, picked + start))
        candidate_values = np.concatenate((best_values, block[picked]))
        order = np.lexsort((candidates, -candidate_values))[:n]
        best, best_values = candidates[order], candidate_values[order]
    best_values[np.isneginf(best_values) & ~np.isneginf(flat[best].astype(np.float64))] = np.nan
    return best, best_values


def report_html(report: Report) -> str:
    """HTML for notebooks: the metric tree as a table and the top of the call tree.

    Example
    -------
    >>> import cubescale
    >>> report_html(cubescale.open(cubescale.examples.report_path())).startswith("<div><b>&lt;Report")
    True
    """
    rows = "".join(
        f"<tr><td style='text-align:left'>{'&nbsp;' * 4 * report.metric_depth(m)}{html.escape(m.display_name)}</td>"
        f"<td>{html.escape(m.name)}</td><td>{m.kind}</td><td>{html.escape(m.dtype)}</td>"
        f"<td>{html.escape(m.unit)}</td></tr>"
        for m in report.metrics
    )
    tree = html.escape(call_tree_text(report, max_depth=3, max_lines=40))
    return (f"<div><b>{html.escape(repr(report))}</b>"
            f"<table><tr><th>metric</th><th>name</th><th>kind</th><th>type</th><th>unit</th></tr>{rows}</table>"
            f"<pre>{tree}</pre></div>")
