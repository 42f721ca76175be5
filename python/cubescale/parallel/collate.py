"""Collation of every rank's values into one ``.cubex`` with bounded writer memory
(paper 001, section 3; paper 002, section 4.3).

After :func:`~cubescale.parallel.unify` and :func:`~cubescale.parallel.build_system_tree`,
the writer (rank 0) streams the report: for each metric, a reduction of per-row costs tells
the writer how many bytes each row will bring, it cuts blocks of rows in the metric's row
order to the budget by what is really sent and broadcasts that plan once. Every rank sends
only its non-zero rows of the block (a rank that never visited a call path sends nothing for
it) followed by the size of its next part, rank 0 gathers them (one ``Gatherv`` per block),
and C++ (``write_parts``) composes each sent row in one row buffer and
hands it to ``CubexWriter``; rows nobody sent are zero everywhere and are left out of the
SPARSE index. A row wider than the budget is gathered and written in column pieces, so the
writer's buffers stay within ``block_bytes`` whatever the number of ranks (MPI's ``Gatherv``
itself takes a count and a displacement per rank on the root, and each part is followed by
its rank's next size: 24 bytes per rank; the cost reduction takes 8 bytes per call path of
one metric, the plan 48 bytes per block; all outside the data budget).

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
from .collective import agree
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
    >>> from cubescale.profile import LocalProfile, MetricDefinition, RegionDefinition
    >>> p = LocalProfile([MetricDefinition(name="time")], [RegionDefinition(name="main")], [-1], [0],
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
    writer = None
    error: BaseException | None = None
    info = None
    # Each location group's <rank> is the MPI rank that holds it: processes of equal structure
    # are grouped in the sequence tree, so a group's position need not be its rank.
    owners = np.full(comm.size, -1, dtype=np.int64) if root else None
    comm.Gather(np.array([system.location_group_index], dtype=np.int64), owners, root=0)
    try:
        source = _row_source(profile, unified, _first_location(system))
        if root:
            assert system.tree is not None and owners is not None
            expanded = system.tree.expand()._core  # type: ignore[attr-defined]
            # Only when every rank holds its own process (write_report); ranks holding several
            # processes (a trace's) leave the groups' positions as ranks.
            group_ranks: list[int] = []
            if np.array_equal(np.sort(owners), np.arange(comm.size)):
                group_ranks = np.argsort(owners).tolist()
            report = unified.state.global_report(expanded, group_ranks)  # type: ignore[attr-defined]
            writer = _cube.CubexWriter(report, path, compress)
            metrics = report.metrics()
            info = ([_cube.DataType(m.dtype).width for m in metrics], report.cnode_count, report.location_count)
    except Exception as e:  # noqa: BLE001 - raised on every rank by agree()
        error, writer = e, None
    try:
        agree(comm, error)
    except BaseException:
        writer = None  # released now: its temporary file goes with it
        raise
    widths, cnodes, locations = comm.bcast(info, root=0)
    stats: dict[str, float] = {"bytes_sent": 0, "writer_buffer_bytes": 0, "blocks": 0}
    # The smallest block: one value in a row piece, sent by another rank (header 8, position 4,
    # index entry 24, the value in the part and in the row buffer).
    widest = max(widths, default=0)
    if int(block_bytes) < 2 * widest + 36:
        raise ValueError(f"block_bytes={block_bytes} cannot hold one value of {widest} bytes "
                         f"(needs {2 * widest + 36})")
    failure: BaseException | None = None

    def part_of(step: np.ndarray) -> np.ndarray:
        nonlocal failure
        if failure is None:
            try:
                metric, _, p0, p1, c0, c1 = (int(x) for x in step)
                return source.block(metric, p0, p1, c0, c1)
            except Exception as e:  # noqa: BLE001 - keeps taking part; raised at the end
                failure = e
        return np.empty(0, dtype=np.uint8)

    def on_writer(step) -> None:
        nonlocal failure, writer
        if root and failure is None:
            try:
                step()
            except Exception as e:  # noqa: BLE001
                failure, writer = e, None

    def row_costs(metric: int) -> np.ndarray:
        nonlocal failure
        if failure is None:
            try:
                return source.row_costs(metric, cnodes)
            except Exception as e:  # noqa: BLE001 - keeps taking part; raised at the end
                failure = e
        return np.zeros(cnodes, dtype=np.uint64)

    plan = _plan(comm, MPI, row_costs, widths, locations, int(block_bytes))
    gathered = plan[plan[:, 1] != _SKIP]
    # Every gathered block but the first learns each rank's part size from the block before:
    # a rank sends its part followed by the size of its next part (8 bytes, as a separate
    # gather of sizes would cost, without that collective's round trip per block).
    current = part_of(gathered[0]) if len(gathered) else np.empty(0, dtype=np.uint8)
    counts = np.zeros(comm.size, dtype=np.int64) if root else None
    if len(gathered):
        comm.Gather(np.array([len(current)], dtype=np.int64), counts, root=0)
    blocks = iter(range(len(gathered)))
    for metric, width in enumerate(widths):
        on_writer(lambda m=metric: writer.begin_metric(m))  # type: ignore[union-attr]
        for step in plan[plan[:, 0] == metric]:
            _, kind, p0, p1, c0, c1 = (int(x) for x in step)
            if kind == _SKIP:
                on_writer(lambda n=p1 - p0: writer.skip_rows(n))  # type: ignore[union-attr]
                continue
            i = next(blocks)
            following = part_of(gathered[i + 1]) if i + 1 < len(gathered) else np.empty(0, dtype=np.uint8)
            sent = np.concatenate([current, np.array([len(following)], dtype="<u8").view(np.uint8)])
            buffer = np.empty(int(counts.sum()) + 8 * comm.size if root else 0, dtype=np.uint8)  # type: ignore[union-attr]
            comm.Gatherv(sent, (buffer, counts + 8) if root else None, root=0)  # type: ignore[operator]
            stats["bytes_sent"] += len(sent)
            stats["blocks"] += 1
            if root:
                sizes, counts = counts, _trailers(buffer, counts)  # type: ignore[arg-type]
                piece = kind == _PIECE

                def write(b=buffer, s=sizes, a=p0, e=p1, f=c0, g=c1, w=width, one=piece) -> None:
                    assert writer is not None
                    held = _profile.write_parts(writer, b, s, a, e, f, g, w, one, 8)
                    # The size trailers (8 bytes per rank) are counted with MPI's per-rank counts.
                    data = b.nbytes - 8 * len(s)
                    stats["writer_buffer_bytes"] = max(stats["writer_buffer_bytes"], data + held)

                if piece and c0 == 0:
                    on_writer(lambda: writer.begin_row())  # type: ignore[union-attr]
                on_writer(write)
                if piece and c1 == locations:
                    on_writer(lambda: writer.end_row())  # type: ignore[union-attr]
            current = following
        on_writer(lambda: writer.end_metric())  # type: ignore[union-attr]
        if progress is not None and root:
            progress(metric + 1, len(widths))
    on_writer(lambda: writer.finish())  # type: ignore[union-attr]
    writer = None  # an unfinished writer removes its temporary file when released
    agree(comm, failure)
    stats["seconds"] = time.perf_counter() - start
    return stats


_SKIP, _ROWS, _PIECE = 0, 1, 2


def _trailers(buffer: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The size of every rank's next part: the 8 bytes after its part in a gathered block
    (read in chunks of ranks, so the index stays small at any number of ranks)."""
    starts = np.cumsum(sizes + 8) - 8
    out = np.empty(len(sizes), dtype=np.int64)
    chunk = 1 << 16
    for k in range(0, len(starts), chunk):
        at = starts[k:k + chunk]
        out[k:k + len(at)] = buffer[at[:, None] + np.arange(8)].view("<u8").ravel()
    return out


def _plan(comm, MPI, row_costs, widths: list[int], locations: int, budget: int) -> np.ndarray:
    """Every step of the collation, the same on every rank: rows ``(metric, kind, p0, p1, c0,
    c1)`` with kind ``_SKIP`` (rows [p0, p1) nobody sends), ``_ROWS`` (whole rows [p0, p1)) or
    ``_PIECE`` (columns [c0, c1) of row p0, wider than the budget). Blocks are cut by what every
    rank really sends: per metric, the ranks' per-row costs are summed on the writer (a
    ``Reduce``: one metric's costs at a time there), which plans; one broadcast of the plan."""
    steps: list[tuple[int, ...]] = []
    for metric, width in enumerate(widths):
        costs = row_costs(metric)
        total = np.zeros_like(costs) if comm.rank == 0 else None
        comm.Reduce(costs, total, op=MPI.SUM, root=0)
        if comm.rank != 0:
            continue
        row_bytes = locations * width
        # Worst case per column of a wide row: every value from another rank (8 header + 4
        # position + 24 index + the value) and its place in the row buffer.
        columns = max(1, budget // (2 * width + 36)) if width else 1
        for kind, p0, p1 in _plan_blocks(total.astype(np.int64), row_bytes, budget):  # type: ignore[union-attr]
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
    >>> from cubescale.profile import LocalProfile, MetricDefinition, RegionDefinition
    >>> p = LocalProfile([MetricDefinition(name="visits", dtype="UINT64")], [RegionDefinition(name="main")],
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
