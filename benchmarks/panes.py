"""Benchmark: Cube's panes on a generated 1M-location report (issue 13, item 6).

The report: 100 call paths x 1,048,576 locations (8,192 nodes x 32 processes x 4 threads) x
2 metrics, generated and written by ``cubex_read.write_large_report``: 'time' (DOUBLE, stored
INCLUSIVE) and 'visits' (UINT64, stored EXCLUSIVE), by default with every row stored
(``--visit-rows 1``). Warm page cache; one run prints:

* limit     -- reading the bytes of every metric's ``N.data`` member once (``f.seek`` +
               ``f.read`` into fresh memory, as cubex_read.py's limit reads a file). The
               metric pane shows every metric's total, so a first pane query must read all
               metrics: this is the limit its goal is measured against. Reading the
               selected metric's member alone is printed too;
* open      -- ``cubescale.open(path)`` (definitions only);
* first     -- ``report.panes("time", cnode=5)`` on a report just opened (best of
               ``--repeat``, each on a fresh report): loads both metrics, computes the panes;
* load_all + pass -- the same split in two: loading every metric, then the first query on
               a loaded report (the pane computation alone);
* later     -- then queries on the same report for other call paths, expansions and the
               other metric: the slowest and the median (load_all, pass and each later
               query: best of ``--repeat`` fresh reports);
* memory    -- how far the peak RSS of the first query rose above the RSS after it (the
               loaded metrics stay; anything above them was a temporary copy).

Run (repository root; with an installed package, drop the two variables)::

    CUBESCALE_DEV_BUILD=build-dev PYTHONPATH=python python3 benchmarks/panes.py

Benchmarks are not tests: they print a table and exit 0.
"""

from __future__ import annotations

import argparse
import gc
import mmap
import os
import statistics
import sys
import tempfile
import time

import cubescale

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubex_read import best_of, tar_members, write_large_report  # noqa: E402 (after the path)

LATER = [  # (metric, cnode, cnode_expanded, metric_expanded): call paths, kinds, the other metric
    ("time", 7, False, False), ("time", 0, False, False), ("time", 99, False, False),
    ("time", 7, True, False), ("time", 0, True, False), ("time", 50, False, True),
    ("visits", 0, False, False), ("visits", 5, True, False),
]


def data_members(path: str, metric_ids: list[int] | None = None) -> list[tuple[int, int]]:
    """(offset, size) of the ``N.data`` members (all metrics, or those ids)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        members = tar_members(data)
    return [(offset, size) for name, offset, size in members
            if name.endswith(".data") and (metric_ids is None or int(name.split(".")[0]) in metric_ids)]


def read_members(path: str, members: list[tuple[int, int]]) -> None:
    with open(path, "rb") as f:
        for offset, size in members:
            f.seek(offset)
            f.read(size)


def rss(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # VmHWM := VmRSS (Linux)
        return True
    except OSError:
        return False


def first_query(path: str) -> tuple[float, float]:
    """Time of the first pane query on a report just opened, and how far its peak RSS rose
    above the RSS after it (0 if the peak cannot be reset)."""
    report = cubescale.open(path)
    gc.collect()
    measured = reset_peak()
    start = time.perf_counter()
    report.panes("time", cnode=5)
    elapsed = time.perf_counter() - start
    extra = rss("VmHWM") - rss("VmRSS") if measured else 0
    del report
    gc.collect()
    return elapsed, extra


def once(fn, *args, **kwargs) -> float:
    """Time of one call, garbage collector off (as best_of)."""
    gc.disable()
    try:
        start = time.perf_counter()
        fn(*args, **kwargs)
        return time.perf_counter() - start
    finally:
        gc.enable()


def loaded_queries(path: str, repeat: int) -> tuple[float, float, list[float]]:
    """On a fresh report each of `repeat` times: load_all, then the first pane query (the
    panes alone), then each of LATER once; the best time of each step."""
    runs = []
    for _ in range(repeat):
        report = cubescale.open(path)
        times = [once(report.load_all), once(report.panes, "time", cnode=5)]
        for metric, cnode, cnode_expanded, metric_expanded in LATER:
            times.append(once(report.panes, metric, cnode=cnode, cnode_expanded=cnode_expanded,
                              metric_expanded=metric_expanded))
        runs.append(times)
        del report
        gc.collect()
    best = [min(run[k] for run in runs) for k in range(len(runs[0]))]
    return best[0], best[1], best[2:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", help="use this report if it exists, else generate it there (and keep it)")
    parser.add_argument("--cnodes", type=int, default=100)
    parser.add_argument("--nodes", type=int, default=8192, help="nodes x processes x threads = locations")
    parser.add_argument("--processes", type=int, default=32)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--visit-rows", type=float, default=1.0, help="fraction of the call paths with visits")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the limit and of the first query (best counts)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = args.report or os.path.join(tmp, "panes.cubex")
        if not os.path.exists(path):
            start = time.perf_counter()
            write_large_report(path, args.cnodes, args.nodes, args.processes, args.threads, args.visit_rows)
            print(f"generated {path} in {time.perf_counter() - start:.1f} s")
            gc.collect()
        report = cubescale.open(path)
        time_id = report.metric("time").index  # our writer numbers metric members by index
        all_members = data_members(path)
        time_members = data_members(path, [time_id])
        print(f"report: {report!r}, {os.path.getsize(path) / 1e9:.2f} GB; data members "
              f"{sum(s for _, s in all_members) / 1e9:.2f} GB ('time' {sum(s for _, s in time_members) / 1e9:.2f} GB)")
        del report

        read_members(path, all_members)  # warm the page cache
        limit = best_of(args.repeat, lambda: read_members(path, all_members))
        limit_time = best_of(args.repeat, lambda: read_members(path, time_members))
        opened = best_of(args.repeat, lambda: cubescale.open(path))
        firsts = [first_query(path) for _ in range(args.repeat)]
        first, extra = min(firsts)

        load, passed, later = loaded_queries(path, args.repeat)

    ms = 1e3
    print()
    print(f"| step | time | / limit ({limit * ms:.0f} ms) |")
    print("|---|---:|---:|")
    print(f"| limit: read every metric's data member once | {limit * ms:.0f} ms | 1.00x |")
    print(f"| (read the 'time' member alone) | {limit_time * ms:.0f} ms | {limit_time / limit:.2f}x |")
    print(f"| open | {opened * ms:.0f} ms | {opened / limit:.2f}x |")
    print(f"| **first pane query** (`panes(\"time\", cnode=5)` just opened, best of {args.repeat}) | "
          f"**{first * ms:.0f} ms** | **{first / limit:.2f}x** |")
    print(f"| split: load_all | {load * ms:.0f} ms | {load / limit:.2f}x |")
    print(f"| split: then the first query on the loaded report | {passed * ms:.0f} ms | {passed / limit:.2f}x |")
    print(f"| **later queries**, slowest of {len(later)} | **{max(later) * ms:.1f} ms** | **{max(later) / limit:.3f}x** |")
    print(f"| later queries, median | {statistics.median(later) * ms:.1f} ms | {statistics.median(later) / limit:.3f}x |")
    print(f"| first query's peak RSS above the RSS after it (loaded metrics kept) | {extra / 2**20:.0f} MiB | |")
    print()
    print("later queries (metric, cnode, cnode_expanded, metric_expanded): " +
          ", ".join(f"{m} {c}{' x' if ce else ''}{' m' if me else ''} {t * ms:.1f} ms"
                    for (m, c, ce, me), t in zip(LATER, later)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
