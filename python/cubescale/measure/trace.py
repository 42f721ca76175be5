"""Writing the OTF2 trace of a run (``cubescale.measure.start(trace=DIR)`` and
:func:`cubescale.measure.write_trace`), collective over the ranks of an mpi4py communicator or
:class:`~cubescale.parallel.serial.SerialComm`: every rank's event files while the program runs,
the ranks' clock offsets against rank 0, and at the end the archive's definitions, written so
that the archive appears whole or not at all (docs/measure.md, "Writing the archive").
"""

from __future__ import annotations

from typing import Any

from .._core import measure as _measure
from ..files import partial_traces, record_partial_writer, stale_partial_traces

__all__ = ["begin_trace", "end_trace"]

# Writing the trace of a run (cubescale.measure.start(trace=...) and write_trace): every rank
# writes its event files into <directory>.partial/rank<r>; at the end rank 0 gathers the
# ranks' definitions and writes the archive's definitions in <directory>.partial/archive, the
# ranks move their event files next to them, and rank 0 renames that folder to <directory>:
# the archive appears whole or not at all.
_CLOCK_TAG = 0x7C5  # ping-pong messages of the clock offsets, on the caller's own communicator


def _partial(directory: str) -> str:
    return directory + ".partial"


def _live_partial(partial: str) -> bool:
    """Whether an unfinished trace folder may still be written by a living process."""
    import os

    parent, name = os.path.split(partial)
    if not os.path.isdir(partial):
        return False
    ours = [t for t in partial_traces(parent) if os.path.basename(t.path) == name]
    stale = [t for t in stale_partial_traces(parent) if os.path.basename(t.path) == name]
    return bool(ours) and not stale


def begin_trace(directory: str, buffer_bytes: int, comm: Any) -> None:
    """Collective over ``comm`` (mpi4py or :class:`~cubescale.parallel.serial.SerialComm`):
    the current measurement writes every thread's events into this rank's part of the trace
    ``directory`` (which must not exist), through ``buffer_bytes`` per thread, and the ranks'
    clock offsets against rank 0 are measured. :func:`end_trace` writes the archive.

    Example
    -------
    >>> import os, tempfile
    >>> from cubescale import measure
    >>> from cubescale.parallel.serial import SerialComm
    >>> from cubescale.measure.trace import begin_trace, end_trace
    >>> measure.start()
    >>> d = os.path.join(tempfile.mkdtemp(), "trace")
    >>> begin_trace(d, 1 << 20, SerialComm())
    >>> with measure.region("work"):
    ...     pass
    >>> measure.stop()
    >>> os.path.basename(end_trace(SerialComm(), "host", "Process 0"))
    'traces.otf2'
    """
    import errno
    import os
    import shutil

    directory = os.path.abspath(directory)
    if isinstance(comm, Later):
        return _begin_alone(directory, buffer_bytes, comm.rank)
    partial, rank = _partial(directory), comm.Get_rank()
    problem = None
    if rank == 0:
        if os.path.exists(directory):
            problem = "the trace directory exists already"
        elif _live_partial(partial):
            problem = f"a running process writes this trace ({os.path.basename(partial)})"
        else:  # a dead run's leftovers (or none)
            shutil.rmtree(partial, ignore_errors=True)
            record_partial_writer(partial, 0)
    problem = comm.bcast(problem, root=0)
    if problem:
        raise FileExistsError(errno.EEXIST, problem, directory)
    if rank != 0:  # each rank says it writes here, before any event file: `cubescale clean` judges by it
        record_partial_writer(partial, rank)
    _measure.trace(os.path.join(partial, f"rank{rank}"), rank, int(buffer_bytes))
    _measure.trace_world_size(comm.Get_size())
    _TRACE_DIRECTORY[:] = [directory]
    _clock_offset(comm)


_TRACE_DIRECTORY: list[str] = []


class Later:
    """The ranks' communicator of :func:`begin_trace` before MPI is up (``cubescale run``
    waits for the program's own ``MPI.Init``): ``rank`` as mpirun tells it; each rank begins
    alone, and :func:`join_trace` does the collective part once MPI is up.

    Example
    -------
    >>> Later(3).rank
    3
    """

    def __init__(self, rank: int):
        self.rank = rank


_JOB_WAIT = 30.0  # seconds a rank waits for rank 0 to claim the trace folder


def _job() -> str:
    """This mpirun job's id from the launcher's environment ("" if it gives none)."""
    import os

    for key in ("PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID"):
        if os.environ.get(key):
            return f"{key}={os.environ[key]}.{os.environ.get('SLURM_STEP_ID', '')}"
    return ""


def _begin_alone(directory: str, buffer_bytes: int, rank: int) -> None:
    """:func:`begin_trace` without messages: rank 0 claims the folder (the checks, a dead
    run's leftovers removed, the job's id written), the other ranks wait for that claim
    before they write into it."""
    import errno
    import os
    import shutil
    import time

    from ..files import write_text

    partial, job = _partial(directory), _job()
    if os.path.exists(directory):
        raise FileExistsError(errno.EEXIST, "the trace directory exists already", directory)
    if rank == 0:
        if _live_partial(partial):
            raise FileExistsError(errno.EEXIST, f"a running process writes this trace ({os.path.basename(partial)})",
                                  directory)
        shutil.rmtree(partial, ignore_errors=True)
        record_partial_writer(partial, 0)
        write_text(os.path.join(partial, "job"), job + "\n")
    else:
        deadline = time.monotonic() + _JOB_WAIT
        while not _claimed(partial, job):
            if time.monotonic() > deadline:
                raise RuntimeError(f"rank 0 did not begin the trace {directory} within {_JOB_WAIT:.0f} s")
            time.sleep(0.01)
        record_partial_writer(partial, rank)
    _measure.trace(os.path.join(partial, f"rank{rank}"), rank, int(buffer_bytes))
    _TRACE_DIRECTORY[:] = [directory]


def _claimed(partial: str, job: str) -> bool:
    """Whether rank 0 of this job claimed the folder; if the launcher names no job, a claim
    made after this process started (a dead run's claim, which rank 0 is about to remove, is
    older: writing into that folder would lose the events)."""
    import os

    claim = os.path.join(partial, "job")
    try:
        with open(claim, encoding="utf-8") as f:
            if job:
                return f.read().strip() == job
        return os.path.getmtime(claim) >= _process_start() - 2.0  # (boot time has whole seconds)
    except OSError:
        return False


def _process_start() -> float:
    """When this process started, in seconds since the epoch (Linux's /proc; 0 elsewhere)."""
    import os

    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22: start time after boot
        with open("/proc/stat", encoding="ascii") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return 0.0


def join_trace(comm: Any) -> None:
    """The collective part of :func:`begin_trace` for a trace begun with :class:`Later`: the
    number of ranks and the clock offsets, over ``comm`` (whose ranks must be mpirun's).

    Example
    -------
    >>> from cubescale import measure
    >>> from cubescale.measure.trace import join_trace
    >>> from cubescale.parallel.serial import SerialComm
    >>> join_trace(SerialComm())
    Traceback (most recent call last):
    ...
    RuntimeError: no trace to join: start the measurement with measure.start(trace=DIR)
    """
    if not _TRACE_DIRECTORY or not _measure.tracing():
        raise RuntimeError("no trace to join: start the measurement with measure.start(trace=DIR)")
    _measure.trace_world_size(comm.Get_size())
    _clock_offset(comm)


def _clock_offset(comm: Any, rounds: int = 8) -> None:
    """This rank's clock offset against rank 0 now (OTF2's ClockOffset): rank 0 answers
    ``rounds`` pings of each other rank with its clock; the round trip that was fastest gives
    the offset (rank 0's clock minus the middle of the round trip) and its error (half of it)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    if rank == 0:
        _measure.trace_clock_offset(_measure.clock(), 0, 0.0)
        for peer in range(1, size):
            for _ in range(rounds):
                comm.recv(source=peer, tag=_CLOCK_TAG)
                comm.send(_measure.clock(), dest=peer, tag=_CLOCK_TAG)
        return
    best = None
    for _ in range(rounds):
        t1 = _measure.clock()
        comm.send(None, dest=0, tag=_CLOCK_TAG)
        t0 = comm.recv(source=0, tag=_CLOCK_TAG)
        t2 = _measure.clock()
        if best is None or t2 - t1 < best[0]:
            middle = (t1 + t2) // 2
            best = (t2 - t1, middle, t0 - middle)
    assert best is not None
    _measure.trace_clock_offset(best[1], best[2], best[0] / 2)


_UP, _DOWN = 0x7C6, 0x7C7  # the definitions' tree reduction, on the caller's own communicator

LAST_WRITE: dict[str, int] = {}
"""What the last :func:`end_trace` moved: ``rank0_received`` (bytes of definitions rank 0
received: its children's unified definitions and every rank's summary) and ``gathered`` (what
gathering every rank's definitions to rank 0, the way before the tree, would have received)."""


def _reduce_definitions(comm: Any, host: str, process: str, archive: str) -> str | None:
    """Closes this rank's event files and reduces the ranks' definitions along the binary tree
    (:class:`_core.measure.TraceUnifyState`): rank 0 ends with the unified regions and
    communicators and writes the global definitions into ``archive``; each rank writes its own
    locations' local definitions (its id mappings, come back down the tree). Returns this
    rank's problem, if any (told to every rank by the caller)."""
    from ..parallel.collective import CollectiveError, down_pass, tree_links, up_pass

    rank, state, summary, error = comm.Get_rank(), None, b"", None
    try:
        part = _measure.close_trace(host, process)
        state, summary = _measure.TraceUnifyState(part), _measure.trace_summary(part)
    except Exception as e:  # noqa: BLE001 - travels up the tree, raised on every rank
        error, part = e, b""

    def finish(is_root: bool) -> bytes:
        if state is None:
            raise error if error is not None else RuntimeError("no trace definitions")
        return state.end_up()

    links = tree_links(comm)
    up_error = up_pass(comm, links, lambda message: state.absorb(message), finish, _UP)  # type: ignore[union-attr]
    try:
        down_pass(comm, links, lambda message: state.down(message), _DOWN, up_error)  # type: ignore[union-attr]
    except CollectiveError as e:
        return f"rank {rank}: {e}"
    assert state is not None
    problem = None
    try:
        _measure.finish_trace(state.region_map, state.comm_map)
    except Exception as e:  # noqa: BLE001
        problem = f"rank {rank}: {e}"
    summaries = comm.gather(summary, root=0)
    sizes = comm.gather(len(part), root=0)  # only for LAST_WRITE's comparison: what a gather would move
    if rank == 0 and summaries is not None:
        LAST_WRITE.update(rank0_received=state.bytes_received + sum(len(s) for s in summaries[1:]),
                          gathered=sum(sizes[1:]))
        if problem is None:
            try:
                _measure.write_trace_definitions(archive, state.end_up(), list(summaries))
            except Exception as e:  # noqa: BLE001
                problem = f"rank 0: {e}"
    return problem


def end_trace(comm: Any, host: str, process: str) -> str:
    """Collective over ``comm``, after the measurement stopped: measures the clock offsets
    again, closes this rank's event files and writes the archive that :func:`begin_trace`
    started: the definitions are reduced along a tree (rank 0 receives the unified regions and
    communicators and every rank's locations, and writes the global definitions; each rank
    writes its own locations' local definitions). Returns the path of its anchor file
    ``<directory>/traces.otf2``. On an error no archive is left, on every rank.

    Example
    -------
    >>> from cubescale.measure.trace import end_trace
    >>> from cubescale.parallel.serial import SerialComm
    >>> end_trace(SerialComm(), "host", "Process 0")
    Traceback (most recent call last):
    ...
    RuntimeError: no trace to write: start the measurement with measure.start(trace=DIR)
    """
    import os
    import shutil

    if not _TRACE_DIRECTORY:
        raise RuntimeError("no trace to write: start the measurement with measure.start(trace=DIR)")
    directory = _TRACE_DIRECTORY[0]
    partial, rank = _partial(directory), comm.Get_rank()
    archive = os.path.join(partial, "archive")
    _clock_offset(comm)
    problem = _reduce_definitions(comm, host, process, archive)
    problems = comm.allgather(problem)
    if not any(problems):
        try:  # this rank's event and local definition files join the archive
            source, target = os.path.join(partial, f"rank{rank}", "traces"), os.path.join(archive, "traces")
            os.makedirs(target, exist_ok=True)
            for name in os.listdir(source):
                os.replace(os.path.join(source, name), os.path.join(target, name))
        except OSError as e:
            problem = f"rank {rank}: {e}"
        problems = comm.allgather(problem)
    if rank == 0:
        if not any(problems):
            os.rename(archive, directory)
        shutil.rmtree(partial, ignore_errors=True)
    comm.barrier()
    _TRACE_DIRECTORY.clear()
    first = next((p for p in problems if p), None)
    if first is not None:
        raise RuntimeError(f"the trace {directory} was not written: {first}")
    return os.path.join(directory, "traces.otf2")


_measure.ignore_file(__file__)  # the trace's own code is no region
