"""
Wait-state analysis of MPI traces: Scalasca's patterns (the Scalasca architecture paper, 5.2).
"""

from __future__ import annotations
import collections.abc
import cubescale._core.profile
import cubescale._core.trace
import typing

__all__: list[str] = ["analyze", "pattern_names", "write_mpi_trace", "write_omp_trace"]

def analyze(
    trace: cubescale._core.trace.Trace,
    locations: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex],
    time_correct: bool = False,
    min_latency: typing.SupportsFloat | typing.SupportsIndex = 0.0,
) -> tuple[cubescale._core.profile.LocalProfile, dict]:
    """
    The call-path profile of `locations` (every peer of their messages and collectives among them) with Scalasca's wait-state metrics below `time` and clock_violations: (LocalProfile, stats dict with events read, message and collective records, clock-condition violations as recorded, events moved by the time correction (time_correct=True; min_latency in seconds), and per pattern name its instance statistics). FormatError on inconsistent communication.
    """

def pattern_names() -> list[str]:
    """
    Unique names of the patterns the analysis computes (Scalasca's).
    """

def write_mpi_trace(
    directory: str,
    name: str,
    ranks: collections.abc.Sequence[collections.abc.Sequence[tuple]],
    end: typing.SupportsInt | typing.SupportsIndex,
) -> int:
    """
    Writes <directory>/<name>.otf2: per rank a list of (call, enter_ns, leave_ns, peers, tag[, bytes]), calls such as 'MPI_Send', 'MPI_Ssend', 'MPI_Isend', 'MPI_Irecv', 'MPI_Wait' (completes the open MPI_Isend's too), 'MPI_Recv', 'MPI_Waitall', 'MPI_Barrier', 'MPI_Bcast' (peers = [root]), 'MPI_Allreduce', inside main from 0 to `end` ns. bytes (default 8) is the message or collective payload. Returns the events written.
    """

def write_omp_trace(
    directory: str,
    name: str,
    regions: collections.abc.Sequence[dict],
    threads: typing.SupportsInt | typing.SupportsIndex,
    end: typing.SupportsInt | typing.SupportsIndex,
) -> int:
    """
    Writes <directory>/<name>.otf2: one process of `threads` threads; per parallel region a dict with 'fork', 'join' (ns) and 'threads': per thread of the team a list of (call, enter_ns, leave_ns) for 'ibarrier', 'barrier' or (call, enter_ns, leave_ns, acquire_ns, lock) for 'critical', 'lock'. Returns the events written.
    """
