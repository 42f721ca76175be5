"""Collation of every rank's values into one ``.cubex`` with bounded writer memory
(paper 001, section 3; paper 002, section 4.3).

After :func:`~cubescale.parallel.unify` and :func:`~cubescale.parallel.build_system_tree`,
the writer (rank 0) streams the report: for each metric and each block of rows in the
metric's row order, every rank sends only its non-zero rows of the block (a rank that never
visited a call path sends nothing for it), rank 0 gathers them (``Gatherv``), places them in
one block buffer (C++ ``BlockAssembler``) and hands the rows to ``CubexWriter``; rows nobody
sent are zero everywhere and are left out of the SPARSE index. A row wider than the budget is
gathered and written in column pieces, so the writer's buffers stay within ``block_bytes``
whatever the number of ranks (MPI's ``Gatherv`` itself takes a count and a displacement per
rank on the root: 16 bytes per rank, outside the data budget).

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
    MPI = mpi()
    start = time.perf_counter()
    path = os.fspath(path)
    root = comm.rank == 0
    writer = assembler = None
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
            group_ranks = np.full(int(owners.max()) + 1 if len(owners) else 0, -1, dtype=np.int64)
            group_ranks[owners] = np.arange(comm.size, dtype=np.int64)
            report = unified.state.global_report(  # type: ignore[attr-defined]
                expanded, group_ranks.tolist() if (group_ranks >= 0).all() else [])
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
    # What one value (cell) of a block can cost the writer at most: its bytes in the gathered
    # parts and in the block, a position (4) and a part header (8) if every cell came from
    # another rank, and the row's flag (1). Blocks hold block_bytes // that many cells.
    widest = max(widths, default=0)
    if int(block_bytes) < 2 * widest + 13:
        raise ValueError(f"block_bytes={block_bytes} cannot hold one value of {widest} bytes "
                         f"(needs {2 * widest + 13})")
    failure: BaseException | None = None

    def gather(part: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        counts = np.zeros(comm.size, dtype=np.int64) if root else None
        comm.Gather(np.array([len(part)], dtype=np.int64), counts, root=0)
        buffer = np.empty(int(counts.sum()) if root else 0, dtype=np.uint8)  # type: ignore[union-attr]
        comm.Gatherv(part, (buffer, counts) if root else None, root=0)
        stats["bytes_sent"] += len(part)
        stats["blocks"] += 1
        if root:
            assert assembler is not None
            stats["writer_buffer_bytes"] = max(stats["writer_buffer_bytes"], buffer.nbytes + assembler.capacity_bytes)
            return buffer, counts  # type: ignore[return-value]
        return None

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
        cells = int(block_bytes) // (2 * width + 13)
        assembler = _profile.BlockAssembler(width) if root else None
        on_writer(lambda m=metric: writer.begin_metric(m))  # type: ignore[union-attr]
        if locations <= cells:
            rows = cells // locations
            for p0 in range(0, cnodes, rows):
                p1 = min(cnodes, p0 + rows)
                got = gather(part_of(metric, p0, p1, 0, locations))
                if root and failure is None:
                    on_writer(lambda g=got, a=p0, b=p1, s=assembler: _write_block(s, writer, g, a, b, 0, locations))
        else:  # rows wider than the budget: one row at a time, in column pieces
            columns = cells
            for p in range(cnodes):
                nonzero = comm.allreduce(failure is None and bool(source.nonzero(metric, p)), op=MPI.LOR)
                if not nonzero:
                    on_writer(lambda: writer.skip_rows(1))  # type: ignore[union-attr]
                    continue
                on_writer(lambda: writer.begin_row())  # type: ignore[union-attr]
                for c0 in range(0, locations, columns):
                    c1 = min(locations, c0 + columns)
                    got = gather(part_of(metric, p, p + 1, c0, c1))
                    if root and failure is None:
                        on_writer(lambda g=got, a=p, c=c0, d=c1, s=assembler: _write_piece(s, writer, g, a, c, d))
                on_writer(lambda: writer.end_row())  # type: ignore[union-attr]
        on_writer(lambda: writer.end_metric())  # type: ignore[union-attr]
        if progress is not None and root:
            progress(metric + 1, len(widths))
    on_writer(lambda: writer.finish())  # type: ignore[union-attr]
    writer = None  # an unfinished writer removes its temporary file when released
    agree(comm, failure)
    stats["seconds"] = time.perf_counter() - start
    return stats


def _write_block(assembler, writer, got, p0: int, p1: int, c0: int, c1: int) -> None:
    buffer, counts = got
    assembler.reset(p0, p1, c0, c1)
    assembler.add_parts(buffer, counts)
    assembler.write_to(writer)


def _write_piece(assembler, writer, got, p: int, c0: int, c1: int) -> None:
    buffer, counts = got
    assembler.reset(p, p + 1, c0, c1)
    assembler.add_parts(buffer, counts)
    assembler.write_piece_to(writer)


def write_report(comm, profile: LocalProfile, path: str | os.PathLike, compress: bool = False,
                 block_bytes: int = 1 << 20, view=None, names: bool = True, progress: Any = None,
                 threads: str | None = None, **thread_options: Any) -> dict:
    """One call for mpirun scripts: unify every rank's definitions, build the global system
    tree (each rank's ``view``, default :meth:`LocalProfile.view`), and collate the values
    into one ``.cubex`` at ``path`` written by rank 0 with buffers within ``block_bytes``.
    ``threads`` aggregates each rank's threads first (``"sum"``, ``"set"``, ``"key"``,
    ``"calltree"``, ``"value"``; options as :func:`cubescale.threads.aggregate_profile`), so
    only the aggregated values leave the rank; the new locations keep their names.
    Returns this rank's costs per phase.

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
    classes = ("node", "process") if threads is None else ("node", "process", "thread")
    system = build_system_tree(comm, view if view is not None else profile.view(comm.rank), root_only=True,
                               names=names, name_classes=classes)
    system_seconds = time.perf_counter() - start
    stats = collate(comm, profile, path, unified, system, compress, block_bytes, progress)
    return {"threads": {"seconds": aggregate_seconds}, "unify": unified.stats,
            "system_tree": {"seconds": system_seconds, **system.stats}, "collate": stats}
