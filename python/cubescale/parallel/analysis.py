"""The wait-state analysis as a parallel replay over MPI ranks (the Scalasca architecture paper, section 5.2):
every rank analyzes a share of an OTF2 trace's locations and the ranks collate one ``.cubex``.

Each rank reads the trace's definitions (small) and takes a contiguous block of processes,
balanced by their announced event counts (as :func:`~cubescale.parallel.trace.profile_trace`
does). The C++ core (``_core.analysis.Replay``) streams only those locations' events and keeps
one fixed-size record per MPI message event and collective; this module moves the records
between the ranks as raw bytes, in ``Alltoallv`` exchanges:

1. every send goes to the rank owning its receiver, in rounds of bounded size (the sender
   releases a round's records once they went), which pairs each with its receive as the round
   arrives (written into the receive's record) and then computes Late Sender and its
   wrong-order sub-patterns;
2. every collective record goes to the *home* rank of its instance (round robin over a
   communicator's instances), which checks that every member has it and reduces it (latest
   enter, earliest leave, the root's enter, prefix maxima for scans);
3. the reductions return to the records' owners, which compute their collective patterns;
4. beside them (``_core.analysis.Replay(..., complete=True)``, analysis/replay_beside.hpp): in
   each round the receiver's owner returns each send's receive posting time to the sender's
   owner (Late Receiver, while the round's records exist), the homes return per collective record the time its leave must follow and whom it
   waited for (clock conditions, critical path); non-blocking collectives go to homes as the
   blocking ones; the critical path's backward walk moves from rank to rank with the location it
   is on; OpenMP patterns and counts are local; ``time_correct`` corrects the records first, in
   rounds of exchanged corrected times; rank 0 merges the ranks' instance statistics
   (trace.stat).

A rank holds its own records, one round's sends to its locations and the instances it is home
of, never all of them. The metrics present on any rank decide the metric tree, then unification and
collation write the report: the same bytes for any number of ranks, and the same as
:func:`cubescale.analyze` in one process. An inconsistent trace (unmatched messages, a
collective some members lack, a location cut short) raises :class:`ReplayFormatError` (a
:class:`cubescale.FormatError` naming the location, the event and its time) on every rank, and
no file is written. docs/analysis.md has the design and its memory bound.

Example
-------
>>> import os, tempfile
>>> from mpi4py import MPI
>>> import cubescale
>>> out = os.path.join(tempfile.mkdtemp(), "scout.cubex")
>>> stats = analyze_trace(MPI.COMM_SELF, cubescale.examples.trace_path(), out)
>>> stats["shape"], stats["events"], stats["messages"], stats["collectives"]
((6, 4), 1448, 160, 80)
"""

from __future__ import annotations

import functools
import os
import pickle
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._affinity import affinity, available_cores, thread_count
from .._core import analysis as _analysis
from .._memory import MemoryProjection, available_memory, in_gib
from .._polled import run_polled
from ..commands._inputs import checked_trace
from ..errors import FormatError, error_text
from ..profile import _call_path_names
from ..trace import open as open_trace
from ._mpi import mpi
from .collective import CollectiveError
from .known_machine import KnownMachine, collate_on_known_machine
from .trace import rank_share

__all__ = ["ReplayFormatError", "analyze_trace", "exchange", "raise_everywhere", "rank_threads"]

_NO_RANK = 0xFFFFFFFF
_ROUND_FAILED = 1 << 5  # Replay.plan_round: some rank's rows say it failed
ROUND_BYTES = 16 << 20  # packed sends per rank and round of the message exchange (at most)


class ReplayFormatError(FormatError, CollectiveError):
    """A :class:`cubescale.FormatError` of one rank's share, raised on every rank of a replay
    (also a :class:`~cubescale.parallel.collective.CollectiveError`, so that the command line
    prints it once).

    Example
    -------
    >>> e = ReplayFormatError("MPI receive without a matching send", "t.otf2", "t/1.evt", 7)
    >>> isinstance(e, ValueError), e.member, e.offset
    (True, 't/1.evt', 7)
    """


def raise_everywhere(comm, error: BaseException | None) -> None:
    """Collective: if any rank has an ``error``, every rank raises the lowest such rank's:
    a :class:`ReplayFormatError` with the same file, member, offset and message for a
    FormatError, else a :class:`~cubescale.parallel.collective.CollectiveError` with its text.

    Example
    -------
    >>> from mpi4py import MPI
    >>> raise_everywhere(MPI.COMM_SELF, None)
    >>> try:
    ...     raise_everywhere(MPI.COMM_SELF, FormatError("cut short", "t.otf2", "t/0.evt", 12))
    ... except FormatError as e:
    ...     print(e)
    t.otf2: member t/0.evt: offset 12: cut short
    """
    MPI = mpi(comm)
    mine, lowest = np.array([comm.rank if error is not None else comm.size], dtype=np.int64), np.empty(1, np.int64)
    comm.Allreduce(mine, lowest, op=MPI.MIN)  # a buffer's: a third of a pickled allreduce's time, once per round
    failed = int(lowest[0])
    if failed == comm.size:
        return
    what = None
    if comm.rank == failed:
        assert error is not None
        what = (("format", error.message, error.file, error.member, error.offset) if isinstance(error, FormatError)
                else ("other", f"rank {comm.rank}: {type(error).__name__}: {error_text(error)}"))
    what = comm.bcast(what, root=failed)
    if what[0] == "format":
        raise ReplayFormatError(*what[1:])
    raise CollectiveError(what[1])


def exchange(comm, outgoing: np.ndarray, counts: Sequence[int], incoming: Callable[[int], np.ndarray],
             record_bytes: int, expected: Sequence[int] | None = None) -> list[int]:
    """Collective ``Alltoallv`` of fixed-size records as bytes: ``outgoing`` holds
    ``counts[r]`` records for rank r, in rank order; ``incoming(n)`` gives the writable byte
    buffer for the ``n`` records this rank receives (in the senders' rank order). Returns the
    records received from each rank. ``expected``: those counts when this rank knows them
    already (the way back of an exchange: what it sent each rank), which saves the
    ``Alltoall`` of the counts.

    Example
    -------
    >>> from mpi4py import MPI
    >>> box = {}
    >>> exchange(MPI.COMM_SELF, np.arange(8, dtype=np.uint8), [2], lambda n: box.setdefault("in", np.zeros(4 * n, np.uint8)), 4)
    [2]
    >>> box["in"].tolist()
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    send_counts = np.asarray(counts, dtype=np.int64)
    if comm.size == 1:
        target = incoming(int(send_counts[0]))
        target[:] = outgoing
        return [int(send_counts[0])]
    MPI = mpi(comm)
    if expected is None:
        received = np.empty(comm.size, dtype=np.int64)
        comm.Alltoall(send_counts, received)
    else:
        received = np.asarray(expected, dtype=np.int64)
    error: BaseException | None = None
    try:  # the receive buffer (the largest allocation): an error must reach every rank
        target = incoming(int(received.sum()))
    except Exception as e:  # noqa: BLE001 - raised on every rank below
        error = e
    raise_everywhere(comm, error)
    record = MPI.BYTE.Create_contiguous(record_bytes).Commit()  # counts in records: far below 2**31
    try:
        def displacements(c: np.ndarray) -> np.ndarray:
            return np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int32)

        comm.Alltoallv([outgoing, (send_counts.astype(np.int32), displacements(send_counts)), record],
                       [target, (received.astype(np.int32), displacements(received)), record])
    finally:
        record.Free()
    return [int(x) for x in received]


def _step(comm, work: Callable[[], Any]) -> Any:
    """Runs one rank's ``work``; an error on any rank is raised on every rank."""
    error: BaseException | None = None
    result = None
    try:
        result = work()
    except Exception as e:  # noqa: BLE001 - raised on every rank below
        error = e
    raise_everywhere(comm, error)
    return result


def _allgathered(comm, obj: Any) -> list:
    """Collective: every rank's ``obj`` on every rank, as ``comm.allgather`` (``_objects``)."""
    everyone = _objects(comm, obj, None)
    assert everyone is not None
    return everyone


def _objects(comm, obj: Any, root: int | None) -> list | None:
    """Collective: every rank's ``obj`` on every rank (``root`` None, as ``comm.allgather``) or
    on ``root`` (as ``comm.gather``; None elsewhere). mpi4py's pickled collectives pickle,
    allocate the receive buffer and unpickle where an error on one rank (a full memory) leaves
    the others waiting; here each of those steps goes through ``_step``."""
    if comm.size == 1:
        return [obj]
    MPI = mpi(comm)
    data = _step(comm, lambda: np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), np.uint8))
    sizes = np.empty(comm.size, np.int64)
    comm.Allgather(np.array([len(data)], np.int64), sizes)
    here = root is None or comm.rank == root
    at = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    def target() -> np.ndarray | None:
        if int(sizes.sum()) > np.iinfo(np.int32).max:  # MPI's counts and displacements
            raise ValueError(f"{int(sizes.sum()):,} bytes of results to gather: more than 2 GiB")
        return np.empty(int(sizes.sum()), np.uint8) if here else None

    buffer = _step(comm, target)
    layout = (sizes.astype(np.int32), at.astype(np.int32))
    if root is None:
        comm.Allgatherv(data, [buffer, layout, MPI.BYTE])
    else:
        comm.Gatherv(data, [buffer, layout, MPI.BYTE] if here else None, root=root)
    return _step(comm, lambda: [pickle.loads(buffer[a:a + n]) for a, n in zip(at, sizes)] if here else None)


def rank_threads(comm) -> int:
    """Collective: how many threads a rank of ``comm`` reads its share of a trace on by default:
    the logical CPUs it may run on (its CPU affinity, which mpirun and batch systems set; with
    SMT a core counts its hardware threads) divided among the ranks on its node that may run on
    them too. Open MPI binds each of up to 2 ranks to a core (one thread each, without SMT); a
    rank alone on a node with ``--bind-to none``, or given several cores (``--map-by
    ppr:1:node:pe=8``, Slurm's ``--cpus-per-task``), reads on all of them. CPU quotas (cgroups)
    are not seen. Reading on threads helps a rank holding several processes of the trace (each
    thread reads whole processes).

    Example
    -------
    >>> from mpi4py import MPI
    >>> rank_threads(MPI.COMM_SELF) >= 1
    True
    """
    return _node_share(comm)[0]


def _node_share(comm) -> tuple[int, int]:
    """Collective: (:func:`rank_threads`, how many ranks of ``comm`` share this rank's node)."""
    if comm.size == 1:
        return available_cores(), 1
    mine = affinity()  # (None: no affinity here, on every rank alike or on this one)
    node = comm.Split_type(mpi(comm).COMM_TYPE_SHARED)  # every rank, with or without an affinity
    try:
        everyone = _allgathered(node, mine)
    finally:
        node.Free()
    if mine is None:
        return 1, len(everyone)
    own = set(mine)
    sharing = sum(1 for cores in everyone if cores is not None and own.intersection(cores))
    return max(1, len(mine) // max(1, sharing)), len(everyone)


def _owners(trace, size: int) -> np.ndarray:
    """The rank owning each location (``_NO_RANK`` for locations nobody analyzes)."""
    owner = np.full(len(trace.announced_events()), _NO_RANK, dtype=np.uint32)
    for r in range(size):
        owner[rank_share(trace, size, r)[1]] = r
    return owner


def analyze_trace(comm, path: str | os.PathLike, output: str | os.PathLike, compress: bool = False,
                  block_bytes: int = 1 << 20, time_correct: bool = False, min_latency: float = 0.0,
                  round_bytes: int = ROUND_BYTES, progress: Callable[[str], None] | None = None,
                  min_thread_latency: float | None = None, threads: int | None = None,
                  chunk_records: int | None = None) -> dict:
    """Collective over ``comm``: the wait-state analysis of the trace at ``path`` written to
    ``output`` (rank 0 writes), every metric of :func:`cubescale.analyze` in one process
    (``time_correct``, ``min_latency`` seconds for the clock condition, ``min_thread_latency``
    for its OpenMP checks, default ``min_latency``), the same bytes; the
    sends are exchanged in rounds of at most ``round_bytes`` per rank. Returns
    this rank's share
    and costs: ``groups`` (its block of processes), ``locations``, and over all ranks
    ``events``, ``messages`` and ``collectives`` (records), ``shape`` and ``metrics`` of the
    report, ``hand_offs`` (the critical path's walk steps: one more than the times it moved between
    ranks), ``correction``
    (with ``time_correct``: rounds, events moved forward, the largest move in ticks),
    ``statistics`` (rank 0, else None: the instance statistics of every rank merged, in ticks, the
    most severe instance of each call path; :func:`cubescale.analyze` makes them
    :func:`cubescale.analysis.statistics`); this rank's
    ``own`` counts (events, messages, collectives and OpenMP synchronization events of its
    locations), ``record_bytes`` (the most
    bytes of records and of the exchanges beside them it held at once), and seconds per phase.
    ``progress`` (give it on one rank): called with a status line, this rank's share read, the
    time correction's rounds and the steps after. ``threads``: how many threads read this rank's
    share, each a part of its processes (default :func:`rank_threads`; at most one per process
    of the share, so a rank holding one process reads on one), and in how many chunks the steps
    after the reading take its records (of ``chunk_records`` records at least each, default the
    core's; tests make it small); the report is the same for any number; ``threads`` in the
    result: how many read. A :class:`RuntimeWarning` on a rank whose share, projected from the
    memory its reading took so far, will not fit in its part of its node's memory
    (``cubescale._memory``).
    """
    start = time.perf_counter()
    MPI = mpi(comm)
    if threads is not None:
        thread_count(threads)
    # Collective on every rank, also where threads is given: ranks given it and ranks not still
    # take part in the same steps.
    default, node_ranks = _node_share(comm)
    threads = default if threads is None else threads
    # Before any reading: every rank reads the trace, rank 0 writes the output.
    path = _step(comm, lambda: checked_trace(path, output if comm.rank == 0 else None))
    chunking = {} if chunk_records is None else {"chunk_records": chunk_records}
    seconds: dict[str, float] = {}
    say = progress or (lambda text: None)

    def opened():
        trace = open_trace(path)
        block, locations, first = rank_share(trace, comm.size, comm.rank)
        share = int(trace.announced_events()[locations].sum()) if len(locations) else 0

        # A share outgrowing this rank's part of its node's memory is told while it is read.
        available = available_memory()
        watch = MemoryProjection(share, available=None if available is None else available // node_ranks,
                                 what=f"rank {comm.rank} of {comm.size}'s share",
                                 advice=f"the {node_ranks} ranks on its node share {in_gib(available or 0)}: run more "
                                        f"ranks, or fewer per node")

        def status() -> str:
            read = int(trace._core.events_read())
            watch.warn(min(read, share))
            return f"rank {comm.rank} of {comm.size}: reading events: {read:,} of {share:,}"

        replay = run_polled(lambda: _analysis.Replay(trace._core, trace.location_indices(), locations, complete=True,
                                                     min_latency=min_latency, min_thread_latency=min_thread_latency,
                                                     threads=threads, **chunking),
                             status, progress or (lambda text: None))
        status()  # once the share is read (a short read may see no poll): the exchanges come next
        return trace, block, locations, first, replay, _owners(trace, comm.size)

    trace, block, locations, first, replay, owner = _step(comm, opened)

    def held() -> int:
        return int(replay.record_bytes()) + int(replay.beside_bytes())

    peak = held()
    own_omp = int(replay.omp_sync_events())  # held from the extraction on: counted as communication events
    seconds["extract"] = time.perf_counter() - start
    homes = np.unique(owner[owner != _NO_RANK]).astype(np.uint32)  # ranks without locations hold nothing
    correction = None
    if time_correct:
        correction, held_correcting = _time_correct(comm, replay, owner, homes, held, say)
        peak = max(peak, held_correcting)

    say("exchanging the messages")
    peak = max(peak, _message_rounds(comm, replay, owner, round_bytes, held))
    _step(comm, replay.messages_beside)  # before matching releases the receives and the sends received
    peak = max(peak, held())
    _step(comm, replay.match_messages)
    _step(comm, replay.late_receiver)  # the Waitall/some sends; before the collectives' exchanges
    say("collectives")
    counts = _step(comm, lambda: replay.pack_collectives(comm.size, [int(h) for h in homes]))
    received = exchange(comm, replay.outgoing_collectives(), counts, replay.incoming_collectives,
                        replay.collective_bytes)
    peak = max(peak, held())
    _step(comm, replay.collectives_beside_home)
    # The extras before the reductions, so that the two never coexist (the memory bound).
    exchange(comm, replay.home_extras(), received, replay.extras, replay.extra_bytes, expected=counts)
    peak = max(peak, held())
    _step(comm, replay.collectives_beside)
    _step(comm, replay.reduce_collectives)
    exchange(comm, replay.home_reductions(), received, replay.reductions, replay.reduction_bytes, expected=counts)
    peak = max(peak, held())
    _step(comm, replay.collective_severities)
    # trace.stat lists a collective instance whole, as its home reduced it: to the owner of the
    # location naming it, which names its call path (a few listings per call path and location)
    counts = _step(comm, lambda: replay.pack_listings(owner, comm.size))
    exchange(comm, replay.outgoing_listings(), counts, replay.incoming_listings, replay.listing_bytes)
    _step(comm, replay.take_listings)
    _step(comm, replay.late_receiver_after)
    peak = max(peak, _nonblocking(comm, replay, homes, held))
    say("critical path")
    hand_offs = _critical_path(comm, replay, trace.location_indices(), owner)
    seconds["match"] = time.perf_counter() - start - seconds["extract"]
    present = np.array(_step(comm, replay.present_complete), dtype=np.uint8)
    comm.Allreduce(MPI.IN_PLACE, present, op=MPI.MAX)
    local = _step(comm, lambda: _profile(replay.finish_complete([bool(x) for x in present])))
    _impact(comm, local._core, replay)
    _step(comm, lambda: replay.add_idle_threads(local._core))  # last: the steps before take the time before
    statistics = _instance_statistics(comm, replay, local, trace.location_indices())
    say(f"writing {os.path.basename(str(output))}")
    unified, _ = collate_on_known_machine(comm, local, output, lambda: KnownMachine(trace.system_tree()),
                                          first, len(locations), block[0], compress, block_bytes)
    own = {k: int(replay.stats()[k]) for k in ("events", "messages", "collectives")}
    totals = np.array(list(own.values()), dtype=np.int64)
    comm.Allreduce(MPI.IN_PLACE, totals, op=MPI.SUM)
    counts = comm.bcast(tuple(unified.state.global_counts) if comm.rank == 0 else None, root=0)  # type: ignore[attr-defined]
    seconds["collate"] = time.perf_counter() - start - seconds["extract"] - seconds["match"]
    return {"groups": block, "locations": len(locations), "events": int(totals[0]), "messages": int(totals[1]),
            "collectives": int(totals[2]), "shape": (int(counts[2]), len(trace.announced_events())), "metrics": int(counts[0]),
            "hand_offs": hand_offs, "correction": correction, "statistics": statistics, "own": {**own, "omp_syncs": own_omp},
            "record_bytes": int(peak), "seconds": seconds, "threads": int(replay.parts()),
            "total_seconds": time.perf_counter() - start}


def _message_rounds(comm, replay, owner: np.ndarray, round_bytes: int, held: Callable[[], int]) -> int:
    """The message exchange in rounds (docs/analysis.md): every rank checks its sends first
    (an error is raised on every rank before any exchange), then each round packs at most
    ``round_bytes`` of each rank's next sends (and at most a ``Replay.min_rounds``-th of them),
    moves them to the receivers' owners, which answer each send's receive posting time, and the
    senders' owners compute Late Receiver of the round's sends and release their records. All
    ranks run as many rounds (the largest number any rank needs), with or without sends.
    Returns the most bytes held meanwhile."""
    MPI = mpi(comm)
    totals = np.asarray(_step(comm, lambda: replay.begin_sends(owner, comm.size)), dtype=np.int64)
    incoming = np.empty(comm.size, dtype=np.int64)
    comm.Alltoall(totals, incoming)
    # Every step runs through _step: an error on one rank (a full memory, a broken invariant)
    # is raised on every rank instead of leaving the others in the next collective.
    need = _step(comm, lambda: (replay.expect_sends(int(incoming.sum())), replay.send_rounds(round_bytes))[1])
    rounds = comm.allreduce(int(need), op=MPI.MAX)
    peak = held()
    for _ in range(rounds):
        counts = _step(comm, replay.pack_round)
        sent = exchange(comm, replay.outgoing_sends(), counts, replay.incoming_round, replay.send_bytes)
        _step(comm, replay.answer_round)
        peak = max(peak, held())
        exchange(comm, replay.home_posted(), sent, replay.posted, 8, expected=counts)  # each send's posting, back
        peak = max(peak, held())
        _step(comm, replay.late_receiver_round)
    return max(peak, held())


def _impact(comm, core, replay) -> None:
    """scout's performance-impact metrics (analysis/impact.hpp): two allgathers of per-call-path
    sums (exact, so that any split of the locations gives the same bytes), then each rank adds
    the metrics to its own locations' profile (``local_time``: scout's time of its OpenMP
    threads against ``time``, Replay.local_time; a process's threads are all on one rank)."""
    # Each rank's part through _step (its spans and time, sums over its call paths, the merges
    # of every rank's): an error on one rank reaches all before the next exchange.
    program_spans, local_time = _step(comm, lambda: (list(replay.program_spans()), list(replay.local_time())))
    sums = _allgathered(comm, _step(comm, lambda: _analysis.impact_path_sums(core)))
    paths = _step(comm, lambda: _analysis.merge_impact(sums))
    costs = _allgathered(comm, _step(comm, lambda: _analysis.impact_costs(core, paths, program_spans, local_time)))
    merged = _step(comm, lambda: _analysis.merge_impact(costs))
    _step(comm, lambda: _analysis.add_impact(core, paths, merged, local_time))


def _instance_statistics(comm, replay, local, analyzed: Sequence[int]) -> dict | None:
    """Rank 0: every rank's instance statistics (trace.stat) merged exactly in ticks: counts,
    sums, extremes, sums of squares, and per call path (named by its path, as call-path rows
    differ between ranks) its most severe instance, the first location's among equals."""
    def named() -> dict:
        raw = replay.statistics()
        paths = _call_path_names(local._core)
        for s in raw["patterns"].values():
            s["top"] = [(ticks, enter, leave, paths[cnode], loc) for ticks, enter, leave, cnode, loc in s["top"]]
        return raw

    everyone = _objects(comm, _step(comm, named), root=0)
    # rank 0 merges; its error must reach the others before they go on to the report's collectives
    return _step(comm, lambda: _merge_statistics(everyone, analyzed) if everyone is not None else None)


def _merge_statistics(everyone: list, analyzed: Sequence[int]) -> dict:
    """Every rank's instance statistics merged (``_instance_statistics``)."""
    place = {int(loc): k for k, loc in enumerate(analyzed)}
    merged: dict[str, dict] = {}
    for name in _analysis.pattern_names():  # the patterns' order, as one process lists them
        parts = [r["patterns"][name] for r in everyone if name in r["patterns"]]
        if not parts:
            continue
        best: dict[str, tuple] = {}
        for top in (p["top"] for p in parts):
            for entry in top:
                old = best.get(entry[3])
                # among equals the first location's, then the earlier enter (a collective
                # instance listed by its home: one location's instances may come from several)
                if old is None or (entry[0], -place[entry[4]], -entry[1]) > (old[0], -place[old[4]], -old[1]):
                    best[entry[3]] = entry
        merged[name] = {"count": sum(p["count"] for p in parts), "sum": sum(p["sum"] for p in parts),
                        "min": min(p["min"] for p in parts), "max": max(p["max"] for p in parts),
                        "sum_of_squares": sum(p["sum_of_squares"] for p in parts), "top": list(best.values())}
    return {"patterns": merged, **{k: sum(r[k] for r in everyone)
                                   for k in ("p2p_violations", "collective_violations", "omp_violations",
                                             "corrected_jumps")}}


def _time_correct(comm, replay, owner: np.ndarray, homes: np.ndarray, held: Callable[[], int],
                  say: Callable[[str], None] = lambda text: None) -> tuple[dict, int]:
    """``--time-correct`` over the ranks (analysis/replay_beside.hpp): rounds in which every rank
    steps its locations' communication events as far as the corrected producer times it knows
    allow, then sends the new ones (send times to the receivers' owners, collective enters to the
    instances' homes, the homes' references back) until no rank moves anything; after a stall
    with events left, once, the send counts per message queue (a receive without a send waits
    for nothing), then the rounds go on; a cycle raises FormatError on every rank. Returns
    rounds, events moved forward and the largest move (ticks), and the most bytes held meanwhile
    (also inside the moves of ``finish_correction``)."""
    MPI = mpi(comm)
    homes_list = [int(h) for h in homes]
    counts = _step(comm, lambda: replay.begin_correction(owner, comm.size, comm.rank, homes_list))
    peak = held()
    exchange(comm, replay.correction_outgoing_members(), counts, replay.correction_incoming_members,
             replay.collective_bytes)
    peak = max(peak, held())
    _step(comm, replay.take_members)
    rounds, counted = 0, False
    error: BaseException | None = None  # this rank's, raised on every rank at the next collective step
    kinds = [(getattr(replay, f"correction_outgoing_{kind}"), getattr(replay, f"correction_incoming_{kind}"), record)
             for kind, record in (("sends", replay.send_value_bytes), ("enters", replay.collective_bytes),
                                  ("references", replay.instance_value_bytes))]  # enters: members' corrected enters
    types = [MPI.BYTE.Create_contiguous(record).Commit() for _, _, record in kinds] if comm.size > 1 else []
    rows, received = replay.correction_rows(), replay.correction_received_rows()  # views, sized once
    shown = time.perf_counter()
    say("correcting the clocks: round 0")
    try:
        while True:
            if time.perf_counter() - shown > 0.25:  # a round per hand-off between ranks: many on long traces
                say(f"correcting the clocks: round {rounds:,}")
                shown = time.perf_counter()
            try:  # an error here must reach the ranks waiting in the rows' Alltoall
                _unless(error, replay.correct_round)
            except Exception as e:  # noqa: BLE001 - raised on every rank by _correction_round
                error = e
                rows[:, 3] = -1  # plan_round's mark of a failed rank
            moved, pending = _correction_round(comm, replay, rows, received, kinds, types, error)
            peak = max(peak, held())  # the round's values queued and received: its most
            try:
                replay.take_values()
            except Exception as e:  # noqa: BLE001 - raised on every rank at the next step
                error = e
            rounds += 1
            if moved:
                continue
            if not pending or counted:
                break  # done, or a cycle (finish_correction raises)
            # Stalled with events left: a receive without a send (an inconsistent trace; the
            # matching reports it) waits for nothing once the receivers' owners know each queue's
            # sends, as in one process. A consistent trace never stalls, so it never counts its sends.
            counts = _step(comm, functools.partial(_unless, error, replay.pack_send_counts))
            exchange(comm, replay.correction_outgoing_counts(), counts, replay.correction_incoming_counts,
                     replay.send_count_bytes)
            peak = max(peak, held())
            _step(comm, replay.take_send_counts)
            counted = True
    finally:
        for t in types:
            t.Free()
    del rows, received  # views into the correction, which finish_correction frees
    jumps, largest = _step(comm, lambda: _unless(error, replay.finish_correction))
    return ({"rounds": rounds, "jumps": comm.allreduce(int(jumps), op=MPI.SUM),
             "largest": comm.allreduce(int(largest), op=MPI.MAX)}, max(peak, int(replay.correction_peak_bytes())))


def _unless(error: BaseException | None, work: Callable[[], Any]) -> Any:
    """``work()``, unless this rank failed earlier (``error``): then that error (for _step)."""
    if error is not None:
        raise error
    return work()


def _correction_round(comm, replay, rows: np.ndarray, received: np.ndarray, kinds: list, types: list,
                      error: BaseException | None) -> tuple[bool, bool]:
    """One round's exchange of ``--time-correct`` after ``correct_round``: one ``Alltoall`` of a
    row per rank (``Replay.correction_rows``: the values of each kind for it, whether this rank
    moved an event or queued a value, whether it has events left and whether its values fit in
    its rows, its values of each kind for all ranks, then its values for that rank when they
    fit). When every rank's fit, that is the round (``take_values`` reads them from the rows);
    else, planned by the core from the rows received (``Replay.plan_round``), an ``Alltoallv``
    per kind of value that some rank sends this round. Returns whether any rank moved or queued
    anything and whether any has events left. A round is one hand-off between ranks (a long
    ring takes one per message between ranks), so its cost is these collectives and little
    Python (docs/benchmarks.md: 10 µs a round on 2 ranks with the values in the rows, 21 with
    an ``Alltoallv``, 374 with three exchanges of their own and an ``allreduce`` until
    2026-11-27). ``plan_round`` raises on every rank alike (it decides from every rank's rows);
    sizing the buffers may fail on one, so its error goes to all before any ``Alltoallv``. A
    rank that failed before the round (``error``) marks its rows; ``plan_round`` then says so on
    every rank, which raise that error (no extra collective in rounds that go well)."""
    if comm.size > 1:
        comm.Alltoall(rows, received)
    else:
        received[:] = rows
    state = replay.plan_round()
    if state & _ROUND_FAILED:
        raise_everywhere(comm, error)
        raise CollectiveError("a rank marked its round of the time correction failed without an error")
    if state >> 2:
        layout = replay.correction_layout()
        _step(comm, replay.size_round)  # the receive buffers: an error must reach every rank
        for k, (outgoing, incoming, _) in enumerate(kinds):
            if not state & (4 << k):
                continue
            if comm.size == 1:
                incoming()[:] = outgoing()
            else:
                comm.Alltoallv([outgoing(), (layout[k, 0], layout[k, 1]), types[k]],
                               [incoming(), (layout[k, 2], layout[k, 3]), types[k]])
    return bool(state & 1), bool(state & 2)


def _nonblocking(comm, replay, homes: np.ndarray, held: Callable[[], int]) -> int:
    """MPI-3 non-blocking collectives: every rank checks all ranks' (communicator, location,
    count) triples, then the records go to the homes of their instances, which return per record
    its pattern and the time it waits for. Returns the most bytes held meanwhile."""
    counts_everywhere = np.concatenate([np.asarray(c, dtype=np.uint32)
                                        for c in _allgathered(comm, _step(comm, replay.nonblocking_counts))])
    _step(comm, lambda: replay.check_nonblocking_counts(counts_everywhere))
    counts = _step(comm, lambda: replay.pack_nonblocking(comm.size, [int(h) for h in homes]))
    received = exchange(comm, replay.outgoing_nonblocking(), counts, replay.incoming_nonblocking,
                        replay.nonblocking_bytes)
    peak = held()
    _step(comm, replay.reduce_nonblocking)
    exchange(comm, replay.home_verdicts(), received, replay.verdicts, replay.verdict_bytes, expected=counts)
    peak = max(peak, held())
    _step(comm, replay.nonblocking_after)
    return peak


def _critical_path(comm, replay, analyzed: Sequence[int], owner: np.ndarray) -> int:
    """The critical path's backward walk (docs/analysis.md): it starts at the latest enter of
    ``MPI_Finalize`` when every process has one (else at the latest last Leave; the first such
    among ``analyzed``) and ends at ``MPI_Init`` likewise; the rank owning the current location
    walks while the path stays on its locations, then hands (location, time) to the owner of the
    next one (``_walk``). Returns the number of steps (walks, one per rank the path reaches in
    turn)."""
    MPI = mpi(comm)
    init, finalize = comm.allreduce(np.array(replay.path_window_members(), dtype=np.int64), op=MPI.SUM)
    replay.set_path_window(int(init), int(finalize))
    any_records = bool(comm.allreduce(int(replay.any_records()), op=MPI.MAX))
    candidates = [c for c in comm.allgather(_step(comm, lambda: replay.path_start(any_records))) if c[1] != _NO_RANK]
    if not candidates:
        return 0
    last, place = max(candidates, key=lambda c: (c[0], -c[1]))
    at, t = int(analyzed[place]), int(last)
    if owner[at] == _NO_RANK:
        return 0
    return _walk(comm, replay, at, t, owner)


_HAND_OFF, _PATH_END = 7101, 7102  # tags of the walk's point-to-point messages


def _walk(comm, replay, at: int, t: int, owner: np.ndarray) -> int:
    """The walk from ``(at, t)``, in point-to-point messages: the rank owning the path's
    location walks while the path stays on its locations and sends (location, time, steps) to
    the owner of the next one; the rank where the path ends tells every other rank how many
    steps there were (or that the walk failed there). A hand-off involves two ranks, not every
    rank as a collective step would: what counts when the path changes process at every
    message and ranks share cores (docs/analysis.md, "Critical path"). Returns the steps."""
    MPI = mpi(comm)
    steps, error, mine = 0, None, comm.rank == int(owner[at])
    while True:
        if not mine:
            status = MPI.Status()
            message = comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
            if status.Get_tag() == _PATH_END:
                steps = int(message)
                break
            at, t, steps = message
        try:
            at, t = replay.walk(at, t)
        except Exception as e:  # noqa: BLE001 - every rank raises it below
            error, at = e, _NO_RANK
        steps += 1
        if at == _NO_RANK or owner[at] == _NO_RANK:
            for rank in range(comm.size):
                if rank != comm.rank:
                    comm.send(steps, dest=rank, tag=_PATH_END)
            break
        mine = int(owner[at]) == comm.rank
        if not mine:
            comm.send((at, t, steps), dest=int(owner[at]), tag=_HAND_OFF)
    raise_everywhere(comm, error)
    return steps


def _profile(core) -> Any:
    """A :class:`~cubescale.profile.LocalProfile` around the core's profile of a trace."""
    from ..profile import LocalProfile

    local = LocalProfile.__new__(LocalProfile)
    local._core = core
    local.host = None
    local.process = None
    return local
