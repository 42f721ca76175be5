"""
The measurement runtime: per-thread call-path recording, manual regions, the profiling hook.
"""

from __future__ import annotations
import cubescale._core.profile
import typing

__all__: list[str] = [
    "add",
    "add_bytes",
    "close_all",
    "counter",
    "enter",
    "epoch",
    "exit",
    "glob_match",
    "ignore_builtin",
    "ignore_code",
    "ignore_file",
    "memory_bytes",
    "name_thread",
    "region",
    "reset",
    "start_hook",
    "stop_hook",
    "thread_count",
    "to_profile",
]

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

def close_all() -> None:
    """
    Closes every thread's open regions now (finalization; no thread may measure).
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

def glob_match(pattern: str, text: str) -> bool:
    """
    Shell-style pattern match as the filters use it.
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

def to_profile(
    program: typing.SupportsInt | typing.SupportsIndex | None = None,
) -> cubescale._core.profile.LocalProfile:
    """
    Every thread's call tree as one local profile (_core.profile.LocalProfile); with `program`, every other root goes below that region (one root).
    """
