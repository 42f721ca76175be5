"""Hatchet and Thicket: a report as a ``hatchet.GraphFrame``, several as a Thicket, and back.

`Hatchet <https://github.com/LLNL/hatchet>`_ (PyPI ``llnl-hatchet``) keeps a call graph and a
pandas DataFrame indexed by ``(node, rank, thread)``; `Thicket
<https://github.com/LLNL/thicket>`_ (``llnl-thicket``) stacks GraphFrames of several runs for
ensemble statistics. :func:`to_hatchet` gives one row per (call path, location) with Cube's
metric names: ``time`` exclusive and ``time (inc)`` inclusive, as Hatchet names them (a
metric's values as stored, i.e. including its child metrics, as Cube shows a collapsed metric).
:func:`cubescale.hatchet_reader.from_hatchet` (``cubescale.from_hatchet``) turns a GraphFrame
(ours or any reader's) back into a report; it lives in its own module because it builds reports
(``ReportBuilder``) while :class:`cubescale.Report` calls this one. Needs
``pip install 'cubescale[hatchet]'``.

Example
-------
>>> import cubescale
>>> report = cubescale.open(cubescale.examples.report_path())
>>> gf = to_hatchet(report, ["time"])
>>> list(gf.dataframe.index.names), sorted(gf.exc_metrics), sorted(gf.inc_metrics)
(['node', 'rank', 'thread'], ['time'], ['time (inc)'])
>>> back = cubescale.from_hatchet(gf)
>>> back.shape == report.shape
True
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._optional import require
from .dtypes import is_scalar
from .records import Metric

if TYPE_CHECKING:
    from .report import Report

__all__ = ["COMBINE", "INCLUSIVE_SUFFIX", "to_hatchet", "to_thicket"]

INCLUSIVE_SUFFIX = " (inc)"
"""What Hatchet appends to a metric's name for its inclusive column."""

COMBINE = ("mean", "sum", "max", "min", "median")
"""How :func:`to_thicket` combines a call path's locations (pandas' aggregations by name)."""


def _hatchet():
    return require("hatchet", "hatchet", "to_hatchet")


def _frame_attrs(region) -> dict:
    """A Hatchet frame of a region: name, type, and where it is (file, line), so that Hatchet's
    and Thicket's unions match call paths as cubescale's algebra does (name, module, lines)."""
    attrs = {"name": region.name, "type": region.paradigm or "function"}
    if region.module:
        attrs["file"] = region.module
    if region.begin >= 0:
        attrs["line"] = int(region.begin)
    return attrs


def _locations(report: Report) -> tuple[np.ndarray, np.ndarray]:
    """Per location its (rank, thread): the process's rank and the location's rank in it; where
    those do not tell the locations apart (GPU streams of one process), the location's index."""
    ranks = np.array([loc.process_rank for loc in report.locations], dtype=np.int64)
    threads = np.array([loc.rank for loc in report.locations], dtype=np.int64)
    if len(set(zip(ranks.tolist(), threads.tolist()))) < len(ranks):
        threads = np.arange(len(ranks), dtype=np.int64)
    return ranks, threads


def _columns(report: Report, metrics: Iterable[int | str | Metric] | None) -> list[str]:
    """The metrics that become columns: those with one number per value. A requested metric
    with several (TAU_ATOMIC tuples, histograms) is an error; of all metrics (``None``) those
    are left out with a warning. No column at all is an error too: Hatchet needs a default."""
    chosen = [report.metric(k) for k in (metrics if metrics is not None else report.metrics)]
    dropped = [m for m in chosen if not is_scalar(m.dtype)]
    if dropped and metrics is not None:
        m = dropped[0]
        raise ValueError(f"metric {m.name!r} has {m.dtype} values (several numbers per call path and location); "
                         f"a Hatchet column holds one number per row")
    names = [m.name for m in chosen if is_scalar(m.dtype)]
    if not names:
        raise ValueError(f"{report.path or 'the report'}: no {'requested ' if metrics is not None else ''}metric has "
                         f"one number per value; a GraphFrame needs at least one column")
    if dropped:
        warnings.warn(f"to_hatchet: left out metrics with several numbers per value: "
                      f"{', '.join(f'{m.name} ({m.dtype})' for m in dropped)}", UserWarning, stacklevel=3)
    return names


def to_hatchet(report: Report, metrics: Iterable[int | str | Metric] | None = None):
    """The report as a ``hatchet.GraphFrame``: the call tree as Hatchet's graph (a node per
    call path), one DataFrame row per (call path, location) indexed by ``(node, rank,
    thread)``, a ``name`` column (the region) and per metric with one number per value an
    exclusive column (its name) and an inclusive one (``name (inc)``). ``metadata`` names the
    file. A requested metric with several numbers per value (TAU_ATOMIC after ``cubescale
    threads --strategy set``) raises ``ValueError``; of all metrics (``metrics=None``) those
    are left out with a ``UserWarning``. ``default_metric`` is ``time`` if it is a column,
    else the first column. Needs ``pip install 'cubescale[hatchet]'``.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> gf = to_hatchet(r, ["visits"])
    >>> root = gf.graph.roots[0]
    >>> root.frame["name"], int(gf.dataframe.loc[(root, 0, 0), "visits (inc)"])
    ('stencil.py', 220)
    """
    ht = _hatchet()
    pd = require("pandas", "hatchet", "to_hatchet")
    from hatchet.frame import Frame
    from hatchet.graph import Graph
    from hatchet.node import Node

    nodes: list = []
    for c in report.cnodes:  # preorder: a parent's node exists before its children's
        parent = None if c.parent is None else nodes[c.parent]
        node = Node(Frame(_frame_attrs(c.region)), parent)
        if parent is not None:
            parent.add_child(node)
        nodes.append(node)
    graph = Graph([nodes[c.index] for c in report.cnodes if c.parent is None])
    graph.enumerate_traverse()  # node ids (their hash) before the nodes go into an index

    cnodes, locations = report.shape
    ranks, threads = _locations(report)
    index = pd.MultiIndex.from_arrays(
        [np.repeat(np.array(nodes, dtype=object), locations), np.tile(ranks, cnodes), np.tile(threads, cnodes)],
        names=["node", "rank", "thread"])
    columns: dict[str, np.ndarray] = {"name": np.repeat(np.array([c.region.name for c in report.cnodes], dtype=object),
                                                        locations)}
    exclusive = _columns(report, metrics)
    inclusive = [name + INCLUSIVE_SUFFIX for name in exclusive]
    for name in exclusive:
        columns[name] = np.asarray(report.values(name, inclusive=False)).reshape(-1)
        columns[name + INCLUSIVE_SUFFIX] = np.asarray(report.values(name, inclusive=True)).reshape(-1)
    frame = pd.DataFrame(columns, index=index).sort_index()
    default = "time" if "time" in exclusive else exclusive[0]  # Hatchet's tree() shows it: one that exists
    metadata = {"file": report.path, "processes": report.location_group_count, "locations": locations}
    return ht.GraphFrame(graph, frame, exc_metrics=exclusive, inc_metrics=inclusive, default_metric=default,
                         metadata=metadata)


def to_thicket(reports: Sequence[Report], metrics: Iterable[int | str | Metric] | None = None,
               combine: str = "mean", intersection: bool = False):
    """Several reports (runs of one program) as a ``thicket.Thicket`` for ensemble statistics:
    each report's GraphFrame with its locations combined per call path (``combine``: ``"mean"``
    — per location —, ``"sum"``, ``"max"``, ``"min"``, ``"median"``), then Thicket's union of
    the call trees (``intersection=True``: only the call paths every run has), one profile per
    report indexed by ``(node, profile)``; the metadata table names each file. Needs
    ``pip install 'cubescale[hatchet]'``.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> tk = to_thicket([r, r], ["time"])
    >>> list(tk.dataframe.index.names), len(tk.profile)
    (['node', 'profile'], 2)
    """
    if combine not in COMBINE:
        raise ValueError(f"combine= must be one of {', '.join(COMBINE)}, not {combine!r}")
    with contextlib.redirect_stdout(io.StringIO()):  # thicket prints a notice about seaborn when imported
        thicket = require("thicket", "hatchet", "to_thicket")
    if not reports:
        raise ValueError("a Thicket needs at least one report")
    parts: list = []
    for k, report in enumerate(reports):
        gf = to_hatchet(report, metrics)
        gf.drop_index_levels(function=combine)
        name = report.path or f"report {k}"
        if any(name == p.profile_mapping[p.profile[0]] for p in parts):  # the same file twice: two profiles
            name = f"{name} ({k})"
        parts.append(thicket.Thicket.thicketize_graphframe(gf, name))
    if len(parts) == 1:
        return parts[0]
    return thicket.Thicket.concat_thickets(parts, axis="index", calltree="intersection" if intersection else "union",
                                           disable_tqdm=True)
