"""Hatchet GraphFrames as reports: :func:`from_hatchet` (``cubescale.from_hatchet``) turns a
``hatchet.GraphFrame`` — made by :func:`cubescale.hatchet.to_hatchet` or by any of Hatchet's
readers — into a :class:`cubescale.Report` through :class:`cubescale.ReportBuilder`, ready for
:func:`cubescale.write` (docs/pop.md). Needs ``pip install 'cubescale[hatchet]'``.

Example
-------
>>> import cubescale
>>> report = cubescale.open(cubescale.examples.report_path())
>>> back = from_hatchet(report.to_hatchet(["visits"]))
>>> bool((back.values("visits") == report.values("visits")).all())
True
"""

from __future__ import annotations

import numpy as np

from .builder import ReportBuilder
from .hatchet import INCLUSIVE_SUFFIX
from .report import Report
from .systree import SystemTree

__all__ = ["PARADIGMS", "from_hatchet"]

PARADIGMS = ("mpi", "openmp", "user", "compiler", "measurement", "pthread", "cuda", "opencl", "openacc", "shmem",
             "io", "python", "kokkos", "hip")
"""Frame types taken as the region's paradigm (what :func:`cubescale.hatchet.to_hatchet` writes
as ``type``); any other type (Hatchet's "function", "loop" ...) becomes "user"."""


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
    ranks = sorted({r for r, _ in pairs})
    threads = max(t for _, t in pairs) + 1 if pairs else 1
    return SystemTree.from_shape(f"node:1 process:{max(len(ranks), 1)} thread:{max(threads, 1)}"), ranks, threads


def _region_key(attrs: dict, text: str) -> tuple[str, str, int, str]:
    """(name, module, line, paradigm) of a Hatchet frame; a line that is no number is none (-1)."""
    try:
        line = int(attrs.get("line", -1))
    except (TypeError, ValueError):
        line = -1
    return str(attrs.get("name", text)), str(attrs.get("file", "")), line, str(attrs.get("type", ""))


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
    frame = gf.dataframe
    levels = list(frame.index.names)
    nodes = _preorder(gf.graph.roots)
    rank = frame.index.get_level_values("rank").to_numpy(np.int64) if "rank" in levels else np.zeros(len(frame), np.int64)
    thread = (frame.index.get_level_values("thread").to_numpy(np.int64) if "thread" in levels
              else np.zeros(len(frame), np.int64))
    if (rank < 0).any() or (thread < 0).any():
        raise ValueError("the GraphFrame has negative ranks or threads; a report numbers them from 0")
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
        key = _region_key(node.frame.attrs, str(node.frame))
        if key not in regions:
            paradigm = key[3] if key[3] in PARADIGMS else "user"
            regions[key] = builder.add_region(key[0], module=key[1], begin=key[2], paradigm=paradigm)
        parent = cnode_of[id(node.parents[0])] if node.parents else None
        cnode_of[id(node)] = builder.add_cnode(regions[key], parent=parent)
    report = builder.build()

    try:
        row = np.array([cnode_of[id(n)] for n in frame.index.get_level_values("node")], dtype=np.int64)
    except KeyError:
        raise ValueError("the GraphFrame's DataFrame has rows of nodes that are not in its graph") from None
    location = np.searchsorted(np.asarray(ranks), rank) * threads + thread
    sources = [(m, m) for m in exclusive] + [(m.removesuffix(INCLUSIVE_SUFFIX), m) for m in inclusive_only]
    for name, source in sources:
        target = report.metric(name)
        element = {"UINT64": np.uint64, "INT64": np.int64}.get(target.dtype, np.float64)
        values = np.zeros(report.shape, dtype=element)
        np.add.at(values, (row, location), frame[source].fillna(0).to_numpy().astype(element))
        report.set_values(target, values)
    return report
