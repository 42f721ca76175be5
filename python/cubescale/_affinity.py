"""The CPUs this process may run on (its affinity, which mpirun and batch systems set): the
default thread counts of the analysis in one process and on each rank of its replay."""

from __future__ import annotations

import os


def affinity() -> list[int] | None:
    """The logical CPUs this process may run on, sorted; None where the platform does not say.

    Example
    -------
    >>> cpus = affinity()
    >>> cpus is None or len(cpus) >= 1
    True
    """
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform
        return None


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, which mpirun and batch systems set;
    else the machine's): :func:`cubescale.analyze`'s default number of threads.

    Example
    -------
    >>> available_cores() >= 1
    True
    """
    cpus = affinity()
    return max(1, len(cpus) if cpus is not None else os.cpu_count() or 1)


def thread_count(threads: int) -> int:
    """``threads`` when it is a whole number of at least 1 (a thread count someone gave), else
    ValueError.

    Example
    -------
    >>> thread_count(4)
    4
    """
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a whole number of at least 1, not {threads!r}")
    return threads
