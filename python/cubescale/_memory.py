"""Whether a long pass will fit in this machine's memory, projected from what it took so far:
the one-process wait-state analysis holds records of every communication event of the trace
(about 110 bytes each, 20-40 bytes per event on message-heavy traces), so a trace of billions
of events outgrows a node long after the reading began. A warning as soon as the growth so far
says so spares the wait for the out-of-memory kill.

Example
-------
>>> watch = MemoryProjection(total=1_000_000, available=2**40)
>>> watch.check(500_000) is None  # half read, far from a TiB
True
"""

from __future__ import annotations

import os
import warnings

# The steps after the reading (pairs, sync points, the metric tree) add to what the reading
# held: the peak of the one-process analysis was 1.0-1.4 times the memory at the reading's
# end on the generated rings and message traces (docs/analysis.md, "Memory in one process").
AFTER_READING = 1.3
# Early in the reading the growth so far overstates the rest (buffers doubled ahead, threads
# started): the projection was up to 1.97 times the peak before half the events were read, up
# to 1.24 after, on those traces on 1 and 2 threads. A warning only beyond these margins.
MARGIN_BEFORE_HALF, MARGIN_AFTER_HALF = 2.0, 1.3
ONE_PROCESS_ADVICE = ("over MPI ranks (mpirun -n N python -m cubescale analyze ...) each rank holds about 64 bytes "
                      "per communication event of its share")


def available_memory() -> int | None:
    """Bytes of memory the kernel can give without swapping (``MemAvailable`` in
    ``/proc/meminfo``; the environment variable ``CUBESCALE_MEMORY_AVAILABLE``, in bytes, takes
    its place, e.g. for a job's share of a node); None where neither says.

    Example
    -------
    >>> available = available_memory()
    >>> available is None or available > 0
    True
    """
    given = os.environ.get("CUBESCALE_MEMORY_AVAILABLE")
    if given:
        try:
            return max(int(given), 0)
        except ValueError:
            raise ValueError(f"CUBESCALE_MEMORY_AVAILABLE={given!r}: a number of bytes") from None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def resident_memory() -> int | None:
    """Bytes of memory this process holds now (``/proc/self/statm``); None where unknown.

    Example
    -------
    >>> held = resident_memory()
    >>> held is None or held > 0
    True
    """
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def in_gib(n: float) -> str:
    """``n`` bytes in GiB, one decimal (``in_gib(3 * 2**29)`` is ``'1.5 GiB'``)."""
    return f"{n / 2**30:,.1f} GiB"


class MemoryProjection:
    """The memory a pass over ``total`` events will hold at its end, projected from this
    process' growth since it began: after at least ``least`` of the events (default a twentieth)
    the growth per event read times the events, times ``factor`` for what follows the reading.
    ``check`` returns a one-line warning the first time that exceeds ``available`` (default
    :func:`available_memory` when the pass begins) by more than the projection's error (twice
    before half the events are read, 1.3 times after), else None; ``what`` names the pass in
    it, ``advice`` says what to do instead.

    Example
    -------
    >>> watch = MemoryProjection(total=100, available=1, least=1)
    >>> watch.check(0) is None  # nothing read yet: nothing to project
    True
    """

    def __init__(self, total: int, available: int | None = None, factor: float = AFTER_READING,
                 least: int | None = None, what: str = "the analysis in one process",
                 advice: str = ONE_PROCESS_ADVICE) -> None:
        self.what, self.advice = what, advice
        self.total = int(total)
        self.available = available_memory() if available is None else int(available)
        self.factor = factor
        self.least = max(self.total // 20, 1) if least is None else max(int(least), 1)
        self.start = resident_memory()
        self.warned = False

    def projected(self, read: int) -> int | None:
        """Bytes this process would grow by over the whole pass at the rate so far; None before
        ``least`` events or where the memory is unknown.

        Example
        -------
        >>> MemoryProjection(total=100).projected(0) is None
        True
        """
        now = resident_memory()
        if read < self.least or read <= 0 or now is None or self.start is None:
            return None
        return int(max(now - self.start, 0) * self.total / read * self.factor)

    def check(self, read: int) -> str | None:
        """The warning, once, when the projection exceeds the memory available.

        Example
        -------
        >>> MemoryProjection(total=10, available=2**50, least=1).check(5) is None
        True
        """
        if self.warned or self.available is None:
            return None
        grown = self.projected(read)
        margin = MARGIN_BEFORE_HALF if 2 * read < self.total else MARGIN_AFTER_HALF
        if grown is None or grown <= self.available * margin:
            return None
        self.warned = True
        return (f"after {read:,} of {self.total:,} events {self.what} is on course for about {in_gib(grown)} more "
                f"memory, {in_gib(self.available)} were available: it may be killed for lack of it; {self.advice}")

    def warn(self, read: int) -> None:
        """:meth:`check`'s warning, if any, as a :class:`RuntimeWarning` (``cubescale analyze``
        prints it as one line).

        Example
        -------
        >>> MemoryProjection(total=10, available=2**50, least=1).warn(5)
        """
        warning = self.check(read)
        if warning:
            warnings.warn(warning, RuntimeWarning, stacklevel=3)

