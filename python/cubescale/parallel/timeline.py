"""Staged evaluation of metric expressions over MPI (the Vampir hardware-levels paper, Vampir's aggregate operation).

Every worker owns the timelines of some system-tree elements (its locations' counters, the
nodes it is responsible for). For each ``aggregate`` of the expression, each worker combines
its own elements below the target into a partial timeline on the common grid (16 bytes per
grid point, whatever the number of events or elements); partials merge pairwise up the
binary spanning tree (:func:`~cubescale.parallel.collective.up_pass`); rank 0 evaluates the
rest of the expression and every rank receives the result. An error on any rank is raised
on every rank as :class:`~cubescale.parallel.collective.CollectiveError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core import timeline as _timeline
from ..timeline import Expression, Term, TimelineStore, _expression, check_points, grid
from ._mpi import mpi
from .collective import CollectiveError, agree, tree_links, up_pass

__all__ = ["element_path", "evaluate_staged", "evaluate_trace"]

_TAG = 7401


def evaluate_staged(comm, expression: str | Expression | Term, store: TimelineStore, target: int, *, points: int = 1024,
                    start: float | None = None, stop: float | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Collective: ``(times, values, stats)`` of ``expression`` for ``target`` on every rank.
    The grid spans the earliest to the latest sample over all ranks unless given. ``stats``:
    this rank's ``bytes_sent`` and largest ``message_bytes``.

    Example
    -------
    >>> from mpi4py import MPI
    >>> from cubescale.timeline import Timeline, TimelineStore
    >>> store = TimelineStore([-1, 0])
    >>> store.add(1, "flops", Timeline([0.0, 4.0], [0.0, 8.0]))
    >>> t, v, stats = evaluate_staged(MPI.COMM_SELF, '"flops" "linear" source-counter "sum" aggregate "0" diff-quot', store, 0, points=3)
    >>> v.tolist()
    [2.0, 2.0, 2.0]
    """
    MPI = mpi()
    error: BaseException | None = None
    try:
        points = check_points(points)
        e = _expression(expression)
    except Exception as err:  # noqa: BLE001 - raised on every rank by agree()
        error = err
    agree(comm, error)
    lo, hi = store.time_range()
    lo = comm.allreduce(lo, op=MPI.MIN) if start is None else float(start)
    hi = comm.allreduce(hi, op=MPI.MAX) if stop is None else float(stop)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise CollectiveError("no rank has samples to take the time range from; pass start and stop")
    links = tree_links(comm)
    stats = {"bytes_sent": 0, "message_bytes": 0}
    merged: list[bytes] = []
    failure: str | None = None
    for k in range(e.aggregate_count):
        state: dict[str, Any] = {"children": None}

        def absorb(message: bytes, state=state) -> None:
            state["children"] = message if state["children"] is None else _timeline.merge_partials(state["children"], message)

        def finish(is_root: bool, k=k, state=state) -> bytes:
            mine = _timeline.partial_aggregate(e, k, store, int(target), lo, hi, int(points))
            out = mine if state["children"] is None else _timeline.merge_partials(mine, state["children"])
            if not is_root:
                stats["bytes_sent"] += len(out)
                stats["message_bytes"] = max(stats["message_bytes"], len(out))
            else:
                merged.append(out)
            return out

        text = up_pass(comm, links, absorb, finish, tag=_TAG + k)
        failure = failure or text
    result: Any = None
    if comm.rank == 0:
        if failure is None:
            try:
                result = _timeline.evaluate(e, merged, store, int(target), lo, hi, int(points))
            except Exception as err:  # noqa: BLE001 - sent to every rank below
                failure = f"rank 0: {type(err).__name__}: {err}"
        result = ("error", failure) if failure is not None else ("ok", result)
    kind, value = comm.bcast(result, root=0)
    if kind == "error":
        raise CollectiveError(value)
    return grid(lo, hi, points), np.asarray(value), stats


def evaluate_trace(comm, path, expression: str | Expression | Term, *, target: int | str = 0, points: int = 1024,
                   start: float | None = None, stop: float | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Collective: an expression over an OTF2 trace's metric timelines, each rank reading the
    Metric events of its share of the location groups (contiguous blocks, balanced by events)
    and reducing its partial timelines up the tree. ``target``: a system-tree element (index
    in the trace's machine, as :meth:`cubescale.trace.Trace.system_tree`), its name or its
    ``parent/name`` (:func:`element_path`; a name of several elements is an error on every
    rank). ``stats`` adds this rank's ``metric_events``.

    Example
    -------
    >>> from mpi4py import MPI
    >>> from cubescale.examples import trace_path
    >>> t, v, stats = evaluate_trace(MPI.COMM_SELF, trace_path(),
    ...                              '"PAPI_TOT_CYC" "stairstep" source-counter "sum" aggregate', points=4)
    >>> len(v), stats["metric_events"]
    (4, 320)
    """
    from .._core import timeline as _tl
    from ..trace import open as open_trace
    from .trace import rank_share

    error: BaseException | None = None
    store = None
    element = 0
    events = 0
    try:
        check_points(points)  # before the trace is read
        trace = open_trace(path)
        element = _element(trace, target)
        store, stats = _tl.trace_timelines(trace._core, rank_share(trace, comm.size, comm.rank)[1])
        events = int(stats["metric_events"])
    except Exception as err:  # noqa: BLE001 - raised on every rank by agree()
        error = err
    agree(comm, error)
    assert store is not None
    times, values, costs = evaluate_staged(comm, expression, store, element, points=points, start=start, stop=stop)
    return times, values, {**costs, "metric_events": events}


def element_path(tree, e: int) -> str:
    """The element's name with its parent's, as a person reads a machine (``MPI Rank 1/Master
    thread``), as ``cubescale timeline`` lists elements and takes them.

    Example
    -------
    >>> from cubescale.examples import trace_path
    >>> from cubescale.trace import open as open_trace
    >>> tree = open_trace(trace_path()).system_tree()
    >>> element_path(tree, 0), element_path(tree, 5)
    ('synthetic', 'MPI Rank 1/Master thread')
    """
    parent = tree.parent(e)
    return f"{tree.name(parent)}/{tree.name(e)}" if parent is not None else tree.name(e)


def _element(trace, target: int | str) -> int:
    """A system-tree element by index, name or ``parent/name`` path; KeyError where there is
    none, or where a name is that of several elements (every rank's "Master thread")."""
    tree = trace.system_tree()
    if isinstance(target, int):
        if not 0 <= target < len(tree):
            raise KeyError(f"no system tree element {target}: the tree has {len(tree)} (0 to {len(tree) - 1})")
        return target
    named = [int(e) for e in tree.preorder() if target in (tree.name(e), element_path(tree, e))]
    if not named:
        raise KeyError(f"no system tree element named {target!r}")
    if len(named) > 1:
        paths = [element_path(tree, e) for e in named]
        shown = ", ".join(repr(p) for p in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        raise KeyError(f"{target!r} names {len(named)} system tree elements ({shown}): give its parent/name "
                       "or its index")
    return named[0]
