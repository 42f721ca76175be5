"""Measuring Python programs: call-path profiles per thread, written as one ``.cubex``
(the Scalasca architecture paper, section 5.1).

Regions are entered and left in C++ (the core's recorder: per-thread call trees created on
first visit, no lock or allocation afterwards). Mark regions by hand with :class:`region`
(a context manager and a decorator), or :func:`start` the automatic mode that records every
Python function call through the C-level profiling hook (``PyEval_SetProfile``), in the main
thread and in every ``threading`` thread started afterwards (thread pools included), each
its own location. :func:`profile` hands back the :class:`~cubescale.profile.LocalProfile`
that :func:`cubescale.parallel.write_report` unifies and collates over MPI; :func:`write`
does that for one process or a communicator. ``cubescale run app.py`` does all of it.

Example
-------
>>> import os, tempfile, cubescale
>>> from cubescale import measure
>>> measure.start()
>>> with measure.region("setup"):
...     total = sum(range(1000))
>>> @measure.region("work")
... def work(n):
...     return sum(range(n))
>>> for n in range(3):
...     _ = work(10)
>>> measure.stop()
>>> p = measure.profile()
>>> [(r.name, int(v)) for r, v in zip([p._core.regions[i] for i in p._core.cnode_regions()], p.values("visits")[:, 0])]
[('setup', 1), ('work', 3)]
"""

from __future__ import annotations

import errno
import functools
import inspect
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from .._core import measure as _measure
from ..profile import LocalProfile
from .threads import trace_threads, untrace_threads

__all__ = ["add_bytes", "counter", "filter_text", "profile", "region", "start", "stop", "write", "write_trace"]

_active = {"auto": False, "running": False}


def _ignore(code: Any) -> None:
    """Leaves a code object out of the automatic mode, in this and every later measurement
    (regions outlive :func:`start`)."""
    _measure.ignore_code(code)


class region(_measure.UserRegion):  # noqa: N801 - used like a function: cubescale.region("name")
    """A code region: ``with region("solve"):`` or ``@region("solve")`` (or ``@region()``,
    named after the function). ``paradigm`` and ``role`` are CUBE's (``"mpi"``,
    ``"point2point"`` ...). Regions register once and survive :func:`start` resets; entering
    and leaving one runs no Python code (``__enter__`` and ``__exit__`` are C++). A decorated
    generator or ``async`` function is a visit per resumption, never open while it waits.

    Example
    -------
    >>> from cubescale import measure
    >>> measure.start()
    >>> with measure.region("io", role="file io"):
    ...     pass
    >>> measure.stop()
    >>> measure.profile().shape
    (1, 1)
    """

    def __init__(self, name: str | None = None, paradigm: str = "user", role: str = "function",
                 file: str = "", line: int = -1):
        if file == "" and line == -1:
            caller = sys._getframe(1)
            file, line = caller.f_code.co_filename, caller.f_lineno
        super().__init__(name or "", file, line, paradigm, role)
        self._unnamed = name is None  # named after the function it decorates

    def _region(self) -> int:
        return self.id

    def __call__(self, function: Callable) -> Callable:
        if self._unnamed:
            self.name = function.__qualname__
            self.file, self.line = function.__code__.co_filename, function.__code__.co_firstlineno
            self._unnamed = False

        if inspect.isgeneratorfunction(function):  # a visit per resumption, as the automatic mode
            @functools.wraps(function)
            def measured_generator(*args, **kwargs):
                return (yield from _resumptions(self, function(*args, **kwargs)))

            return measured_generator
        if inspect.iscoroutinefunction(function):  # never open while the coroutine waits
            @functools.wraps(function)
            async def measured_coroutine(*args, **kwargs):
                return await _Awaitable(_resumptions(self, function(*args, **kwargs)))

            return measured_coroutine

        @functools.wraps(function)
        def measured(*args, **kwargs):
            with self:
                return function(*args, **kwargs)

        return measured  # a function of this file: no region itself


def _resumptions(scope: region, inner: Any):
    """Runs a generator or coroutine one resumption at a time, each inside ``scope``: a region
    held open across a ``yield`` or an ``await`` would enclose whatever the thread runs
    meanwhile (other tasks of an event loop), and leave the thread's stack out of order."""
    step, value = inner.send, None
    while True:
        with scope:
            try:
                item = step(value)
            except StopIteration as stop:
                return stop.value
        try:
            value, step = (yield item), inner.send
        except GeneratorExit:
            inner.close()
            raise
        except BaseException as e:  # noqa: BLE001 - thrown into the wrapper: into the inner one
            value, step = e, inner.throw


class _Awaitable:
    def __init__(self, steps: Any):
        self._steps = steps

    def __await__(self):
        return self._steps


def start(auto: bool = False, c_calls: bool = False, filter: str | None = None,  # noqa: A002 - Score-P's word
          depth_limit: int = 128, trace: str | os.PathLike | None = None, trace_buffer: int = 1 << 20,
          comm: Any = None) -> None:
    """Starts a new measurement (the data of an earlier, stopped one is dropped; while one runs,
    ``RuntimeError``: a program that ``cubescale run`` measures cannot reset it). ``auto``: every Python function
    call becomes a region (``c_calls``: calls of builtins too), in every thread, those running
    now (an existing thread pool's workers) and those started afterwards, each its own
    location named after its ``threading`` name. ``filter``: Score-P filter-file text
    (``SCOREP_REGION_NAMES_BEGIN / EXCLUDE * / INCLUDE main solve* / SCOREP_REGION_NAMES_END``,
    and ``SCOREP_FILE_NAMES_BEGIN / EXCLUDE */site-packages/* / SCOREP_FILE_NAMES_END`` for
    the source files of Python functions) or a path to such a file (:func:`filter_text`); call
    paths deeper than ``depth_limit`` (at least 1) are collapsed into one ``COLLAPSE`` below the
    call path at the limit, as in Score-P's profile (:mod:`cubescale.measure.depth`).

    ``trace``: also write an OTF2 trace into this directory (it must not exist): Enter and
    Leave of the same regions, and the MPI events of traced mpi4py calls, through a buffer of
    ``trace_buffer`` bytes per thread that is flushed to the event file when full; collective
    over ``comm`` (an mpi4py communicator the program does not use, such as a ``Dup`` of
    ``COMM_WORLD``; default: this process alone). :func:`write_trace` writes the archive.
    While tracing, the threads the program starts are recorded as Score-P records pthreads
    (ThreadCreate/Begin/End/Wait) and ``threading.Barrier.wait`` is a region
    (:mod:`cubescale.measure.threads`).

    Example
    -------
    >>> from cubescale import measure
    >>> measure.start(auto=True, filter="SCOREP_REGION_NAMES_BEGIN EXCLUDE helper* SCOREP_REGION_NAMES_END")
    >>> def helper_a(): return 1
    >>> def compute(): return helper_a() + 1
    >>> _ = compute()
    >>> measure.stop()
    >>> sorted({r.name for r in measure.profile()._core.regions} & {"compute", "helper_a"})
    ['compute']
    """
    if _active["running"]:  # a reset would silently drop what the running one recorded
        raise RuntimeError("a measurement is already running (cubescale run measures this program, or "
                           "measure.start() was called before): measure.stop() it first")
    if trace is not None and not (isinstance(trace_buffer, int) and trace_buffer > 0):
        raise ValueError(f"trace_buffer must be a positive number of bytes, not {trace_buffer!r}")
    if int(depth_limit) < 1:
        raise ValueError(f"depth_limit must be at least 1 (call-path levels recorded), not {depth_limit!r}")
    _measure.reset(filter_text(filter), int(depth_limit))
    _active["running"] = True
    _measure.name_thread("Master thread" if threading.current_thread() is threading.main_thread()
                         else threading.current_thread().name)
    if trace is not None:
        from ..parallel.serial import SerialComm
        from .trace import begin_trace

        begin_trace(os.fspath(trace), trace_buffer, comm if comm is not None else SerialComm())
        trace_threads()  # the threads the program starts, their joins and barrier waits
    if auto:
        threading.setprofile(_bootstrap_thread(c_calls))  # threads started from now on
        _measure.start_hook(c_calls, all_threads=True)      # and every thread running now
        _active["auto"] = True


def filter_text(given: str | None) -> str:
    """The filter-file text ``given`` names: itself when it is filter text (it has a line break
    or a ``SCOREP_REGION_NAMES_BEGIN`` / ``SCOREP_FILE_NAMES_BEGIN``), else the contents of the
    file it names, which must exist (a mistyped path is no filter text).

    Example
    -------
    >>> filter_text("SCOREP_REGION_NAMES_BEGIN EXCLUDE helper* SCOREP_REGION_NAMES_END")[:25]
    'SCOREP_REGION_NAMES_BEGIN'
    >>> filter_text("nonexist.filt")
    Traceback (most recent call last):
    FileNotFoundError: [Errno 2] no such filter file: 'nonexist.filt'
    """
    if not given:
        return ""
    if "\n" in given or any(word in given for word in _FILTER_BLOCKS):
        return given
    if not os.path.exists(given):
        raise FileNotFoundError(errno.ENOENT, "no such filter file", given)
    with open(given) as f:
        return f.read()


_FILTER_BLOCKS = ("SCOREP_REGION_NAMES_BEGIN", "SCOREP_FILE_NAMES_BEGIN")


def _bootstrap_thread(c_calls: bool) -> Callable:
    def bootstrap(frame, event, arg):
        # Runs once in each new thread (threading.setprofile), then hands over to C.
        _measure.name_thread(threading.current_thread().name)
        _measure.start_hook(c_calls)

    return bootstrap


def stop() -> None:
    """Stops measuring: the hook leaves every thread (threads still running record no
    more), new threads are not hooked, open regions are closed.

    Example
    -------
    >>> from cubescale import measure
    >>> measure.start(auto=True)
    >>> measure.stop()
    """
    if _active["auto"]:
        threading.setprofile(None)  # type: ignore[arg-type]
        _measure.stop_hook(all_threads=True)
        _active["auto"] = False
    untrace_threads()  # after the hook: its C calls (dict.clear) would be recorded with c_calls
    _measure.close_all()
    _active["running"] = False


def add_bytes(sent: int = 0, received: int = 0) -> None:
    """Adds bytes sent / received to this thread's current call path (e.g. from I/O code).

    Example
    -------
    >>> from cubescale import measure
    >>> measure.start()
    >>> with measure.region("send"):
    ...     measure.add_bytes(sent=64)
    >>> measure.stop()
    >>> int(measure.profile().values("bytes_sent")[0, 0])
    64
    """
    _measure.add_bytes(int(sent), int(received))


def counter(name: str, unit: str = "") -> Callable[[float], None]:
    """A user counter (a metric of its own): returns ``add(value)``, which adds to this
    thread's current call path (a value added outside every recorded call path, e.g. at the
    top of a script that called :func:`start` itself, has no call path and is not recorded).

    Example
    -------
    >>> from cubescale import measure
    >>> measure.start()
    >>> cells = measure.counter("cells", "#")
    >>> with measure.region("update"):
    ...     cells(100.0)
    >>> measure.stop()
    >>> float(measure.profile().values("cells")[0, 0])
    100.0
    """
    counter_id = _measure.counter(name, unit)
    return lambda value: _measure.add(counter_id, float(value))


def profile(host: str | None = None, process: str | None = None, program: region | None = None) -> LocalProfile:
    """What this process measured, as one :class:`~cubescale.profile.LocalProfile`: the
    union of its threads' call trees, one location per thread; metrics visits, time
    (inclusive), min_time, max_time, bytes_sent, bytes_received and the user counters. With
    ``program`` (the :class:`region` the run was measured in) every other root, of every
    thread, goes below it: one root, as in Score-P's profiles.

    Example
    -------
    >>> from cubescale import measure
    >>> measure.start()
    >>> with measure.region("main"):
    ...     pass
    >>> measure.stop()
    >>> [m.name for m in measure.profile().metrics][:4]
    ['visits', 'time', 'min_time', 'max_time']
    """
    root = program._region() if program is not None else None
    return LocalProfile._from_core(_measure.to_profile(root), host=host, process=process)


def write(path: str | os.PathLike, comm=None, threads: str | None = None, progress: bool = True) -> dict:
    """Writes what was measured to ``path``: collective over ``comm`` (an mpi4py
    communicator; default: this process alone, without MPI), through
    :func:`cubescale.parallel.write_report` (optionally aggregating threads first), with a
    progress line on stderr when it is a terminal (``progress``). Returns this rank's costs per phase.

    Example
    -------
    >>> import os, tempfile, cubescale
    >>> from cubescale import measure
    >>> measure.start()
    >>> with measure.region("main"):
    ...     pass
    >>> measure.stop()
    >>> out = os.path.join(tempfile.mkdtemp(), "run.cubex")
    >>> _ = measure.write(out, progress=False)
    >>> cubescale.open(out).shape
    (1, 1)
    """
    from ..parallel import write_report
    from ..parallel.serial import SerialComm

    comm = comm if comm is not None else SerialComm()
    prof = profile(process=f"MPI Rank {comm.rank}" if not isinstance(comm, SerialComm) else None)
    # a progress line on a terminal only: redirected, its carriage returns would fill the log
    show = _progress_line(os.fspath(path)) if progress and comm.rank == 0 and sys.stderr.isatty() else None
    costs = write_report(comm, prof, path, progress=show, threads=threads, thread_names=True)
    if show is not None:
        print(file=sys.stderr, flush=True)
    # Exits without an enter (e.g. on another thread) and unknown region ids lose data
    # silently otherwise; one line, as cubescale_write says it for C programs.
    mismatches = _measure.mismatches()
    if mismatches:
        print(f"cubescale: warning: {mismatches}", file=sys.stderr, flush=True)
    return costs


def write_trace(comm: Any = None, host: str | None = None, process: str | None = None) -> str:
    """Writes the trace that :func:`start` began (``start(trace=DIR)``), after :func:`stop`:
    collective over the same ``comm`` (default: this process alone). Every thread of every
    rank is a location; ``host`` (default this machine's name) and ``process`` (default ``MPI
    Rank r``, or ``Process 0`` alone) name its place in the system tree as in the profile.
    Returns the path of the archive's anchor file ``DIR/traces.otf2``, which
    :func:`cubescale.trace.open` reads.

    Example
    -------
    >>> import os, tempfile, cubescale.trace
    >>> from cubescale import measure
    >>> d = os.path.join(tempfile.mkdtemp(), "trace")
    >>> measure.start(trace=d)
    >>> with measure.region("work"):
    ...     pass
    >>> measure.stop()
    >>> anchor = measure.write_trace()
    >>> cubescale.trace.open(anchor).events()["Name"].tolist()
    ['work', 'work']
    """
    import socket

    from ..parallel.serial import SerialComm
    from .trace import end_trace

    comm = comm if comm is not None else SerialComm()
    if process is None:
        process = "Process 0" if isinstance(comm, SerialComm) else f"MPI Rank {comm.Get_rank()}"
    return end_trace(comm, host or socket.gethostname(), process)


def _progress_line(path: str) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        print(f"\rcubescale: writing {path}: metric {done}/{total}", end="", file=sys.stderr, flush=True)

    return show


# The measurement's own functions (region's __enter__ and wrappers, counters, stop) are no
# regions; nor are the bindings, seen as C calls with c_calls=True.
_measure.ignore_file(__file__)
for _builtin in vars(_measure).values():
    if type(_builtin).__name__ == "builtin_function_or_method":
        _measure.ignore_builtin(_builtin)
_ignore(threading.setprofile.__code__)  # called by stop() while the hook still runs
