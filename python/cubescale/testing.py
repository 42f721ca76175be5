"""Scaffolding for tests and benchmarks, kept out of the analysis API: traces that cubescale
writes with libotf2's writer (each with what it is for in its name), and the reading speed of
libotf2 alone, the limit any OTF2 reader is measured against.

Example
-------
>>> import os, tempfile
>>> from cubescale import trace, testing
>>> d = tempfile.mkdtemp()
>>> events = testing.write_ring_trace(d, "ring", processes=2, iterations=3)
>>> testing.read_with_empty_callbacks(os.path.join(d, "ring.otf2")) == events
True
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import NamedTuple

from ._core import analysis as _analysis
from ._core import timeline as _timeline
from ._core import trace as _trace

__all__ = ["REPLAY_PHASES", "ReplayMemory", "irecv_one_way_run", "messages_only_run", "one_way_run", "random_mpi_run",
           "read_with_empty_callbacks", "replay_memory", "write_hardware_trace", "write_hybrid_trace",
           "write_intercomm_trace", "write_mpi_trace", "write_omp_trace", "write_ring_trace"]


def write_ring_trace(directory: str | os.PathLike, name: str = "traces", processes: int = 4, iterations: int = 1000,
                     counters: bool = True, defect: str = "") -> int:
    """Writes ``<directory>/<name>.otf2``: a ring of MPI processes iterating solve >
    {compute, MPI_Send, MPI_Recv, MPI_Allreduce}, with two accumulated counters unless
    ``counters=False`` (18 events per iteration, 14 without). ``defect`` plants what real
    traces lack: ``"unclosed"`` (main is never left) or ``"mismatched_leave"``. Returns the
    number of events written.

    Example
    -------
    >>> import tempfile
    >>> write_ring_trace(tempfile.mkdtemp(), processes=2, iterations=10, counters=False)
    284
    """
    return _trace.write_synthetic_trace(os.fspath(directory), name, processes=processes, iterations=iterations,
                                        counters=counters, defect=defect)


def write_hardware_trace(directory: str | os.PathLike, name: str = "traces", *, nodes: int = 2,
                         packages_per_node: int = 2, cores_per_package: int = 4, gpus_per_node: int = 1,
                         seconds: int = 60, samples_per_second: int = 1) -> str:
    """Writes an OTF2 trace of a machine whose packages, cores and GPUs have energy (J) and
    FLOP counters growing at known rates (metric timelines and ``aggregate`` expressions are
    checked against them); returns the anchor file's path.

    Example
    -------
    >>> import os, tempfile
    >>> os.path.basename(write_hardware_trace(tempfile.mkdtemp(), nodes=1, seconds=2))
    'traces.otf2'
    """
    return _timeline.write_synthetic_trace(os.fspath(directory), name, nodes=nodes,
                                           packages_per_node=packages_per_node, cores_per_package=cores_per_package,
                                           gpus_per_node=gpus_per_node, seconds=seconds,
                                           samples_per_second=samples_per_second)


def write_intercomm_trace(directory: str | os.PathLike, name: str, ranks: Sequence[Sequence[tuple]],
                          group_a: int, end: int) -> int:
    """Writes ``<directory>/<name>.otf2``: MPI processes with an inter-communicator (OTF2 3's
    ``InterComm`` definition, as Score-P 8 and later write it for ``MPI_Intercomm_create``)
    between the first ``group_a`` ranks (group A) and the others (group B). Per rank a list of
    ``(call, enter_ns, leave_ns)`` or ``(call, enter_ns, leave_ns, peer)``: ``MPI_Send`` and
    ``MPI_Recv`` on the inter-communicator (``peer``: a rank of the *other* group, tag 5),
    ``MPI_Barrier`` on it, ``MPI_Allreduce`` on ``MPI_COMM_WORLD``; inside main from 0 to ``end``
    ns. Returns the events written.

    Example
    -------
    >>> import tempfile
    >>> write_intercomm_trace(tempfile.mkdtemp(), "inter", [[("MPI_Send", 50, 60, 0)],
    ...                                                     [("MPI_Recv", 10, 70, 0)]], group_a=1, end=100)
    10
    """
    return _analysis.write_intercomm_trace(os.fspath(directory), name, [[tuple(c) for c in r] for r in ranks],
                                           group_a, end)


def write_mpi_trace(directory: str | os.PathLike, name: str,
                    ranks: Sequence[Sequence[tuple]], end: int) -> int:
    """Writes ``<directory>/<name>.otf2`` with MPI calls at stated times, for exact wait-state
    expectations: per rank a list of ``(call, enter_ns, leave_ns, peers, tag)``, ``(call,
    enter_ns, leave_ns, peers, tag, bytes)`` or ``(..., bytes, bytes_received)`` (calls such as
    ``MPI_Send``, ``MPI_Recv``, ``MPI_Sendrecv`` with ``peers = [receiver, sender]``,
    ``MPI_Waitall`` (completing every open ``MPI_Isend`` and a receive from each peer;
    ``MPI_Waitany``, ``MPI_Waitsome``, ``MPI_Testall``, ``MPI_Testsome`` alike: for a Waitany
    as Score-P records it, one peer and no other open request), ``MPI_Barrier``, ``MPI_Bcast`` with ``peers =
    [root]``, ``MPI_Allreduce``, ``MPI_Alltoallv``; ``bytes``, the payload, is 8 unless given; a
    collective's ``bytes`` are those it sends and ``bytes_received``, as many unless given, those
    it receives; a collective's ``tag`` 1 puts it on ``MPI_COMM_SELF``, 2 on
    ``MPI_COMM_REVERSED``, every process ranked in reverse as ``MPI_Comm_split`` with key
    ``-rank`` makes it) inside main from 0 to ``end`` ns; ``("outside main", leave_ns,
    enter_ns, [], 0)`` leaves main and enters it again (a gap between top-level regions);
    ``("main", enter_ns, leave_ns, [], 0)`` as a rank's first call records the program as
    Score-P 7 and later does: ``PROGRAM_BEGIN`` at 0, main from ``enter_ns`` to ``leave_ns``
    (the rank's other calls inside), ``PROGRAM_END`` at ``end``, with the program's own region
    (named after the trace) as the root call path above main; without it the trace has no
    ``PROGRAM_BEGIN``; ``("parameter NAME=VALUE", time_ns, time_ns, [], 0)`` writes a
    ``PARAMETER_INT64`` (VALUE a decimal integer) or else a ``PARAMETER_STRING`` at ``time_ns``,
    inside main. Returns the events written.

    Example
    -------
    >>> import tempfile
    >>> write_mpi_trace(tempfile.mkdtemp(), "pair", [[("MPI_Send", 50, 60, [1], 0)],
    ...                                             [("MPI_Recv", 10, 70, [0], 0)]], end=100)
    10
    """
    return _analysis.write_mpi_trace(os.fspath(directory), name, [[tuple(c) for c in r] for r in ranks], end)


def write_omp_trace(directory: str | os.PathLike, name: str, regions: Sequence[dict], threads: int, end: int,
                    main: tuple[int, int] | None = None) -> int:
    """Writes ``<directory>/<name>.otf2``: one process of ``threads`` OpenMP threads (events as
    Score-P writes them: fork/join, team begin/end, ``!$omp parallel`` regions) running parallel
    regions at stated times, for exact thread wait-state expectations. Per region a dict with
    ``fork`` and ``join`` (ns) and ``threads``: per thread of the team (the master first) a list
    of ``(call, enter_ns, leave_ns)`` for ``"ibarrier"`` (implicit barrier) and ``"barrier"``, or
    ``(call, enter_ns, leave_ns, acquire_ns, lock)`` for ``"critical"`` and ``"lock"``
    (``omp_set_lock`` ... ``omp_unset_lock``: the lock is held from ``acquire_ns`` to
    ``leave_ns``), ``"mutex"`` (the same with ``pthread_mutex_lock`` ... ``pthread_mutex_unlock``,
    a POSIX threads lock) and ``"condwait"`` (the mutex taken back in ``pthread_cond_wait``).
    Explicit tasks as Score-P's OPARI2 adapter writes them (a task is ``creator, generation``;
    generation 0 is the thread's implicit task): ``("task_create", enter_ns, leave_ns, creator,
    generation)``, ``("task_begin", ns, creator, generation, untied)`` (a switch to the new task
    and the Enter of its ``!$omp task`` region), ``("task_end", ns, creator, generation,
    untied)``, ``("task_switch", ns, creator, generation)``, and ``("enter", ns, region)`` /
    ``("leave", ns, region)`` of ``"taskwait"``, ``"ibarrier"`` or ``"work"`` for what tasks run in.
    Optional ``begin`` and ``end``: per thread of the team its team begin and end (ns; default
    ``fork`` and ``join``), to record a thread before the fork or after the join.
    Main runs on the master from 0 to ``end``; with ``main = (enter_ns, leave_ns)`` the master
    records its program as Score-P 7 and later do instead: ``PROGRAM_BEGIN`` at 0, main from
    ``enter_ns`` to ``leave_ns`` (around the parallel regions), ``PROGRAM_END`` at ``end``, with
    the program's region (named after the trace) as the root call path. Returns the events
    written.

    Example
    -------
    >>> import tempfile
    >>> write_omp_trace(tempfile.mkdtemp(), "team", [{"fork": 10, "join": 90, "threads": [
    ...     [("ibarrier", 20, 80)], [("ibarrier", 70, 80)]]}], threads=2, end=100)
    16
    """
    return _analysis.write_omp_trace(os.fspath(directory), name, _omp_regions(regions), threads, end, main)


def _omp_regions(regions: Sequence[dict]) -> list[dict]:
    """write_omp_trace's regions as the binding takes them (tuples and lists)."""
    return [{"fork": r["fork"], "join": r["join"], "threads": [[tuple(c) for c in calls] for calls in r["threads"]],
             **{k: list(r[k]) for k in ("begin", "end") if k in r}} for r in regions]


def write_hybrid_trace(directory: str | os.PathLike, name: str, ranks: Sequence[dict], threads: int,
                       end: int) -> int:
    """Writes ``<directory>/<name>.otf2``: MPI processes of ``threads`` OpenMP threads each (a
    hybrid run as Score-P records it), for exact wait-state expectations across the paradigms.
    Per rank a dict with ``"mpi"``: its master thread's MPI calls as :func:`write_mpi_trace`
    takes them (``"main"`` first included), and ``"regions"``: its parallel regions as
    :func:`write_omp_trace` takes them; the master runs main from 0 to ``end`` ns and in it the
    calls and the regions interleaved in time order (a call lies outside every parallel region
    of its rank, or inside its master's team between the master's calls there, as
    ``MPI_THREAD_FUNNELED`` code makes them: call path ``main/!$omp parallel/MPI_...``; else
    ``ValueError``), the workers their teams only. Location ``p * threads +
    t`` is thread ``t`` of rank ``p`` (``"Master thread"``, ``"OMP thread t"``);
    ``MPI_COMM_WORLD`` holds the master threads. Returns the events written.

    Example
    -------
    Rank 0's worker reaches the implicit barrier late, so its master sends late to rank 1:

    >>> import tempfile
    >>> write_hybrid_trace(tempfile.mkdtemp(), "hybrid", [
    ...     {"mpi": [("MPI_Send", 120, 130, [1], 0)],
    ...      "regions": [{"fork": 10, "join": 110, "threads": [[("ibarrier", 20, 100)], [("ibarrier", 90, 100)]]}]},
    ...     {"mpi": [("MPI_Recv", 20, 140, [0], 0)], "regions": []}], threads=2, end=200)
    24
    """
    for r in ranks:
        if set(r) - {"mpi", "regions"}:
            raise ValueError(f"a hybrid rank is a dict of 'mpi' (calls) and 'regions' (parallel regions), not {sorted(r)}")
    return _analysis.write_hybrid_trace(os.fspath(directory), name,
                                        [{"mpi": [tuple(c) for c in r.get("mpi", [])],
                                          "regions": _omp_regions(r.get("regions", []))} for r in ranks],
                                        threads, end)


def read_with_empty_callbacks(trace, locations: Sequence[int] | None = None) -> int:
    """Reads a trace's events through libotf2 with callbacks that do nothing and returns how
    many there were: the speed limit of any reader over libotf2 (benchmarks divide by it).
    ``trace`` is an anchor path or a :class:`cubescale.trace.Trace`.

    Example
    -------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> read_with_empty_callbacks(os.path.join(d, "r.otf2")) if write_ring_trace(d, "r", 2, 5) else None
    184
    """
    if isinstance(trace, (str, os.PathLike)):
        from .trace import open as open_trace

        trace = open_trace(trace)
    return _trace.read_with_empty_callbacks(trace._core, None if locations is None else list(locations))


_RANDOM_COLLECTIVES = ["MPI_Barrier", "MPI_Allreduce", "MPI_Allgather", "MPI_Bcast", "MPI_Reduce", "MPI_Gather",
                       "MPI_Scatter", "MPI_Scan"]
_ROOTED = {"MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Scatter"}


def random_mpi_run(processes: int = 4, iterations: int = 300, seed: int = 7) -> tuple[list[list[tuple]], int]:
    """A seeded random MPI run as ``(calls per rank, end)`` for :func:`write_mpi_trace`, with
    every wait-state pattern at many instances (compared with Scalasca's scout in
    tests/test_analysis_scout.py and benchmarks/waitstate_scout.py): between an ``MPI_Init``
    and an ``MPI_Finalize``, per iteration a ring of blocking sends and receives (every fifth
    iteration synchronous sends) in two phases, an ``MPI_Isend``/``MPI_Irecv`` pair between
    two random ranks completed by ``MPI_Waitall`` (pairs overtake each other: wrong order),
    and a random collective (barrier, allreduce, allgather, bcast, reduce, gather, scatter,
    scan) with a random root; random work between calls. Times (ns) come from a small
    simulation that keeps the clock condition (a receive ends after its send began, a
    synchronizing collective member leaves after the enters it waits for).

    Example
    -------
    >>> import tempfile
    >>> calls, end = random_mpi_run(processes=3, iterations=2)
    >>> calls[0][0][0], calls[0][-1][0], write_mpi_trace(tempfile.mkdtemp(), "random", calls, end) > 0
    ('MPI_Init', 'MPI_Finalize', True)
    >>> write_mpi_trace(tempfile.mkdtemp(), "wide", *random_mpi_run(processes=64, iterations=1)) > 0
    True
    """
    import random

    rng = random.Random(seed)
    clock = [1000] * processes
    calls: list[list[tuple]] = [[("MPI_Init", 10, 500, [], 0)] for _ in range(processes)]
    latency = 20

    def work(r: int) -> int:
        clock[r] += rng.randint(10, 400)
        return clock[r]

    for it in range(iterations):
        # the ring in two phases (as MPI programs avoid deadlock): even ranks send to the
        # right while odd ranks receive from the left, then the other way round
        sync = it % 5 == 0
        for senders in (0, 1):
            enters = [work(r) for r in range(processes)]
            for r in range(processes):
                right, left = (r + 1) % processes, (r - 1) % processes
                if r % 2 == senders:
                    if right % 2 == senders:  # an odd number of processes: no partner this phase
                        continue
                    leave = max(enters[r], enters[right]) + latency if sync else enters[r] + 5
                    calls[r].append(("MPI_Ssend" if sync else "MPI_Send", enters[r], leave, [right], it % 7))
                elif left % 2 == senders:
                    leave = max(enters[r], enters[left]) + latency
                    calls[r].append(("MPI_Recv", enters[r], leave, [left], it % 7))
                else:
                    continue
                clock[r] = leave
        # a random pair: a sends to b with Isend, b receives with Irecv; both complete in Waitall
        a, b = rng.sample(range(processes), 2)
        ta, tb = work(a), work(b)
        calls[a] += [("MPI_Isend", ta, ta + 3, [b], 100 + it % 3), ("MPI_Waitall", ta + 10, ta + 15, [], 0)]
        wait_enter = tb + 10
        calls[b] += [("MPI_Irecv", tb, tb + 3, [a], 100 + it % 3),
                     ("MPI_Waitall", wait_enter, max(wait_enter, ta) + latency, [a], 100 + it % 3)]
        clock[a], clock[b] = ta + 15, max(wait_enter, ta) + latency
        # a random collective
        op = rng.choice(_RANDOM_COLLECTIVES)
        root = rng.randrange(processes)
        enters = [work(r) for r in range(processes)]
        last = max(enters)
        for r in range(processes):
            if op in ("MPI_Barrier", "MPI_Allreduce", "MPI_Allgather"):
                leave = last + latency
            elif op == "MPI_Scan":
                leave = max(enters[: r + 1]) + latency
            elif op in ("MPI_Bcast", "MPI_Scatter"):
                leave = enters[r] + 5 if r == root else max(enters[r], enters[root]) + latency
            else:  # reduce, gather: the root waits for everyone
                leave = last + latency if r == root else enters[r] + 5
            calls[r].append((op, enters[r], leave, [root] if op in _ROOTED else [], 0))
            clock[r] = leave
    end = max(clock) + 1000
    for r in range(processes):  # staggered enters, all before the leaves (any number of processes)
        calls[r].append(("MPI_Finalize", end - 500 + (7 * r) % 350, end - 100, [], 0))
    return calls, end


def one_way_run(messages: int, pairs: int = 1, tags: int = 0) -> tuple[list[list[tuple]], int]:
    """``pairs`` processes each sending ``messages`` blocking messages to a partner of their own
    that only receives them, every message with its own tag (in a scrambled order; with
    ``tags``, message i has the i-th of a scrambled cycle of that many), as ``(calls per rank,
    end)`` for :func:`write_mpi_trace`: process ``p < pairs`` sends to ``p + pairs``. The
    replay's lopsided case: a message queue per message, and shares of 2 or more ranks whose
    locations only receive (each receive a Late Sender of 50 ns).

    Example
    -------
    >>> calls, end = one_way_run(3)
    >>> calls[0][1], [c[4] for c in calls[0]], calls[1][0], end
    (('MPI_Send', 1100, 1200, [1], 2), [0, 2, 1], ('MPI_Recv', 50, 250, [0], 0), 4000)
    """
    # 7919 is prime: i -> 7919 i mod n visits every tag once unless n is a multiple of it.
    tags = tags or messages
    step = 7919 if tags % 7919 else 1
    ranks: list[list[tuple]] = [[] for _ in range(2 * pairs)]
    for p in range(pairs):
        for i in range(messages):
            t, tag = 1000 * i, (step * i) % tags
            ranks[p].append(("MPI_Send", t + 100, t + 200, [p + pairs], tag))
            ranks[p + pairs].append(("MPI_Recv", t + 50, t + 250, [p], tag))
    return ranks, 1000 * messages + 1000


def irecv_one_way_run(messages: int, own_tags: bool = True) -> tuple[list[list[tuple]], int]:
    """One process sending ``messages`` blocking messages to one that receives them by
    ``MPI_Irecv``/``MPI_Wait`` (with ``own_tags`` each its own tag, in a scrambled order: out of
    queue order), as ``(calls per rank, end)`` for :func:`write_mpi_trace`: with 2 ranks, a
    rank whose location only receives by ``MPI_Irecv`` (the postings beside its records).

    Example
    -------
    >>> calls, end = irecv_one_way_run(3)
    >>> calls[0][1], calls[1][:2], end
    (('MPI_Send', 1100, 1200, [1], 2), [('MPI_Irecv', 50, 60, [0], 0), ('MPI_Wait', 70, 250, [0], 0)], 4000)
    """
    sends: list[tuple] = []
    receives: list[tuple] = []
    for i in range(messages):
        t, tag = 1000 * i, (7919 * i) % messages if own_tags else 0
        sends.append(("MPI_Send", t + 100, t + 200, [1], tag))
        receives += [("MPI_Irecv", t + 50, t + 60, [0], tag), ("MPI_Wait", t + 70, t + 250, [0], tag)]
    return [sends, receives], 1000 * messages + 1000


class ReplayMemory(NamedTuple):
    """:func:`replay_memory`'s result: per phase of the complete replay (``REPLAY_PHASES``) each
    rank's largest bytes per own communication event, and the number of message rounds.

    Example
    -------
    >>> ReplayMemory({"extraction": [56.0, 58.5], "rounds": [57.5, 58.0]}, 64).peaks()
    [57.5, 58.5]
    """

    phases: dict[str, list[float]]
    rounds: int

    def peaks(self) -> list[float]:
        """Each rank's largest over every phase.

        Example
        -------
        >>> ReplayMemory({"extraction": [60.0], "later": [12.0]}, 1).peaks()
        [60.0]
        """
        return [max(values) for values in zip(*self.phases.values())]


# The phases of replay_memory: right after the extraction, the message rounds begun, during
# them, after messages_beside, every later step.
REPLAY_PHASES = ("extraction", "rounds begun", "rounds", "after messages_beside", "later")
# With time_correct, between the extraction and the message rounds: the --time-correct steps
# (its exchanges and rounds) and the moves inside finish_correction.
CORRECTION_PHASES = ("correction", "correction moves")


def _exchange_by_hand(outgoing, counts, incoming, size: int) -> list[list[int]]:
    """Alltoallv between the replays of one process: ``outgoing[r]`` holds ``counts[r][to]``
    records of ``size`` bytes for each rank ``to``; returns the counts of the way back
    (``received[to][r]``)."""
    import numpy as np

    ranks = len(outgoing)
    received = [[int(counts[r][to]) for r in range(ranks)] for to in range(ranks)]
    starts = [np.concatenate([[0], np.cumsum(np.asarray(c, dtype=np.int64))]) for c in counts]
    for to in range(ranks):
        blocks = [outgoing[r][size * starts[r][to]:size * starts[r][to + 1]] for r in range(ranks)]
        incoming[to](sum(received[to]))[:] = np.concatenate(blocks)
    return received


def replay_memory(path: str | os.PathLike, ranks: int, time_correct: bool = False) -> ReplayMemory:
    """The memory of the wait-state replay with every metric (issue #26's bound of 64 bytes per
    communication event): the trace at ``path`` replayed on ``ranks`` ranks' shares in this
    process, the steps as ``cubescale.parallel.analysis`` runs them under mpirun (the message
    exchange in rounds) with the exchanges done by hand, and after each step every rank's bytes
    of records and buffers beside them (``Replay.record_bytes() + Replay.beside_bytes()``) per
    own communication event (messages, collectives, OpenMP synchronization events). With
    ``time_correct`` the ``--time-correct`` steps run first (``CORRECTION_PHASES``: between its
    steps, and the most held inside ``finish_correction``).

    Example
    -------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = write_ring_trace(d, "ring", processes=2, iterations=50, counters=False)
    >>> memory = replay_memory(os.path.join(d, "ring.otf2"), 2)
    >>> list(memory.phases) == list(REPLAY_PHASES), all(0 < p <= 64 for p in memory.peaks())
    (True, True)
    >>> list(replay_memory(os.path.join(d, "ring.otf2"), 2, time_correct=True).phases)[1:3]
    ['correction', 'correction moves']
    """
    import numpy as np

    from .parallel.analysis import ROUND_BYTES
    from .parallel.trace import rank_share
    from .trace import open as open_trace

    trace = open_trace(path)
    shares = [rank_share(trace, ranks, r)[1] for r in range(ranks)]
    owner = np.zeros(len(trace.announced_events()), dtype=np.uint32)
    for rank, share in enumerate(shares):
        owner[share] = rank
    Replay = _analysis.Replay
    replays = [Replay(trace._core, trace.location_indices(), share, complete=True) for share in shares]
    events = [max(1, r.stats()["messages"] + r.stats()["collectives"] + r.omp_sync_events()) for r in replays]
    phases = REPLAY_PHASES[:1] + CORRECTION_PHASES + REPLAY_PHASES[1:] if time_correct else REPLAY_PHASES
    out: dict[str, list[float]] = {p: [0.0] * ranks for p in phases}

    def held(phase):
        now = [(r.record_bytes() + r.beside_bytes()) / e for r, e in zip(replays, events)]
        out[phase] = [max(a, b) for a, b in zip(out[phase], now)]

    def each(step, *args, phase="later"):
        result = [getattr(r, step)(*args) for r in replays]
        held(phase)
        return result

    held("extraction")
    if time_correct:
        _correct_by_hand(replays, owner, held)
        out["correction moves"] = [r.correction_peak_bytes() / e for r, e in zip(replays, events)]
    totals = each("begin_sends", owner, ranks, phase="rounds begun")
    for to, r in enumerate(replays):
        r.expect_sends(sum(int(t[to]) for t in totals))
    rounds = max(r.send_rounds(ROUND_BYTES) for r in replays)
    for _ in range(rounds):
        counts = each("pack_round", phase="rounds")
        sent = _exchange_by_hand([r.outgoing_sends() for r in replays], counts, [r.incoming_round for r in replays],
                                 Replay.send_bytes)
        each("answer_round", phase="rounds")
        _exchange_by_hand([r.home_posted() for r in replays], sent, [r.posted for r in replays], 8)
        held("rounds")
        each("late_receiver_round", phase="rounds")
    each("messages_beside", phase="after messages_beside")
    each("match_messages")
    each("late_receiver")
    counts = [r.pack_collectives(ranks, list(range(ranks))) for r in replays]
    received = _exchange_by_hand([r.outgoing_collectives() for r in replays], counts,
                                 [r.incoming_collectives for r in replays], Replay.collective_bytes)
    held("later")
    each("collectives_beside_home")
    _exchange_by_hand([r.home_extras() for r in replays], received, [r.extras for r in replays], Replay.extra_bytes)
    held("later")
    each("collectives_beside")
    each("reduce_collectives")
    _exchange_by_hand([r.home_reductions() for r in replays], received, [r.reductions for r in replays],
                      Replay.reduction_bytes)
    held("later")
    each("collective_severities")
    counts = each("pack_listings", owner, ranks)
    _exchange_by_hand([r.outgoing_listings() for r in replays], counts, [r.incoming_listings for r in replays],
                      Replay.listing_bytes)
    held("later")
    each("take_listings")
    each("late_receiver_after")
    return ReplayMemory(out, rounds)


def _correct_by_hand(replays, owner, held) -> int:
    """``parallel.analysis._time_correct``'s steps over the replays of one process (every rank a
    home), ``held("correction")`` after each; returns the rounds."""
    ranks, Replay = len(replays), _analysis.Replay
    counts = [r.begin_correction(owner, ranks, rank, list(range(ranks))) for rank, r in enumerate(replays)]
    held("correction")
    _exchange_by_hand([r.correction_outgoing_members() for r in replays], counts,
                      [r.correction_incoming_members for r in replays], Replay.collective_bytes)
    held("correction")
    for r in replays:
        r.take_members()
    held("correction")
    rounds, counted = 0, False
    parts = (("sends", Replay.send_value_bytes), ("enters", Replay.collective_bytes),
             ("references", Replay.instance_value_bytes))
    while True:
        for r in replays:
            r.correct_round()
        held("correction")
        rows = [r.correction_rows() for r in replays]  # the Alltoall of the rows
        for to, r in enumerate(replays):
            r.correction_received_rows()[:] = [rows[sender][to] for sender in range(ranks)]
        state = [r.plan_round() for r in replays][0]  # the same on every rank
        if state >> 2:
            for r in replays:
                r.size_round()
            for k, (name, size) in enumerate(parts):
                if state & (4 << k):  # its Alltoallv by the planned layout
                    layouts = [r.correction_layout() for r in replays]
                    outgoing = [getattr(r, f"correction_outgoing_{name}")() for r in replays]
                    for to, r in enumerate(replays):
                        into = getattr(r, f"correction_incoming_{name}")()
                        for sender in range(ranks):
                            n, at = int(layouts[sender][k, 0, to]), int(layouts[sender][k, 1, to])
                            there = int(layouts[to][k, 3, sender])
                            into[size * there:size * (there + n)] = outgoing[sender][size * at:size * (at + n)]
        held("correction")
        for r in replays:
            r.take_values()
        held("correction")
        rounds += 1
        if state & 1:
            continue
        if counted or not state & 2:
            break
        counts = [r.pack_send_counts() for r in replays]  # a stall with events left, once
        _exchange_by_hand([r.correction_outgoing_counts() for r in replays], counts,
                          [r.correction_incoming_counts for r in replays], Replay.send_count_bytes)
        held("correction")
        for r in replays:
            r.take_send_counts()
        counted = True
    for r in replays:
        r.finish_correction()
    return rounds


def messages_only_run(iterations: int, nonblocking: bool,
                      only_nonblocking: bool = False) -> tuple[list[list[tuple]], int]:
    """A ring of 4 processes exchanging point-to-point messages only, as ``(calls per rank,
    end)`` for :func:`write_mpi_trace` (the worst case for the replay's exchange: no
    collective records beside the messages): per iteration an ``MPI_Ssend`` and an
    ``MPI_Recv``, the receive posted while the send waits (Late Receiver), then with
    ``nonblocking`` an ``MPI_Isend`` and ``MPI_Irecv`` completed by an ``MPI_Waitall``, else an
    ``MPI_Send`` and an ``MPI_Recv``. ``only_nonblocking`` leaves the ``MPI_Ssend`` and its
    ``MPI_Recv`` out: every message is non-blocking (what costs most beside the records).

    Example
    -------
    >>> calls, end = messages_only_run(2, nonblocking=True)
    >>> [c[0] for c in calls[0][:5]], end
    (['MPI_Ssend', 'MPI_Recv', 'MPI_Isend', 'MPI_Irecv', 'MPI_Waitall'], 3000)
    >>> [c[0] for c in messages_only_run(2, nonblocking=True, only_nonblocking=True)[0][0][:4]]
    ['MPI_Isend', 'MPI_Irecv', 'MPI_Waitall', 'MPI_Isend']
    """
    ranks = []
    for p in range(4):
        nxt, prev, calls = (p + 1) % 4, (p - 1) % 4, []
        for i in range(iterations):
            t = 1000 * i
            if not only_nonblocking:
                calls += ([("MPI_Ssend", t + 200, t + 300, [nxt], 2), ("MPI_Recv", t + 450, t + 510, [prev], 2)]
                          if p % 2 == 0
                          else [("MPI_Recv", t + 250, t + 310, [prev], 2), ("MPI_Ssend", t + 400, t + 500, [nxt], 2)])
            calls += ([("MPI_Isend", t + 600, t + 610, [nxt], 1), ("MPI_Irecv", t + 620, t + 630, [prev], 1),
                       ("MPI_Waitall", t + 650 + 10 * p, t + 700, [prev], 1)] if nonblocking or only_nonblocking
                      else [("MPI_Send", t + 600, t + 610, [nxt], 1), ("MPI_Recv", t + 620 + 10 * p, t + 700, [prev], 1)])
        ranks.append(calls)
    return ranks, 1000 * iterations + 1000
