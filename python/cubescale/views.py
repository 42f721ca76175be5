"""Views of a report for people: indented call-tree text, HTML for notebooks, pandas frames.

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
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from .dtypes import is_scalar
from .records import Metric

if TYPE_CHECKING:
    from .report import Report

__all__ = ["call_tree_text", "format_value", "report_html", "to_dataframe"]


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


def to_dataframe(report: Report, metrics: Iterable[int | str | Metric] | None = None, inclusive: bool = True):
    """A pandas DataFrame with one row per (cnode, location) and one column per metric with
    scalar values; see :meth:`Report.to_dataframe <cubescale.Report.to_dataframe>`.

    Example
    -------
    >>> import cubescale
    >>> df = to_dataframe(cubescale.open(cubescale.examples.report_path()), ["visits"])
    >>> int(df.loc[(0, 0), "visits"])
    220
    """
    import pandas as pd

    chosen = [report.metric(m) for m in (metrics if metrics is not None else report.metrics)]
    columns = {m.name: np.asarray(report.values(m, inclusive)).reshape(-1) for m in chosen if is_scalar(m.dtype)}
    cnodes, locations = report.shape
    index = pd.MultiIndex.from_product([range(cnodes), range(locations)], names=["cnode", "location"])
    return pd.DataFrame(columns, index=index)


def call_tree_text(report: Report, metric: int | str | Metric | None = None, inclusive: bool = True,
                   max_depth: int | None = None, max_lines: int = 200) -> str:
    """The call tree as indented text with each call path's value over all locations; see
    :meth:`Report.call_tree_text <cubescale.Report.call_tree_text>`.

    Example
    -------
    >>> import cubescale
    >>> print(call_tree_text(cubescale.open(cubescale.examples.report_path()), "time", max_depth=0))
    time (sec, inclusive)
    25.9828  stencil.py
    """
    m = report.metric(metric if metric is not None else 0)
    values = report.cnode_values(m, inclusive)
    depth = np.zeros(report.shape[0], dtype=np.int64)
    lines = [f"{m.name} ({m.unit}, {'inclusive' if inclusive else 'exclusive'})"]
    for c in report.cnodes:  # preorder: a parent's depth is known before its children's
        depth[c.index] = 0 if c.parent is None else depth[c.parent] + 1
        if max_depth is not None and depth[c.index] > max_depth:
            continue
        if len(lines) > max_lines:
            lines.append("...")
            break
        lines.append(f"{'  ' * int(depth[c.index])}{format_value(values[c.index])}  {c.region.name}")
    return "\n".join(lines)


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
