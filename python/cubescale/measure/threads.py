"""The threads a traced program starts, recorded as Score-P records pthreads (its create/wait
model): ``Thread.start`` writes ThreadCreate in the starting thread, the new thread begins with
ThreadBegin and ends with ThreadEnd, and ``Thread.join`` writes ThreadWait once the thread has
ended; one sequence number per started thread pairs them, on the process's thread team
(``Threads of MPI Rank r`` in the trace). As Score-P's pthread adapter writes them inside its
``pthread_create`` and ``pthread_join`` regions, ``Thread.start`` and ``Thread.join`` run inside
regions of those names (paradigm pthread, roles thread create / thread wait) that hold the
events. ``threading.Barrier.wait`` is a region of its own, ``pthread_barrier_wait`` (paradigm
pthread, role barrier), so that a barrier's waiting time shows as such whatever the filter keeps
of ``threading``. The wrappers call no Python function of ``threading`` beyond the one they wrap:
the hook would record it as a call of the program's.

Only while a measurement traces (:func:`cubescale.measure.start` with ``trace=``): the profile
of a run without ``--trace`` is unchanged. Threads started before the measurement have no
ThreadCreate/ThreadBegin, and their joins no ThreadWait. Locks (``threading.Lock``/``RLock``) are
not recorded: ``with lock:`` calls the C lock's ``__enter__`` without any event of the profiling
hook, so recording it would take a replacement lock type whose every acquire costs a call more
than Python's own (docs/measure.md).
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from .._core import measure as _measure

__all__ = ["trace_threads", "untrace_threads"]

_SAVED: dict[str, Any] = {}
_SEQUENCE = [itertools.count(1)]  # per trace, from 1; next() of a count is atomic under the GIL


class _PthreadRegion:
    """A pthread call's region, registered again after each reset (region ids are kept across
    measurements, but only a registered region is filtered by the new filter)."""

    def __init__(self, name: str, role: str) -> None:
        self.name, self.role = name, role
        self.epoch, self.id = -1, 0

    def __call__(self) -> int:
        epoch = _measure.epoch()
        if epoch != self.epoch:
            self.epoch, self.id = epoch, _measure.region(self.name, "", -1, "pthread", self.role)
        return self.id


_BARRIER = _PthreadRegion("pthread_barrier_wait", "barrier")
_CREATE = _PthreadRegion("pthread_create", "thread create")
_JOIN = _PthreadRegion("pthread_join", "thread wait")


def _started(thread: threading.Thread) -> bool:
    """Whether ``thread`` was started, read without calling ``Event.is_set``."""
    started = thread._started  # type: ignore[attr-defined]
    flag = getattr(started, "_flag", None)  # (CPython's Event keeps it so, 3.8 to 3.13)
    return started.is_set() if flag is None else bool(flag)


def _ended(thread: threading.Thread, timeout: float | None) -> bool:
    """Whether ``thread``, just joined with ``timeout``, has ended, without calling
    ``Thread.is_alive`` where CPython says it otherwise: a join without a timeout returns only
    then; a join with one leaves ``_is_stopped`` set (3.8 to 3.12)."""
    if timeout is None:
        return True
    stopped = getattr(thread, "_is_stopped", None)
    return not thread.is_alive() if stopped is None else bool(stopped)


def _start(self: threading.Thread) -> None:
    if _started(self):  # started twice: Python's own error
        return _SAVED["start"](self)
    sequence = next(_SEQUENCE[0])
    self._cubescale_sequence = sequence  # type: ignore[attr-defined]
    inner = self._bootstrap_inner  # type: ignore[attr-defined]

    # The new thread's first and last events around threading's own start of it: its run()
    # stays the call that hooks the thread (as without tracing, it is no region itself).
    def bootstrap_traced() -> None:
        _measure.name_thread(self.name)  # its location, named before threading lists the thread
        _measure.trace_thread_begin(sequence)
        try:
            inner()
        finally:
            _measure.stop_hook()  # nothing after ThreadEnd: the hook leaves this thread
            _measure.trace_thread_end(sequence)

    self._bootstrap_inner = bootstrap_traced  # type: ignore[attr-defined]
    _measure.enter(_CREATE())
    try:
        _measure.trace_thread_create(sequence)
        return _SAVED["start"](self)
    finally:
        _measure.exit()


def _join(self: threading.Thread, timeout: float | None = None) -> None:
    _measure.enter(_JOIN())
    try:
        _SAVED["join"](self, timeout)
        sequence = getattr(self, "_cubescale_sequence", None)
        if sequence is not None and not getattr(self, "_cubescale_joined", False) and _ended(self, timeout):
            self._cubescale_joined = True  # type: ignore[attr-defined]  # one ThreadWait per thread
            _measure.trace_thread_wait(sequence)
    finally:
        _measure.exit()


def _barrier_wait(self: threading.Barrier, timeout: float | None = None) -> int:
    _measure.enter(_BARRIER())
    try:
        return _SAVED["wait"](self, timeout)
    finally:
        _measure.exit()


def trace_threads() -> None:
    """Records the threads the program starts from now on, their joins and its barrier waits
    (see the module); :func:`untrace_threads` undoes it. :func:`cubescale.measure.start` calls
    it when it traces.

    Example
    -------
    >>> import threading
    >>> from cubescale.measure.threads import trace_threads, untrace_threads
    >>> trace_threads()
    >>> threading.Thread.start.__module__
    'cubescale.measure.threads'
    >>> untrace_threads()
    >>> threading.Thread.start.__module__
    'threading'
    """
    if _SAVED:
        return
    _SEQUENCE[0] = itertools.count(1)
    _SAVED.update(start=threading.Thread.start, join=threading.Thread.join, wait=threading.Barrier.wait)
    threading.Thread.start = _start  # type: ignore[method-assign]
    threading.Thread.join = _join  # type: ignore[method-assign]
    threading.Barrier.wait = _barrier_wait  # type: ignore[method-assign,assignment]


def untrace_threads() -> None:
    """Restores ``threading``'s own ``Thread.start``, ``Thread.join`` and ``Barrier.wait``.

    Example
    -------
    >>> from cubescale.measure.threads import untrace_threads
    >>> untrace_threads()
    """
    if _SAVED:
        threading.Thread.start = _SAVED["start"]  # type: ignore[method-assign]
        threading.Thread.join = _SAVED["join"]  # type: ignore[method-assign]
        threading.Barrier.wait = _SAVED["wait"]  # type: ignore[method-assign]
        _SAVED.clear()


_measure.ignore_file(__file__)  # the wrappers are no regions themselves
