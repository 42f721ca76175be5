"""What measuring costs, in one run of the same programs: ns per enter/exit pair for the C++
recorder (RAII scope and C API, benchmarks/measure_overhead.cpp built as
cubescale_measure_bench in a dev build), Python manual regions, and the automatic mode
(every Python call through the C-level hook), against cProfile, pyinstrument (if installed)
and no profiler; and the recorder's memory per thread as the number of calls grows. Trace
mode (measure.start(trace=DIR)): ns per call on top of the automatic mode's profile, events
written per second, bytes per event on disk, and the process's memory with a 256 KiB buffer
as the number of calls grows (flat: the buffer is flushed to the event file when full).

    python benchmarks/measure_overhead.py [--calls 1000000]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import shutil
import subprocess
import tempfile
import time

from cubescale import measure
from cubescale._core import measure as _measure


def leaf():
    return None


def calls(n: int) -> None:
    for _ in range(n):
        leaf()


def regions(n: int) -> None:
    r = measure.region("leaf")
    for _ in range(n):
        with r:
            pass


def empty_loop(n: int) -> None:
    for _ in range(n):
        pass


def best(function, n: int, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function(n)
        times.append(time.perf_counter() - start)
    return min(times)


def with_auto(n: int) -> float:
    measure.start(auto=True)
    try:
        return best(calls, n)
    finally:
        measure.stop()


def with_trace(n: int, buffer: int = 1 << 20) -> tuple[float, int, int]:
    """Seconds for n calls (best of 5) while tracing, and the archive's events and bytes."""
    import cubescale.trace

    folder = tempfile.mkdtemp()
    measure.start(auto=True, trace=os.path.join(folder, "trace"), trace_buffer=buffer)
    try:
        seconds = best(calls, n)
    finally:
        measure.stop()
    anchor = measure.write_trace()
    events = int(cubescale.trace.open(anchor).event_counts().to_numpy().sum())
    size = sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(os.path.dirname(anchor))
               for f in files if f.endswith(".evt"))
    shutil.rmtree(folder)
    return seconds, events, size


def rss() -> int:
    """This process's resident memory now, bytes."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


def trace_memory(sizes: list[int], buffer: int = 256 * 1024) -> list[tuple[int, int]]:
    """Growth of the resident memory while tracing n calls with a small buffer."""
    out = []
    for n in sizes:
        folder = tempfile.mkdtemp()
        measure.start(auto=True, trace=os.path.join(folder, "trace"), trace_buffer=buffer)
        calls(1000)  # the first chunk and call path exist
        before = rss()
        calls(n)
        grown = rss() - before
        measure.stop()
        measure.write_trace()
        shutil.rmtree(folder)
        out.append((n, grown))
    return out


def with_cprofile(n: int) -> float:
    p = cProfile.Profile()
    p.enable()
    try:
        return best(calls, n)
    finally:
        p.disable()


def with_pyinstrument(n: int) -> float | None:
    try:
        import pyinstrument
    except ImportError:
        return None
    p = pyinstrument.Profiler()
    p.start()
    try:
        return best(calls, n)
    finally:
        p.stop()


def cpp(n: int) -> dict | None:
    build = os.environ.get("CUBESCALE_DEV_BUILD", "build-dev")
    exe = shutil.which("cubescale_measure_bench", path=build)
    if exe is None:
        return None
    return json.loads(subprocess.run([exe, str(n * 10)], capture_output=True, text=True, check=True).stdout)


def memory(sizes: list[int]) -> list[tuple[int, int]]:
    out = []
    for n in sizes:
        measure.start(auto=True)
        calls(n)
        measure.stop()
        out.append((n, _measure.memory_bytes()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    n = parser.parse_args().calls
    plain = best(calls, n)
    loop = best(empty_loop, n)
    rows = [("no profiler (call + loop)", plain, 0.0)]
    measure.start()
    manual = best(regions, n)
    measure.stop()
    rows.append(("cubescale manual region (with ... : pass)", manual, (manual - loop) / n * 1e9))
    auto = with_auto(n)
    rows.append(("cubescale automatic mode", auto, (auto - plain) / n * 1e9))
    traced, events, size = with_trace(n)
    rows.append(("cubescale automatic mode + trace", traced, (traced - plain) / n * 1e9))
    cprof = with_cprofile(n)
    rows.append(("cProfile", cprof, (cprof - plain) / n * 1e9))
    pyi = with_pyinstrument(n)
    if pyi is not None:
        rows.append(("pyinstrument (sampling)", pyi, (pyi - plain) / n * 1e9))
    native = cpp(n)
    print(f"{n} calls of an empty Python function; best of 5")
    print("| what | seconds | overhead ns per call (enter/exit pair) |")
    print("|---|---:|---:|")
    for name, seconds, ns in rows:
        print(f"| {name} | {seconds:.3f} | {ns:.0f} |")
    if native:
        print(f"| C++ recorder, RAII scope ({native['calls']} pairs) | - | {native['scope_ns']:.1f} |")
        print(f"| C++ recorder, C API | - | {native['c_api_ns']:.1f} |")
    else:
        print("| C++ recorder | (build cubescale_measure_bench in a dev build) | - |")
    print(f"\nautomatic mode vs cProfile: {(cprof - plain) / max(auto - plain, 1e-12):.2f}x less overhead")
    print(f"trace mode vs profile mode: {(traced - plain) / max(auto - plain, 1e-12):.2f}x the cost per call; "
          f"{events:,} events (5 runs of {n:,} calls: {10 * n:,} Enter/Leave) at {2 * n / traced / 1e6:.1f} M events/s, "
          f"{size / events:.2f} bytes per event on disk")
    print("trace mode, 256 KiB buffer, resident memory growth vs calls: " +
          ", ".join(f"{calls_:,} calls: {bytes_:,} B" for calls_, bytes_ in trace_memory([100_000, 1_000_000])))
    print("\nrecorder memory (all threads) vs calls: " +
          ", ".join(f"{calls_:,} calls: {bytes_:,} B" for calls_, bytes_ in memory([10_000, 100_000, 1_000_000])))


if __name__ == "__main__":
    main()
