"""Trace -> profile under mpirun (the Scalasca architecture paper): every rank reads a share of an OTF2 trace's
processes and the ranks collate one ``.cubex``.

Every rank reads the trace's global definitions (small), so every rank knows the whole
machine and the global location order without communication: no distributed system-tree
build is needed. Rank r takes a contiguous block of location groups (processes), balanced by
their announced event counts, runs the C++ trace -> profile kernel over their locations (one
streaming pass each) and then takes part in :func:`~cubescale.parallel.unify` and
:func:`~cubescale.parallel.collate` as any profile's rank does. Contiguous blocks keep a rank's
locations a contiguous column range, which collation needs; the definitions, the machine and
the values do not depend on the split, so the file is the same for any number of ranks.

Example
-------
>>> import os, tempfile
>>> from mpi4py import MPI
>>> import cubescale, cubescale.trace
>>> out = os.path.join(tempfile.mkdtemp(), "profile.cubex")
>>> stats = profile_trace(MPI.COMM_SELF, cubescale.examples.trace_path(), out)
>>> stats["shape"], stats["events"]
((6, 4), 1448)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from .._polled import reading_status, run_polled
from ..commands._inputs import checked_trace
from ..trace import open as open_trace
from .collective import agree
from .known_machine import KnownMachine, collate_on_known_machine, share_of_groups

__all__ = ["profile_trace", "share_of_groups"]


def rank_share(trace, size: int, rank: int) -> tuple[tuple[int, int], list[int], int]:
    """What ``rank`` of ``size`` reads of a trace: its block of location groups (balanced by
    the events the definitions announce), their locations in the machine's order, and the
    global column of the first one.

    Example
    -------
    >>> from cubescale import trace
    >>> from cubescale.examples import trace_path
    >>> rank_share(trace.open(trace_path()), 2, 1)
    ((2, 4), [2, 3], 2)
    """
    groups = trace.process_groups()
    announced = trace.announced_events()
    weights = [int(announced[g].sum()) for g in groups]
    block = share_of_groups(weights, size, rank)
    locations = [loc for g in groups[block[0]:block[1]] for loc in g]
    return block, locations, sum(len(g) for g in groups[:block[0]])


def profile_trace(comm, path: str | os.PathLike, output: str | os.PathLike, *, compress: bool = False,
                  block_bytes: int = 1 << 20, progress: Callable[[str], None] | None = None) -> dict:
    """Converts the trace at ``path`` into one profile report at ``output`` (collective over
    ``comm``; rank 0 writes). Returns this rank's share and costs: ``groups`` (its block),
    ``locations``, ``events``, ``unclosed_frames`` (regions still open at the end of their
    locations' events, closed there), ``shape`` of the report, ``metrics``, and seconds per phase.

    An error on any rank (a broken event file in its share) is raised on every rank, and
    no file is left behind. ``progress`` (give it on one rank): called with a status line,
    this rank's share read so far, while it reads.
    """
    start = time.perf_counter()
    error: BaseException | None = None
    trace = local = None
    block = (0, 0)
    locations: list[int] = []
    first = 0
    try:  # the output checked before the reading: rank 0 writes it
        trace = open_trace(checked_trace(path, output if comm.rank == 0 else None))
        block, locations, first = rank_share(trace, comm.size, comm.rank)
        share = int(trace.announced_events()[locations].sum()) if len(locations) else 0
        status = reading_status(trace, share, f"rank {comm.rank} of {comm.size}: reading events")
        local, kernel = run_polled(lambda: trace.local_profile(locations), status, progress)
        if progress:
            progress("unifying and collating the ranks' profiles")
    except Exception as e:  # noqa: BLE001 - raised on every rank by agree()
        error = e
    agree(comm, error)
    assert trace is not None and local is not None
    read_seconds = time.perf_counter() - start
    unified, costs = collate_on_known_machine(comm, local, output, lambda: KnownMachine(trace.system_tree()),
                                              first, len(locations), block[0], compress, block_bytes)
    events = comm.allreduce(int(kernel["events"]))
    unclosed = comm.allreduce(int(kernel["unclosed_frames"]))
    counts = comm.bcast(tuple(unified.state.global_counts) if comm.rank == 0 else None, root=0)  # type: ignore[attr-defined]
    shape, metrics = (int(counts[2]), len(trace.announced_events())), int(counts[0])
    return {"groups": block, "locations": len(locations), "events": events, "unclosed_frames": unclosed,
            "shape": shape, "metrics": metrics,
            "read_seconds": read_seconds, "unify": unified.stats, "collate": costs,
            "seconds": time.perf_counter() - start}
