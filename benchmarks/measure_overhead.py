"""What measuring costs, in one run of the same programs: ns per enter/exit pair for the C++
recorder (RAII scope and C API, benchmarks/measure_overhead.cpp built as
cubescale_measure_bench in a dev build), Python manual regions, and the automatic mode
(every Python call through the C-level hook), against cProfile, pyinstrument (if installed)
and no profiler; and the recorder's memory per thread as the number of calls grows.

    python benchmarks/measure_overhead.py [--calls 1000000]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import shutil
import subprocess
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
    print("\nrecorder memory (all threads) vs calls: " +
          ", ".join(f"{calls_:,} calls: {bytes_:,} B" for calls_, bytes_ in memory([10_000, 100_000, 1_000_000])))


if __name__ == "__main__":
    main()
