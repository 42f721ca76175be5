"""Figures of reports (matplotlib): where a metric goes by call path, how it spreads over the
processes, how two runs differ per call path, a Cartesian topology as a heatmap, and POP's
efficiencies (docs/pop.md).

Every function returns a ``matplotlib.figure.Figure`` made without pyplot (no window, no
global state: safe in servers and tests); :func:`save` writes one whole or not at all.
Needs matplotlib: ``pip install 'cubescale[plot]'``.

Example
-------
>>> import cubescale
>>> from cubescale import plots
>>> fig = plots.metric_share(cubescale.open(cubescale.examples.report_path()), "time", n=3)
>>> [t.get_text() for t in fig.axes[0].get_yticklabels()]      # the largest at the top
['stencil.py/Team._work/update_chunk', 'stencil.py/<module>/main/solve/Team.sweep/Barrier.wait',
 'stencil.py/Team._work/Barrier.wait']
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import files
from ._optional import require
from .records import Metric
from .views import call_path, program_total

if TYPE_CHECKING:
    from .pop import PopRun
    from .report import Report

__all__ = ["diff_by_call_path", "distribution", "metric_share", "pop_efficiencies", "save", "save_diff_plot",
           "topology_heatmap"]


def _figure(width: float = 8.0, height: float = 4.0):
    """A Figure with one Axes, without pyplot (the Agg canvas draws it)."""
    figure_module = require("matplotlib.figure", "plot", "plots")
    fig = figure_module.Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def _text(text: str) -> str:
    """Text shown as written: matplotlib reads ``$...$`` as math, and OpenMP regions are ``!$omp``."""
    return text.replace("$", r"\$")


def _label(path: str, limit: int = 60) -> str:
    """A call path short enough for an axis: its end, which names the call path best."""
    return _text(path if len(path) <= limit else "…" + path[-(limit - 1):])


def metric_share(report: Report, metric: int | str | Metric = "time", n: int = 10, inclusive: bool = False):
    """Horizontal bars: the ``n`` call paths with the largest share of a metric (summed over all
    locations, exclusive by default), in % of the whole program, the largest at the top.
    MINDOUBLE / MAXDOUBLE metrics have no shares: their bars are the call paths' minimum /
    maximum over the locations, in the metric's unit.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> bars = metric_share(r, "visits", n=2).axes[0].patches
    >>> [round(float(b.get_width()), 1) for b in bars]         # % of all visits, the largest last (on top)
    [14.2, 28.9]
    """
    m = report.metric(metric)
    values = np.asarray(report.cnode_values(m, inclusive=inclusive), dtype=np.float64)
    extreme = m.dtype in ("MINDOUBLE", "MAXDOUBLE")  # a share of a minimum means nothing
    total = 0.0 if extreme else program_total(report, m)
    n = max(1, min(int(n), len(values)))
    chosen = np.argsort(-values, kind="stable")[:n][::-1]  # barh draws bottom-up: the largest last
    paths = {int(c): call_path(report, int(c)) for c in chosen}  # only the drawn ones (deep trees)
    fig, ax = _figure(9.0, 0.45 * n + 1.2)
    if extreme:
        shares = values[chosen]
    else:
        shares = 100.0 * values[chosen] / total if total else np.zeros(len(chosen))
    ax.barh(range(len(chosen)), shares, color="tab:blue")
    ax.set_yticks(range(len(chosen)), [_label(paths[c]) for c in chosen], fontsize=8)
    kind = "inclusive" if inclusive else "exclusive"
    ax.set_xlabel(f"{m.name} ({m.unit}, {kind})" if extreme else f"% of all {m.name} ({m.unit}, {kind})")
    ax.set_title(f"{m.display_name or m.name} by call path")
    return fig


def distribution(report: Report, metric: int | str | Metric = "time", cnode: int | None = None,
                 level: str = "process", inclusive: bool = True):
    """Bars over the processes (or another system-tree ``level``): a call path's metric per
    element (default: the first root, with its callees), and a line at the mean.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> [float(b.get_height()) for b in distribution(r, "visits").axes[0].patches]
    [828.0, 858.0, 858.0, 828.0]
    """
    m = report.metric(metric)
    row = 0 if cnode is None else int(cnode)
    per_element, names = report.location_values(m, level, inclusive=inclusive)
    values = np.asarray(per_element[row], dtype=np.float64)
    fig, ax = _figure(max(5.0, 0.3 * len(values) + 2.0), 3.5)
    ax.bar(range(len(values)), values, color="tab:blue")
    ax.axhline(float(values.mean()), color="tab:red", linewidth=1, label=f"mean {values.mean():.4g}")
    if len(names) <= 32:
        ax.set_xticks(range(len(names)), [_text(n) for n in names], rotation=60, ha="right", fontsize=8)
    ax.set_xlabel(level)
    ax.set_ylabel(f"{m.name} ({m.unit})")
    ax.set_title(_text(f"{m.name} of {call_path(report, row)} per {level}"))
    ax.legend(loc="lower right", fontsize=8)
    return fig


def diff_by_call_path(a: Report, b: Report, metric: int | str | Metric = "time", n: int = 10,
                      inclusive: bool = False):
    """Horizontal bars of ``a − b`` per call path (summed over locations, exclusive by
    default) for the ``n`` call paths that changed most, on the call trees unified as
    :func:`cubescale.diff` unifies them; red where ``a`` takes longer, green where shorter.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> [float(b.get_width()) for b in diff_by_call_path(r, r, "visits", n=2).axes[0].patches]
    [0.0, 0.0]
    """
    from .algebra import diff

    return _diff_bars(diff(a, b), metric, n, inclusive, os.path.basename(a.path) or "A",
                      os.path.basename(b.path) or "B")


def _diff_bars(d: Report, metric: int | str | Metric, n: int, inclusive: bool, name_a: str, name_b: str):
    """The bars of :func:`diff_by_call_path` from the difference ``d`` already computed."""
    m = d.metric(metric if not isinstance(metric, Metric) else metric.name)
    values = np.asarray(d.cnode_values(m, inclusive=inclusive), dtype=np.float64)
    n = max(1, min(int(n), len(values)))
    chosen = np.argsort(-np.abs(values), kind="stable")[:n][::-1]
    paths = {int(c): call_path(d, int(c)) for c in chosen}  # only the drawn ones (deep trees)
    fig, ax = _figure(9.0, 0.45 * n + 1.2)
    colors = ["tab:red" if v > 0 else "tab:green" for v in values[chosen]]
    ax.barh(range(len(chosen)), values[chosen], color=colors)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(chosen)), [_label(paths[c]) for c in chosen], fontsize=8)
    ax.set_xlabel(_text(f"{m.name} ({m.unit}): {name_a} − {name_b}"))
    ax.set_title(f"{m.name} change by call path ({'inclusive' if inclusive else 'exclusive'})")
    return fig


def save_diff_plot(difference: Report, metric: str, path: str | os.PathLike, inputs: Sequence[str],
                   output: str) -> None:
    """``cubescale diff --plot``: the bars of :func:`diff_by_call_path` of the computed
    difference of ``inputs`` written to ``path``, which must be none of the inputs nor the
    report ``output`` (``ValueError``, nothing written).

    Example
    -------
    >>> import cubescale, tempfile, os
    >>> a = cubescale.examples.report_path()
    >>> out = os.path.join(tempfile.mkdtemp(), "d.png")
    >>> save_diff_plot(cubescale.diff(cubescale.open(a), cubescale.open(a)), "time", out, [a, a], "d.cubex")
    >>> os.path.getsize(out) > 1000
    True
    """
    target = os.path.realpath(os.fspath(path))
    if target in {os.path.realpath(p) for p in [*inputs, output]}:
        raise ValueError(f"--plot {os.fspath(path)} is one of the reports; write the plot to another file "
                         "(nothing was written)")
    names = [os.path.basename(p) for p in inputs] + ["A", "B"]
    save(_diff_bars(difference, metric, 10, False, names[0], names[1]), path)


def _cartesian(report: Report, topology: int) -> dict:
    """The report's ``topology``-th Cartesian topology: dims, and per mapped location its cell."""
    from xml.etree import ElementTree

    from .viewer.model import _cart  # one parser of <cart> for the explorer and the plots

    text = report._core.topologies_xml
    carts = list(ElementTree.fromstring(f"<topologies>{text}</topologies>").iter("cart")) if "<cart" in text else []
    if not carts:
        raise ValueError(f"{report.path or 'the report'} has no Cartesian topology")
    if not 0 <= topology < len(carts):
        raise IndexError(f"topology {topology} out of range ({len(carts)} Cartesian topologies)")
    ids = np.asarray(report._core.location_file_ids(), dtype=np.int64)
    return _cart(carts[topology], ids, np.argsort(ids))


def topology_heatmap(report: Report, metric: int | str | Metric = "time", cnode: int | None = None,
                     topology: int = 0, inclusive: bool = True):
    """A Cartesian topology (``<cart>``, e.g. Score-P's Process x Thread grid) as a heatmap of
    a call path's metric per location (default: the first root, with its callees). Grids of
    more than two dimensions show the first against the rest; cells without a location are
    blank.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())   # has no topology
    >>> try:
    ...     topology_heatmap(r)
    ... except ValueError as e:
    ...     print(str(e).split(" has ")[1])
    no Cartesian topology
    """
    m = report.metric(metric)
    cart = _cartesian(report, int(topology))
    sizes = [d["size"] for d in cart["dims"]] or [1]
    row = 0 if cnode is None else int(cnode)
    values = report.system_values(m, row, inclusive=inclusive)
    grid = np.full(int(np.prod(sizes)), np.nan)
    grid[cart["cells"]] = 0.0
    np.add.at(grid, cart["cells"], values[cart["locations"]])
    shape = (sizes[0], int(np.prod(sizes[1:]))) if len(sizes) > 1 else (1, sizes[0])
    fig, ax = _figure(max(4.0, 0.5 * shape[1] + 2.5), max(3.0, 0.3 * shape[0] + 1.5))
    image = ax.imshow(grid.reshape(shape), aspect="auto", cmap="viridis", interpolation="nearest")
    fig.colorbar(image, ax=ax, label=f"{m.name} ({m.unit})")
    if shape[0] <= 32:
        ax.set_yticks(range(shape[0]))
    if shape[1] <= 32:
        ax.set_xticks(range(shape[1]))
    names = [d["name"] for d in cart["dims"]]
    ax.set_ylabel(names[0] if len(names) > 1 else "")
    ax.set_xlabel(" x ".join(names[1:]) if len(names) > 1 else (names[0] if names else ""))
    ax.set_title(_text(f"{cart['name'] or 'topology'}: {m.name} of {call_path(report, row)}"))
    return fig


def pop_efficiencies(runs: Sequence[PopRun]):
    """Grouped bars of POP's efficiencies (:func:`cubescale.pop.pop_metrics`), one group per
    efficiency and one bar per run, with POP's 80 % line; efficiencies without a wait-state
    report are left out.

    Example
    -------
    >>> import cubescale
    >>> from cubescale.pop import pop_metrics
    >>> run = pop_metrics(cubescale.open(cubescale.examples.report_path()))[0]
    >>> fig = pop_efficiencies([run])
    >>> [round(b.get_height(), 4) for b in fig.axes[0].patches][:3] == [round(100 * run.global_efficiency, 4),
    ...     round(100 * run.parallel_efficiency, 4), round(100 * run.load_balance, 4)]
    True
    """
    names = [name for name in runs[0].efficiencies() if any(r.efficiencies()[name] is not None for r in runs)]
    fig, ax = _figure(max(7.0, 1.1 * len(names) * max(1, len(runs)) ** 0.5 + 2), 4.0)
    width = 0.8 / len(runs)
    for k, run in enumerate(runs):
        heights = [100.0 * (run.efficiencies()[name] or 0.0) for name in names]
        drawn = ax.bar(np.arange(len(names)) + (k - (len(runs) - 1) / 2) * width, heights, width, label=run.name)
        ax.bar_label(drawn, fmt="%.0f", fontsize=7)
    ax.axhline(80.0, color="gray", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(names)), [name.replace(" efficiency", "\nefficiency") for name in names], fontsize=8)
    ax.set_ylabel("%")
    ax.set_ylim(0, max(105.0, ax.get_ylim()[1]))
    ax.set_title("POP efficiencies")
    ax.legend(fontsize=8)
    return fig


def save(fig, path: str | os.PathLike) -> None:
    """Writes a figure to ``path`` (the format from its extension: ``.png``, ``.svg``,
    ``.pdf`` …) through a temporary that is renamed when complete.

    Example
    -------
    >>> import cubescale, tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "share.png")
    >>> save(metric_share(cubescale.open(cubescale.examples.report_path())), out)
    >>> open(out, "rb").read(4)
    b'\\x89PNG'
    """
    extension = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() or "png"
    with files.atomic_write(path, "wb") as f:
        fig.savefig(f, format=extension, dpi=110)
