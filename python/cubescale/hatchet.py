"""Hatchet and Thicket: a report as a ``hatchet.GraphFrame``, several as a Thicket, and back.

`Hatchet <https://github.com/LLNL/hatchet>`_ (PyPI ``llnl-hatchet``) keeps a call graph and a
pandas DataFrame indexed by ``(node, rank, thread)``; `Thicket
<https://github.com/LLNL/thicket>`_ (``llnl-thicket``) stacks GraphFrames of several runs for
ensemble statistics. :func:`to_hatchet` gives one row per (call path, location) with Cube's
metric names: ``time`` exclusive and ``time (inc)`` inclusive, as Hatchet names them (a
metric's values as stored, i.e. including its child metrics, as Cube shows a collapsed metric).
:func:`from_hatchet` turns a GraphFrame (ours or any reader's) into a
:class:`cubescale.Report` through :class:`cubescale.ReportBuilder`, ready for
:func:`cubescale.write`. Needs ``pip install 'cubescale[hatchet]'``.

Example
-------
>>> import cubescale
>>> report = cubescale.open(cubescale.examples.report_path())
>>> gf = to_hatchet(report, ["time"])
>>> list(gf.dataframe.index.names), sorted(gf.exc_metrics), sorted(gf.inc_metrics)
(['node', 'rank', 'thread'], ['time'], ['time (inc)'])
>>> back = from_hatchet(gf)
>>> back.shape == report.shape
True
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._optional import require
from .dtypes import is_scalar
from .records import Metric

if TYPE_CHECKING:
    from .report import Report

__all__ = ["from_hatchet", "to_hatchet", "to_thicket"]

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


def to_hatchet(report: Report, metrics: Iterable[int | str | Metric] | None = None):
    """The report as a ``hatchet.GraphFrame``: the call tree as Hatchet's graph (a node per
    call path), one DataFrame row per (call path, location) indexed by ``(node, rank,
    thread)``, a ``name`` column (the region) and per metric with one number per value an
    exclusive column (its name) and an inclusive one (``name (inc)``). ``metadata`` names the
    file. Needs ``pip install 'cubescale[hatchet]'``.

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
    exclusive, inclusive = [], []
    for m in (report.metric(k) for k in (metrics if metrics is not None else report.metrics)):
        if not is_scalar(m.dtype):
            continue
        columns[m.name] = np.asarray(report.values(m, inclusive=False)).reshape(-1)
        columns[m.name + INCLUSIVE_SUFFIX] = np.asarray(report.values(m, inclusive=True)).reshape(-1)
        exclusive.append(m.name)
        inclusive.append(m.name + INCLUSIVE_SUFFIX)
    frame = pd.DataFrame(columns, index=index).sort_index()
    default = "time" if "time" in exclusive else (exclusive[0] if exclusive else "time")
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


def _unit(name: str) -> str:
    """Hatchet keeps no units: the usual ones by Cube's names of metrics."""
    if name.startswith("time") or name.endswith("_time"):
        return "sec"
    if name == "visits":
        return "occ"
    return "bytes" if name.startswith("bytes") else ""


def _dtype(series) -> str:
    kind = series.dtype.kind
    return {"u": "UINT64", "i": "INT64", "b": "UINT64"}.get(kind, "DOUBLE")


def _system(pairs: list[tuple[int, int]]):
    """A machine with one process per rank and as many threads as the most threaded rank."""
    from .systree import SystemTree

    ranks = sorted({r for r, _ in pairs})
    threads = max(t for _, t in pairs) + 1 if pairs else 1
    return SystemTree.from_shape(f"node:1 process:{max(len(ranks), 1)} thread:{max(threads, 1)}"), ranks, threads


def _preorder(roots: list) -> list:
    """Every node, depth first, children in the order the graph keeps them (Hatchet's own
    traversal sorts them by frame; this keeps a report's call-path order through a round trip).
    A node reached twice (several parents) makes a call graph, which no report can hold."""
    order, seen, stack = [], set(), list(reversed(roots))
    while stack:
        node = stack.pop()
        if id(node) in seen or len(node.parents) > 1:
            raise ValueError(f"hatchet node {node.frame} has several parents: a call graph, but a report holds a "
                             "call tree (Hatchet's squash or unify of its inputs may make one)")
        seen.add(id(node))
        order.append(node)
        stack.extend(reversed(node.children))
    return order


def from_hatchet(gf) -> Report:
    """A ``hatchet.GraphFrame`` as a :class:`cubescale.Report` (write it with
    :func:`cubescale.write`). Each graph node becomes a call path, each frame a region (name,
    ``file`` as module, ``line``); each numeric exclusive metric a DOUBLE / INT64 / UINT64
    metric of that name (an inclusive column without an exclusive twin an INCLUSIVE metric).
    Ranks become processes and threads their threads (``node:1 process:P thread:T``: a
    (rank, thread) that has no row is zero). Hatchet's call *graphs* (a node with several
    parents) raise ``ValueError``: Cube holds call trees.

    Example
    -------
    >>> import hatchet
    >>> gf = hatchet.GraphFrame.from_literal([{"frame": {"name": "main"}, "metrics": {"time": 1.0, "time (inc)": 3.0},
    ...     "children": [{"frame": {"name": "solve"}, "metrics": {"time": 2.0, "time (inc)": 2.0}}]}])
    >>> r = from_hatchet(gf)
    >>> r.values("time", inclusive=True)[:, 0].tolist(), r.metric("time").unit
    ([3.0, 2.0], 'sec')
    """
    from .builder import ReportBuilder

    frame = gf.dataframe
    levels = list(frame.index.names)
    nodes = _preorder(gf.graph.roots)
    rank = frame.index.get_level_values("rank").to_numpy(np.int64) if "rank" in levels else np.zeros(len(frame), np.int64)
    thread = (frame.index.get_level_values("thread").to_numpy(np.int64) if "thread" in levels
              else np.zeros(len(frame), np.int64))
    pairs = sorted(set(zip(rank.tolist(), thread.tolist())))
    system, ranks, threads = _system(pairs)
    builder = ReportBuilder(system)

    exclusive = [m for m in gf.exc_metrics if m in frame.columns and frame[m].dtype.kind in "uifb"]
    inclusive_only = [m for m in gf.inc_metrics if m in frame.columns and frame[m].dtype.kind in "uifb"
                      and m.removesuffix(INCLUSIVE_SUFFIX) not in exclusive]
    for m in exclusive:
        builder.add_metric(m, unit=_unit(m), dtype=_dtype(frame[m]))
    for m in inclusive_only:
        builder.add_metric(m.removesuffix(INCLUSIVE_SUFFIX), unit=_unit(m), dtype=_dtype(frame[m]), kind="INCLUSIVE")

    regions: dict[tuple, int] = {}
    cnode_of: dict[int, int] = {}
    for node in nodes:  # preorder: every parent is added before its children
        attrs = node.frame.attrs
        key = (str(attrs.get("name", node.frame)), str(attrs.get("file", "")), int(attrs.get("line", -1)))
        if key not in regions:
            regions[key] = builder.add_region(key[0], module=key[1], begin=key[2], end=key[2])
        parent = cnode_of[id(node.parents[0])] if node.parents else None
        cnode_of[id(node)] = builder.add_cnode(regions[key], parent=parent)
    report = builder.build()

    row = np.array([cnode_of[id(n)] for n in frame.index.get_level_values("node")], dtype=np.int64)
    location = np.searchsorted(np.asarray(ranks), rank) * threads + thread
    sources = [(m, m) for m in exclusive] + [(m.removesuffix(INCLUSIVE_SUFFIX), m) for m in inclusive_only]
    for name, source in sources:
        target = report.metric(name)
        element = {"UINT64": np.uint64, "INT64": np.int64}.get(target.dtype, np.float64)
        values = np.zeros(report.shape, dtype=element)
        np.add.at(values, (row, location), frame[source].fillna(0).to_numpy().astype(element))
        report.set_values(target, values)
    return report
