"""Collation of every rank's values into one ``.cubex`` with bounded writer memory
(the CUBE collation paper, section 3; the Scalasca architecture paper, section 4.3).

After :func:`~cubescale.parallel.unify` and :func:`~cubescale.parallel.build_system_tree`,
the writer (rank 0) streams the report: for each metric, a reduction of per-row costs tells
the writer how many bytes each row will bring; it cuts blocks of rows in the metric's row
order to the budget by what is really sent and broadcasts that plan once. Each rank cuts its
own part of every block (only its non-zero rows; a rank that never visited a call path sends
nothing for it) and the writer fetches the non-empty parts of a block from their senders
only (:mod:`~cubescale.parallel.blocks`: a ``Gatherv`` that skips the ranks with nothing to
send); C++ (``write_parts``) composes each sent row in one row buffer and hands it to
``CubexWriter``; rows nobody sent are zero everywhere and are left out of the SPARSE index. A
row wider than the budget is gathered and written in column pieces, so the writer's buffers
stay within ``block_bytes`` whatever the number of ranks. Outside the data budget: one
``Gather`` of 24 bytes per rank (first block, its size, the rank's location group), one
pending entry per sending rank, 16 bytes after each sent part; the cost reduction takes 8
bytes per call path of up to ``_COSTS_AT_ONCE`` entries, the plan 48 bytes per block.

An error on any rank (including the writer's) is raised on every rank after the collective
steps already under way have ended, and no file (temporary or final) is left behind.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from .._core import cube as _cube
from .._core import profile as _profile
from ..profile import LocalProfile
from ._mpi import mpi
from .blocks import TRAILER, BlockReceiver, first_of, nonempty_parts, send_parts
from .collective import agree, agree_with_root
from .systree import DistributedSystemTree, build_system_tree
from .unify import Unification, unify

__all__ = ["collate", "write_report"]


def _row_source(profile: LocalProfile, unified: Unification, first_location: int):
    """The rank's side of collation (a seam for tests that make a rank fail)."""
    return _profile.RowSource(profile._core, unified.metric_map, unified.cnode_map, unified.cnode_wide_position,
                              first_location)


def _first_location(tree: DistributedSystemTree) -> int:
    indices = np.asarray(tree.location_indices, dtype=np.int64)
    if len(indices) and not np.array_equal(indices, np.arange(indices[0], indices[0] + len(indices))):
        raise ValueError("a rank's locations must be contiguous in the global order (one process each)")
    return int(indices[0]) if len(indices) else 0


def collate(comm, profile: LocalProfile, path: str | os.PathLike, unified: Unification,
            system: DistributedSystemTree, compress: bool = False, block_bytes: int = 1 << 20,
            progress: Any = None) -> dict:
    """Writes the collated report (collective; rank 0 writes ``path``). ``unified`` and
    ``system`` come from :func:`unify` and :func:`build_system_tree` (``root_only`` is fine)
    over the same ranks; see :func:`write_report`, which runs all three. Returns this rank's
    costs: ``bytes_sent``, ``writer_buffer_bytes`` (rank 0: the most its block buffers held),
    ``blocks``, ``seconds``.

    Example
    -------
    >>> import numpy as np, os, tempfile
    >>> from mpi4py import MPI
    >>> import cubescale
    >>> from cubescale.parallel import build_system_tree, unify
    >>> from cubescale.profile import LocalProfile, Metric, Region
    >>> p = LocalProfile([Metric(name="time")], [Region(name="main")], [-1], [0],
    ...                  [("Master thread", "thread")], [np.full((1, 1), 2.5)], host="n1")
    >>> out = os.path.join(tempfile.mkdtemp(), "one.cubex")
    >>> stats = collate(MPI.COMM_SELF, p, out, unify(MPI.COMM_SELF, p), build_system_tree(MPI.COMM_SELF, p.view()))
    >>> cubescale.open(out).values("time").tolist()
    [[2.5]]
    """
    MPI = mpi(comm)
    start = time.perf_counter()
    path = os.fspath(path)
    root = comm.rank == 0
    failure: BaseException | None = None
    source = None
    try:
        source = _row_source(profile, unified, _first_location(system))
    except Exception as e:  # noqa: BLE001 - keeps taking part; raised on every rank at the end
        failure = e
    # What every rank needs before the plan, from the global definitions on rank 0. A failure
    # here leaves nothing to plan: every rank sees None and raises the root's error.
    info = None
    if root:
        try:
            assert system.tree is not None
            info = (list(unified.state.global_widths), int(unified.state.global_counts[2]),  # type: ignore[attr-defined]
                    int(system.tree.count("locations")))
        except Exception as e:  # noqa: BLE001
            failure = e
    info = comm.bcast(info, root=0)
    if info is None:
        agree(comm, failure)
    widths, cnodes, locations = info
    stats: dict[str, float] = {"bytes_sent": 0, "writer_buffer_bytes": 0, "blocks": 0}
    # The smallest block: one value in a row piece, sent by another rank (header 8, position 4,
    # index entry 24, the value in the part and in the row buffer).
    widest = max(widths, default=0)
    smallest = 2 * widest + 36
    if int(block_bytes) < smallest:
        raise ValueError(f"block_bytes={block_bytes} cannot hold one value of {widest} bytes (needs {smallest})")

    def part_of(step: np.ndarray) -> np.ndarray:
        nonlocal failure
        if failure is None:
            try:
                metric, _, p0, p1, c0, c1 = (int(x) for x in step)
                return source.block(metric, p0, p1, c0, c1)  # type: ignore[union-attr]
            except Exception as e:  # noqa: BLE001 - stops sending; raised on every rank at the end
                failure = e
        return np.empty(0, dtype=np.uint8)

    def row_costs(metric: int) -> np.ndarray:
        nonlocal failure
        if failure is None:
            try:
                return source.row_costs(metric, cnodes)  # type: ignore[union-attr]
            except Exception as e:  # noqa: BLE001 - keeps taking part; raised at the end
                failure = e
        return np.zeros(cnodes, dtype=np.uint64)

    # Blocks cut to half the budget let the writer ask for the next block before it writes
    # one (see blocks.py); a budget too small to halve gets whole-budget blocks, one at a time.
    prefetch = int(block_bytes) // 2 >= smallest
    plan = _plan(comm, MPI, row_costs, widths, cnodes, locations, int(block_bytes) // (2 if prefetch else 1))
    gathered = plan[plan[:, 1] != _SKIP]
    parts = nonempty_parts(len(gathered), lambda i: part_of(gathered[i]))
    first = next(parts, None)
    # Every rank's first non-empty block and size, and its location group (its <rank>).
    firsts = np.zeros((comm.size, 3), dtype=np.int64) if root else None
    comm.Gather(np.array([*first_of(first), system.location_group_index], dtype=np.int64), firsts, root=0)
    if not root:
        send_parts(comm, first, parts, stats)
        writer = None
    else:
        assert firsts is not None
        writer = None
        if failure is None:
            try:
                writer = _open_writer(unified, system, firsts[:, 2], path, compress)
            except Exception as e:  # noqa: BLE001 - raised on every rank at the end
                failure = e
        receiver = BlockReceiver(comm, firsts[:, :2], first, parts, len(gathered), prefetch)
        writer = _write_blocks(receiver, writer, plan, widths, locations, stats, progress)
        if isinstance(writer, BaseException):
            failure, writer = (failure or writer), None
    # The file is completed only when no rank failed, and its completion's outcome is shared:
    # a failing rank anywhere leaves no report and no temporary file behind.
    try:
        agree(comm, failure)
        if root and writer is not None:
            try:
                writer.finish()
            except Exception as e:  # noqa: BLE001 - raised on every rank just below
                failure = e
        agree_with_root(comm, failure)
    finally:
        writer = None  # an unfinished writer removes its temporary file when released
    stats["seconds"] = time.perf_counter() - start
    return stats


def _write_blocks(receiver: BlockReceiver, writer, plan: np.ndarray, widths: list[int], locations: int,
                  stats: dict, progress: Any):
    """Rank 0: takes every gathered block in plan order and writes it (or, after the writer
    failed, only takes it, so that every sender finishes). Returns the writer, or the
    exception that ended it."""
    failure: BaseException | None = None if writer is not None else RuntimeError("no writer")
    blocks = 0
    for metric, width in enumerate(widths):
        steps = plan[plan[:, 0] == metric]
        try:
            if failure is None:
                writer.begin_metric(metric)
        except Exception as e:  # noqa: BLE001
            failure = e
        for step in steps:
            _, kind, p0, p1, c0, c1 = (int(x) for x in step)
            try:
                if kind == _SKIP:
                    if failure is None:
                        writer.skip_rows(p1 - p0)
                    continue
                buffer, sizes = receiver.take(blocks)
                blocks += 1
                if failure is not None:
                    continue
                piece = kind == _PIECE
                if piece and c0 == 0:
                    writer.begin_row()
                held = _profile.write_parts(writer, buffer, sizes, p0, p1, c0, c1, width, piece, TRAILER)
                if piece and c1 == locations:
                    writer.end_row()
                # The trailers (16 bytes per part) are the writer's bookkeeping, not data.
                data = buffer.nbytes - TRAILER * len(sizes) + receiver.held()
                stats["writer_buffer_bytes"] = max(stats["writer_buffer_bytes"], data + held)
            except Exception as e:  # noqa: BLE001 - keeps taking blocks: every sender must finish
                if failure is None:
                    failure = e
        try:
            if failure is None:
                writer.end_metric()
        except Exception as e:  # noqa: BLE001
            failure = e
        if progress is not None:
            progress(metric + 1, len(widths))
    stats["blocks"] = blocks
    return writer if failure is None else failure


def _open_writer(unified: Unification, system: DistributedSystemTree, groups: np.ndarray, path: str,
                 compress: bool):
    """Rank 0's writer over the global definitions; ``groups[r]``: the location group rank r
    holds. Each location group's <rank> is the one a known machine gives (a report's), else
    the MPI rank that holds it (processes of equal structure are grouped in the sequence
    tree, so a group's position need not be its rank) when every rank holds its own process
    (write_report); ranks holding several processes (a trace's) leave the groups' positions."""
    assert system.tree is not None
    expanded = system.tree.expand()._core  # type: ignore[attr-defined]
    group_ranks: list[int] = list(getattr(system.tree, "group_ranks", None) or [])  # KnownMachine's
    if not group_ranks and np.array_equal(np.sort(groups), np.arange(len(groups))):
        group_ranks = np.argsort(groups).tolist()
    report = unified.state.global_report(expanded, group_ranks)  # type: ignore[attr-defined]
    return _cube.CubexWriter(report, path, compress)


_SKIP, _ROWS, _PIECE = 0, 1, 2


def _plan(comm, MPI, row_costs, widths: list[int], cnodes: int, locations: int, budget: int) -> np.ndarray:
    """Every step of the collation, the same on every rank: rows ``(metric, kind, p0, p1, c0,
    c1)`` with kind ``_SKIP`` (rows [p0, p1) nobody sends), ``_ROWS`` (whole rows [p0, p1)) or
    ``_PIECE`` (columns [c0, c1) of row p0, wider than the budget). Blocks are cut by what every
    rank really sends: the ranks' per-row costs are summed on the writer (``Reduce``s of as
    many metrics at a time as fit ``_COSTS_AT_ONCE`` entries, at least one metric), which
    plans; one broadcast of the plan."""
    steps: list[tuple[int, ...]] = []
    for metrics in _cost_batches(len(widths), cnodes):
        costs = np.concatenate([row_costs(m) for m in metrics])
        total = np.zeros_like(costs) if comm.rank == 0 else None
        comm.Reduce(costs, total, op=MPI.SUM, root=0)
        if comm.rank != 0:
            continue
        for k, metric in enumerate(metrics):
            width = widths[metric]
            one = total[k * cnodes:(k + 1) * cnodes]  # type: ignore[index]
            row_bytes = locations * width
            # Worst case per column of a wide row: every value from another rank (8 header + 4
            # position + 24 index + the value) and its place in the row buffer.
            columns = max(1, budget // (2 * width + 36)) if width else 1
            for kind, p0, p1 in _plan_blocks(one.astype(np.int64), row_bytes, budget):
                if kind == "skip":
                    steps.append((metric, _SKIP, p0, p1, 0, 0))
                elif kind == "rows":
                    steps.append((metric, _ROWS, p0, p1, 0, locations))
                else:
                    steps.extend((metric, _PIECE, p0, p1, c0, min(locations, c0 + columns))
                                 for c0 in range(0, locations, columns))
    count = np.array([len(steps)], dtype=np.int64)
    comm.Bcast(count, root=0)
    plan = np.array(steps, dtype=np.int64).reshape(-1, 6) if comm.rank == 0 else np.empty((int(count[0]), 6), np.int64)
    comm.Bcast(plan, root=0)
    return plan


# Row costs reduced in one step: 8 MiB of uint64 (one metric at a time when a metric has more
# call paths), so a report with few call paths per metric plans all metrics in one collective.
_COSTS_AT_ONCE = 1 << 20


def _cost_batches(metrics: int, rows: int) -> list[list[int]]:
    """The metrics whose row costs are reduced together: consecutive runs of at most
    ``_COSTS_AT_ONCE`` entries (at least one metric each)."""
    per = max(1, _COSTS_AT_ONCE // max(rows, 1))
    return [list(range(m, min(metrics, m + per))) for m in range(0, metrics, per)]


def _plan_blocks(costs: np.ndarray, row_bytes: int, budget: int):
    """Blocks of one metric's rows, the same on every rank: ``(kind, p0, p1)`` with kind
    ``"skip"`` (nobody sends a row of [p0, p1)), ``"rows"`` (whole rows: the ranks' parts and
    the writer's index of them, plus one row buffer, within ``budget``) or ``"wide"`` (row p0
    alone, wider than that: in column pieces). ``costs``: per row, what all ranks' parts of
    it cost the writer (0: nobody sends it); rows nobody sends cost nothing."""
    room = budget - row_bytes
    wide = np.flatnonzero((costs > 0) & (costs > room))  # rows nobody sends are skipped, never wide
    cumulative = np.concatenate([[0], np.cumsum(costs)])
    p0, n = 0, len(costs)
    while p0 < n:
        k = int(np.searchsorted(wide, p0))
        if k < len(wide) and wide[k] == p0:
            yield "wide", p0, p0 + 1
            p0 += 1
            continue
        limit = int(np.searchsorted(cumulative, cumulative[p0] + room, side="right")) - 1
        p1 = max(p0 + 1, min(limit, int(wide[k]) if k < len(wide) else n))
        yield ("rows" if cumulative[p1] > cumulative[p0] else "skip"), p0, p1
        p0 = p1


def write_report(comm, profile: LocalProfile, path: str | os.PathLike, compress: bool = False,
                 block_bytes: int = 1 << 20, view=None, names: bool = True, progress: Any = None,
                 threads: str | None = None, thread_names: bool = False, **thread_options: Any) -> dict:
    """One call for mpirun scripts: unify every rank's definitions, build the global system
    tree (each rank's ``view``, default :meth:`LocalProfile.view`), and collate the values
    into one ``.cubex`` at ``path`` written by rank 0 with buffers within ``block_bytes``.
    ``threads`` aggregates each rank's threads first (``"sum"``, ``"set"``, ``"key"``,
    ``"calltree"``, ``"value"``; options as :func:`cubescale.threads.aggregate_profile`), so
    only the aggregated values leave the rank; the new locations keep their names.
    ``thread_names``: keep every location's own name (e.g. a measurement's thread names)
    instead of Score-P's generated ones. Returns this rank's costs per phase.

    Example
    -------
    >>> import numpy as np, os, tempfile
    >>> from mpi4py import MPI
    >>> import cubescale
    >>> from cubescale.profile import LocalProfile, Metric, Region
    >>> p = LocalProfile([Metric(name="visits", dtype="UINT64")], [Region(name="main")],
    ...                  [-1], [0], [("Master thread", "thread")], [np.array([[3]])], host="n1")
    >>> out = os.path.join(tempfile.mkdtemp(), "run.cubex")
    >>> costs = write_report(MPI.COMM_SELF, p, out)
    >>> cubescale.open(out).values("visits").tolist()
    [[3]]
    """
    aggregate_seconds = 0.0
    if threads is not None:
        from ..threads import aggregate_profile

        start = time.perf_counter()
        error = None
        try:
            profile = aggregate_profile(profile, threads, **thread_options)
        except Exception as e:  # noqa: BLE001 - raised on every rank by agree()
            error = e
        agree(comm, error)
        aggregate_seconds = time.perf_counter() - start
    unified = unify(comm, profile)
    start = time.perf_counter()
    # Host and process names are kept (streamed to rank 0 in bounded chunks); threads get
    # Score-P's generated names, aggregated locations keep theirs ("master thread" ...).
    classes = ("node", "process") if threads is None and not thread_names else ("node", "process", "thread")
    system = build_system_tree(comm, view if view is not None else profile.view(comm.rank), root_only=True,
                               names=names, name_classes=classes)
    system_seconds = time.perf_counter() - start
    stats = collate(comm, profile, path, unified, system, compress, block_bytes, progress)
    return {"threads": {"seconds": aggregate_seconds}, "unify": unified.stats,
            "system_tree": {"seconds": system_seconds, **system.stats}, "collate": stats}
