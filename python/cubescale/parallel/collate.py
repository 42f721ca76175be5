"""Collation of every rank's values into one ``.cubex`` with bounded writer memory
(paper 001, section 3; paper 002, section 4.3).

After :func:`~cubescale.parallel.unify` and :func:`~cubescale.parallel.build_system_tree`,
the writer (rank 0) streams the report: for each metric, one reduction of per-row costs
tells every rank how many bytes each row will bring, and blocks of rows in the metric's row
order are cut to the budget by what is really sent. Every rank sends only its non-zero rows
of the block (a rank that never visited a call path sends nothing for it), rank 0 gathers
them (``Gatherv``), and C++ (``write_parts``) composes each sent row in one row buffer and
hands it to ``CubexWriter``; rows nobody sent are zero everywhere and are left out of the
SPARSE index. A row wider than the budget is gathered and written in column pieces, so the
writer's buffers stay within ``block_bytes`` whatever the number of ranks (MPI's ``Gatherv``
itself takes a count and a displacement per rank on the root: 16 bytes per rank, and the
cost reduction 8 bytes per call path on every rank, outside the data budget).

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

    def gather(part: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        counts = np.zeros(comm.size, dtype=np.int64) if root else None
        comm.Gather(np.array([len(part)], dtype=np.int64), counts, root=0)
        buffer = np.empty(int(counts.sum()) if root else 0, dtype=np.uint8)  # type: ignore[union-attr]
        comm.Gatherv(part, (buffer, counts) if root else None, root=0)
        stats["bytes_sent"] += len(part)
        stats["blocks"] += 1
        if root:
            return buffer, counts  # type: ignore[return-value]
        return None

    def write(got, p0: int, p1: int, c0: int, c1: int, width: int, piece: bool) -> None:
        buffer, counts = got
        assert writer is not None  # on_writer calls this on the root only, while it writes
        held = _profile.write_parts(writer, buffer, counts, p0, p1, c0, c1, width, piece)
        stats["writer_buffer_bytes"] = max(stats["writer_buffer_bytes"], buffer.nbytes + held)

    def part_of(metric: int, p0: int, p1: int, c0: int, c1: int) -> np.ndarray:
        nonlocal failure
        if failure is None:
            try:
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

    for metric, width in enumerate(widths):
        on_writer(lambda m=metric: writer.begin_metric(m))  # type: ignore[union-attr]
        # Blocks are planned by what every rank really sends: one reduction of per-row costs.
        costs = np.zeros(cnodes, dtype=np.uint64)
        if failure is None:
            try:
                costs = source.row_costs(metric, cnodes)
            except Exception as e:  # noqa: BLE001 - keeps taking part; raised at the end
                failure = e
        comm.Allreduce(MPI.IN_PLACE, costs, op=MPI.SUM)
        for kind, p0, p1 in _plan_blocks(costs.astype(np.int64), locations * width, int(block_bytes)):
            if kind == "skip":
                on_writer(lambda n=p1 - p0: writer.skip_rows(n))  # type: ignore[union-attr]
            elif kind == "rows":
                got = gather(part_of(metric, p0, p1, 0, locations))
                if root and failure is None:
                    on_writer(lambda g=got, a=p0, b=p1, w=width: write(g, a, b, 0, locations, w, False))
            else:  # a row wider than the budget: in column pieces
                # Worst case per column: every value from another rank (8 header + 4 position +
                # 24 index + the value) and its place in the row buffer.
                columns = max(1, int(block_bytes) // (2 * width + 36))
                on_writer(lambda: writer.begin_row())  # type: ignore[union-attr]
                for c0 in range(0, locations, columns):
                    c1 = min(locations, c0 + columns)
                    got = gather(part_of(metric, p0, p0 + 1, c0, c1))
                    if root and failure is None:
                        on_writer(lambda g=got, a=p0, c=c0, d=c1, w=width: write(g, a, a + 1, c, d, w, True))
                on_writer(lambda: writer.end_row())  # type: ignore[union-attr]
        on_writer(lambda: writer.end_metric())  # type: ignore[union-attr]
        if progress is not None and root:
            progress(metric + 1, len(widths))
    on_writer(lambda: writer.finish())  # type: ignore[union-attr]
    writer = None  # an unfinished writer removes its temporary file when released
    agree(comm, failure)
    stats["seconds"] = time.perf_counter() - start
    return stats


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
