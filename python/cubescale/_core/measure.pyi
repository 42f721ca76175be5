"""
The measurement runtime: per-thread call-path recording, manual regions, the profiling hook.
"""

from __future__ import annotations
import collections.abc
import cubescale._core.profile
import typing

__all__: list[str] = [
    "TraceUnifyState",
    "UserRegion",
    "add",
    "add_bytes",
    "clock",
    "close_all",
    "close_trace",
    "collective_operation",
    "counter",
    "enter",
    "epoch",
    "exit",
    "finish_trace",
    "glob_match",
    "ignore_builtin",
    "ignore_code",
    "ignore_file",
    "memory_bytes",
    "mismatches",
    "name_thread",
    "region",
    "reset",
    "start_hook",
    "stop_hook",
    "thread_count",
    "ticks_per_second",
    "to_profile",
    "trace",
    "trace_buffer_bytes",
    "trace_clock_offset",
    "trace_collective_begin",
    "trace_collective_complete",
    "trace_collective_end",
    "trace_collective_request",
    "trace_communicator",
    "trace_flushes",
    "trace_irecv",
    "trace_irecv_request",
    "trace_isend",
    "trace_isend_complete",
    "trace_recv",
    "trace_send",
    "trace_summary",
    "trace_thread_begin",
    "trace_thread_create",
    "trace_thread_end",
    "trace_thread_wait",
    "trace_world_size",
    "tracing",
    "write_process_report",
    "write_trace_archive",
    "write_trace_definitions",
]

class UserRegion:
    """
    A code region as a context manager: `with UserRegion("solve"):` records the block on this thread. Registered on first use; the id stays valid in later measurements.
    """
    def __enter__(self) -> typing.Any:
        """
        Enters the region on this thread.
        """
    def __exit__(self, exc_type: typing.Any, exc_value: typing.Any, traceback: typing.Any) -> None:
        """
        Leaves it (also when an exception leaves).
        """
    def __init__(
        self,
        name: str,
        file: str = "",
        line: typing.SupportsInt | typing.SupportsIndex = -1,
        paradigm: str = "user",
        role: str = "function",
    ) -> None:
        """
        A region named `name` (source file and line, CUBE's paradigm and role).
        """
    @property
    def file(self) -> str:
        """
        Its source file.
        """
    @file.setter
    def file(self, arg1: str) -> None: ...
    @property
    def id(self) -> int:
        """
        The region's id (registers it on first use).
        """
    @property
    def line(self) -> int:
        """
        Its first line (-1: none).
        """
    @line.setter
    def line(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None: ...
    @property
    def name(self) -> str:
        """
        The region's name (set before its first use).
        """
    @name.setter
    def name(self, arg1: str) -> None: ...
    @property
    def paradigm(self) -> str:
        """
        CUBE's paradigm (user, mpi ...).
        """
    @property
    def role(self) -> str:
        """
        CUBE's role (function, barrier ...).
        """

class TraceUnifyState:
    """
    The trace's definitions reduced along a tree (see trace_writer.hpp): up, each rank absorbs its children's unified definitions; down, the maps to the global ones.
    """
    def __init__(self, local_definitions: bytes) -> None:
        """
        From this rank's close_trace bytes.
        """
    def absorb(self, child: bytes) -> None:
        """
        A child's end_up bytes (children in rank order).
        """
    def down(self, message: bytes) -> list[bytes]:
        """
        The parent's maps (b'' at the root); returns each child's.
        """
    def end_up(self) -> bytes:
        """
        This subtree's unified definitions (at the root: the global ones).
        """
    @property
    def bytes_received(self) -> int:
        """
        Bytes of definitions and maps this rank received from its children and parent.
        """
    @property
    def comm_map(self) -> list[int]:
        """
        This rank's communicator ids -> global ids.
        """
    @property
    def region_map(self) -> list[int]:
        """
        This rank's region ids -> global ids.
        """

def add(counter: typing.SupportsInt | typing.SupportsIndex, value: typing.SupportsFloat | typing.SupportsIndex) -> None:
    """
    Adds to a user counter on this thread's current call path.
    """

def add_bytes(
    sent: typing.SupportsInt | typing.SupportsIndex, received: typing.SupportsInt | typing.SupportsIndex
) -> None:
    """
    Adds bytes to this thread's current call path.
    """

def clock() -> int:
    """
    The recorder's clock now, in ticks (the trace's timestamps).
    """

def close_all() -> None:
    """
    Closes every thread's open regions now (finalization; no thread may measure).
    """

def close_trace(host: str, process: str) -> bytes:
    """
    Closes this rank's event files (no thread may record any more) and returns its definitions as bytes for write_trace_archive.
    """

def collective_operation(name: str) -> int:
    """
    OTF2's collective operation of an MPI function name, -1 if it is none.
    """

def counter(name: str, unit: str = "") -> int:
    """
    Registers a user counter (a metric); returns its id.
    """

def enter(region: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    Enters a region on this thread.
    """

def epoch() -> int:
    """
    Changes with every reset(): cached region ids must be registered again.
    """

def exit() -> None:
    """
    Leaves the innermost region of this thread.
    """

def finish_trace(
    regions: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
    comms: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
) -> None:
    """
    After close_trace: writes every location's local definitions (this rank's region and communicator ids -> global ones, TraceUnifyState's maps; its clock offsets) beside its event file and closes the rank's archive.
    """

def glob_match(pattern: str, text: str) -> bool:
    """
    The filters' pattern match, POSIX fnmatch without flags: * ? [set] and backslash escapes.
    """

def ignore_builtin(function: typing.Any) -> None:
    """
    Leaves a builtin (C) function out of the automatic mode's C calls.
    """

def ignore_code(code: typing.Any) -> None:
    """
    Leaves a Python function out of the automatic mode (e.g. the measurement's own wrappers).
    """

def ignore_file(file: str) -> None:
    """
    Leaves every function of a source file (co_filename) out, now and in later measurements.
    """

def memory_bytes() -> int:
    """
    Bytes the threads' recorders hold (call trees, stacks, counters).
    """

def mismatches() -> str:
    """
    One line on exits without an enter, enters of unknown region ids and regions still open, on which threads (empty: none). Only while no thread measures.
    """

def name_thread(name: str) -> None:
    """
    Names this thread's location.
    """

def region(
    name: str,
    file: str = "",
    line: typing.SupportsInt | typing.SupportsIndex = -1,
    paradigm: str = "user",
    role: str = "function",
) -> int:
    """
    Registers a region (once per name, file, line); returns its id.
    """

def reset(filter: str = "", depth_limit: typing.SupportsInt | typing.SupportsIndex = 128) -> None:
    """
    Starts a new measurement: filter in Score-P's filter-file syntax, call paths deeper than depth_limit not recorded. Only while no thread measures.
    """

def start_hook(c_calls: bool = False, all_threads: bool = False) -> None:
    """
    Installs the C-level profiling hook on this thread (all_threads: on every thread that exists): every Python call (and C call) becomes a region.
    """

def stop_hook(all_threads: bool = False) -> None:
    """
    Removes the profiling hook from this thread (all_threads: from every thread).
    """

def thread_count() -> int:
    """
    Threads that recorded something.
    """

def ticks_per_second() -> float:
    """
    The recorder's clock rate.
    """

def to_profile(
    program: typing.SupportsInt | typing.SupportsIndex | None = None,
) -> cubescale._core.profile.LocalProfile:
    """
    Every thread's call tree as one local profile (_core.profile.LocalProfile); with `program`, every other root goes below that region (one root).
    """

def trace(
    directory: str,
    rank: typing.SupportsInt | typing.SupportsIndex = 0,
    buffer_bytes: typing.SupportsInt | typing.SupportsIndex = 1048576,
) -> None:
    """
    Traces the current measurement too: every thread's events go to this rank's OTF2 archive in `directory` (created), through a buffer of buffer_bytes per thread (at least 256 KiB) flushed when full.
    """

def trace_buffer_bytes() -> int:
    """
    The event buffer of each thread, bytes.
    """

def trace_clock_offset(
    time: typing.SupportsInt | typing.SupportsIndex,
    offset: typing.SupportsInt | typing.SupportsIndex,
    deviation: typing.SupportsFloat | typing.SupportsIndex = 0.0,
) -> None:
    """
    Records that rank 0's clock read local + offset at local time `time` (ticks; OTF2's ClockOffset).
    """

def trace_collective_begin() -> None:
    """
    An MpiCollectiveBegin event on this thread.
    """

def trace_collective_complete(
    operation: str,
    comm: typing.SupportsInt | typing.SupportsIndex,
    root: typing.SupportsInt | typing.SupportsIndex,
    sent: typing.SupportsInt | typing.SupportsIndex,
    received: typing.SupportsInt | typing.SupportsIndex,
    request: typing.SupportsInt | typing.SupportsIndex,
) -> None:
    """
    A NonBlockingCollectiveComplete event: the blocking form's MPI function ("MPI_Allreduce"), communicator, root (-1: none), bytes, the request.
    """

def trace_collective_end(
    operation: str,
    comm: typing.SupportsInt | typing.SupportsIndex,
    root: typing.SupportsInt | typing.SupportsIndex,
    sent: typing.SupportsInt | typing.SupportsIndex,
    received: typing.SupportsInt | typing.SupportsIndex,
) -> None:
    """
    An MpiCollectiveEnd event: the MPI function ("MPI_Allreduce"), communicator, root (-1: none), bytes.
    """

def trace_collective_request(request: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    A NonBlockingCollectiveRequest event (MPI_Iallreduce ...) on this thread.
    """

def trace_communicator(
    parent: typing.SupportsInt | typing.SupportsIndex,
    members: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
) -> int:
    """
    A communicator made from `parent` (0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, or an id returned here) with its members' world ranks; returns its id for the MPI events.
    """

def trace_flushes() -> int:
    """
    Buffer flushes so far (every thread).
    """

def trace_irecv(
    peer: typing.SupportsInt | typing.SupportsIndex,
    comm: typing.SupportsInt | typing.SupportsIndex,
    tag: typing.SupportsInt | typing.SupportsIndex,
    bytes: typing.SupportsInt | typing.SupportsIndex,
    request: typing.SupportsInt | typing.SupportsIndex,
) -> None:
    """
    An MpiIrecv event (the completion of a receive request) on this thread.
    """

def trace_irecv_request(request: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    An MpiIrecvRequest event on this thread.
    """

def trace_isend(
    peer: typing.SupportsInt | typing.SupportsIndex,
    comm: typing.SupportsInt | typing.SupportsIndex,
    tag: typing.SupportsInt | typing.SupportsIndex,
    bytes: typing.SupportsInt | typing.SupportsIndex,
    request: typing.SupportsInt | typing.SupportsIndex,
) -> None:
    """
    An MpiIsend event on this thread.
    """

def trace_isend_complete(request: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    An MpiIsendComplete event on this thread.
    """

def trace_recv(
    peer: typing.SupportsInt | typing.SupportsIndex,
    comm: typing.SupportsInt | typing.SupportsIndex,
    tag: typing.SupportsInt | typing.SupportsIndex,
    bytes: typing.SupportsInt | typing.SupportsIndex,
) -> None:
    """
    An MpiRecv event on this thread.
    """

def trace_send(
    peer: typing.SupportsInt | typing.SupportsIndex,
    comm: typing.SupportsInt | typing.SupportsIndex,
    tag: typing.SupportsInt | typing.SupportsIndex,
    bytes: typing.SupportsInt | typing.SupportsIndex,
) -> None:
    """
    An MpiSend event on this thread.
    """

def trace_summary(definitions: bytes) -> bytes:
    """
    close_trace's bytes without regions and communicators: what rank 0 needs of every rank (host, process, locations, clock) beside the unified definitions.
    """

def trace_thread_begin(sequence: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    A ThreadBegin event: this thread is the one ThreadCreate `sequence` started.
    """

def trace_thread_create(sequence: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    A ThreadCreate event on this thread (it starts the thread `sequence` of this process).
    """

def trace_thread_end(sequence: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    A ThreadEnd event: this thread, started as `sequence`, ends.
    """

def trace_thread_wait(sequence: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    A ThreadWait event: this thread joined the ended thread `sequence`.
    """

def trace_world_size(size: typing.SupportsInt | typing.SupportsIndex) -> None:
    """
    The number of ranks of MPI_COMM_WORLD.
    """

def tracing() -> bool:
    """
    Whether the current measurement traces.
    """

def write_process_report(
    path: str,
    host: str = "",
    process: str = "Process 0",
    program: typing.SupportsInt | typing.SupportsIndex | None = None,
) -> None:
    """
    Writes what this process measured as its own .cubex without MPI (machine > host > process > threads), as the C API's cubescale_write does; `cubescale collate` unifies such files of many processes.
    """

def write_trace_archive(directory: str, parts: collections.abc.Sequence[str]) -> int:
    """
    Rank 0: the anchor, global and local definitions of the ranks' definitions `parts` (close_trace's bytes, in rank order) in `directory`; the event files belong in `directory`/traces/. Returns the number of locations.
    """

def write_trace_definitions(directory: str, unified: bytes, summaries: collections.abc.Sequence[bytes]) -> int:
    """
    Rank 0: the anchor and global definitions of the unified definitions (the root TraceUnifyState's end_up) and every rank's trace_summary (rank order) in `directory`; the ranks' local definitions and event files belong in `directory`/traces/. Returns the number of locations.
    """
