"""Paper 003's compression study with generated profiles: 7 metrics, 100 call paths (90 % in
parallel regions, every metric with a value wherever a thread visited), 128 processes,
2 .. 2048 threads per process. For every thread count and
strategy: the file size (uncompressed and, up to --compress-up-to threads, zlib-compressed
ZCUBEX), the compression ratio (unaggregated size / aggregated size, as the paper defines it)
next to the paper's, and the aggregation time per GB of input next to the time to read the
unaggregated file (open + load every metric, warm page cache).

    python benchmarks/thread_aggregation.py                      # 2 .. 2048 threads
    python benchmarks/thread_aggregation.py --threads 2 16 128   # quicker
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import cubescale
from cubescale import threads
from cubescale.systree import SystemTree

CNODES, PARALLEL_SHARE, PROCESSES = 100, 0.9, 128
# Paper 003, section 5: compression ratio = threads / this factor.
PAPER_FACTOR = {"sum": 1.36, "set": 4.2, "key": 4.6, "calltree": 2.3}


def generated_report(thread_count: int, seed: int = 3) -> cubescale.Report:
    """128 processes x ``thread_count`` threads; the first 10 call paths run on the master only
    (main, MPI), the other 90 in parallel regions on every thread; time INCLUSIVE as Score-P."""
    rng = np.random.default_rng(seed)
    b = cubescale.ReportBuilder(SystemTree.from_shape(f"node:16 process:8 thread:{thread_count}"))
    b.add_metric("visits", dtype="UINT64", unit="occ")
    b.add_metric("time", unit="sec", kind="INCLUSIVE")
    b.add_metric("min_time", dtype="MINDOUBLE", unit="sec")
    b.add_metric("max_time", dtype="MAXDOUBLE", unit="sec")
    b.add_metric("bytes_sent", dtype="UINT64", unit="bytes")
    b.add_metric("bytes_received", dtype="UINT64", unit="bytes")
    b.add_metric("PAPI_TOT_INS", dtype="UINT64", unit="#")
    serial = int(CNODES * (1 - PARALLEL_SHARE))
    main = b.add_cnode(b.add_region("main"))
    for i in range(1, serial):
        b.add_cnode(b.add_region(f"MPI_call_{i}", paradigm="mpi", role="point2point"), parent=main)
    parallel = b.add_cnode(b.add_region("!$omp parallel @app.c:10", paradigm="openmp", role="parallel"), parent=main)
    for i in range(CNODES - serial - 1):
        role = "implicit barrier" if i % 10 == 9 else "loop"
        b.add_cnode(b.add_region(f"!$omp {role} @app.c:{20 + i}", paradigm="openmp", role=role), parent=parallel)
    report = b.build()
    shape = report.shape
    on = np.zeros(shape, dtype=bool)
    on[:serial, ::thread_count] = True  # master-only call paths
    on[serial:, :] = True
    visits = np.where(on, rng.integers(1, 50, size=(CNODES, 1)), 0).astype(np.uint64)
    base = rng.uniform(1e-4, 1.0, size=(CNODES, 1))
    exclusive = np.where(on, base * rng.uniform(0.9, 1.1, size=shape), 0.0)
    report.set_values("visits", visits)
    report.set_values("time", _inclusive(report, exclusive))
    per_visit = np.divide(exclusive, np.maximum(visits, 1))
    report.set_values("min_time", per_visit * 0.8)
    report.set_values("max_time", per_visit * 1.3)
    # As the paper's generator: every metric has a value wherever a thread visited (here
    # bytes of the data each call path moved), so no row of the unaggregated file is empty.
    sent = np.where(on, rng.integers(1, 1 << 20, size=(CNODES, 1)) * rng.integers(1, 4, size=shape), 0)
    report.set_values("bytes_sent", sent.astype(np.uint64))
    report.set_values("bytes_received", (sent[::-1] // 2).astype(np.uint64))
    report.set_values("PAPI_TOT_INS", np.where(on, (exclusive * 2e9).astype(np.uint64), 0).astype(np.uint64))
    return report


def _inclusive(report, exclusive: np.ndarray) -> np.ndarray:
    out = exclusive.copy()
    parents = report.cnode_parents
    for c in range(len(parents) - 1, 0, -1):  # 100 rows: the loop runs over call paths only
        out[parents[c]] += out[c]
    return out


def _read_seconds(path: str) -> float:
    start = time.perf_counter()
    r = cubescale.open(path)
    for m in r.metrics:
        r.values(m, inclusive=None)
    return time.perf_counter() - start


def measure(thread_count: int, compress: bool, tmp: str) -> list[dict]:
    report = generated_report(thread_count)
    original = os.path.join(tmp, f"t{thread_count}.cubex")
    cubescale.write(report, original)
    read = min(_read_seconds(original) for _ in range(2))
    sizes = {"none": (os.path.getsize(original), None)}
    if compress:
        z = os.path.join(tmp, f"t{thread_count}.z.cubex")
        cubescale.write(report, z, compress=True)
        sizes["none"] = (sizes["none"][0], os.path.getsize(z))
        os.remove(z)
    input_bytes = sum(np.asarray(report.values(m, inclusive=None)).nbytes for m in report.metrics)
    rows = []
    for strategy in threads.STRATEGIES:
        start = time.perf_counter()
        out = threads.aggregate(report, strategy)
        seconds = time.perf_counter() - start
        path = os.path.join(tmp, f"t{thread_count}.{strategy}.cubex")
        cubescale.write(out, path)
        size = os.path.getsize(path)
        zsize = None
        if compress:
            cubescale.write(out, path, compress=True)
            zsize = os.path.getsize(path)
        os.remove(path)
        rows.append({"threads": thread_count, "strategy": strategy, "locations": out.shape[1], "bytes": size,
                     "ratio": sizes["none"][0] / size, "zratio": sizes["none"][1] / zsize if zsize else None,
                     "paper": thread_count / PAPER_FACTOR[strategy] if strategy in PAPER_FACTOR else None,
                     "seconds": seconds, "gb_per_s": input_bytes / seconds / 1e9, "read_seconds": read,
                     "input_bytes": input_bytes, "original_bytes": sizes["none"][0]})
    os.remove(original)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048])
    parser.add_argument("--compress-up-to", type=int, default=256,
                        help="also write zlib-compressed files up to this many threads (default 256)")
    args = parser.parse_args()
    print(f"{'threads':>7} {'strategy':>8} {'locs':>7} {'file':>11} {'ratio':>8} {'zlib ratio':>10} "
          f"{'paper':>8} {'aggregate':>10} {'GB/s':>6} {'read input':>10} {'agg/read':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for t in args.threads:
            for r in measure(t, t <= args.compress_up_to, tmp):
                z = f"{r['zratio']:10.1f}" if r["zratio"] else f"{'-':>10}"
                paper = f"{r['paper']:8.1f}" if r["paper"] else f"{'-':>8}"
                print(f"{r['threads']:7d} {r['strategy']:>8} {r['locations']:7d} {r['bytes']:11d} {r['ratio']:8.1f} {z} "
                      f"{paper} {r['seconds']:9.3f}s {r['gb_per_s']:6.2f} {r['read_seconds']:9.3f}s "
                      f"{r['seconds'] / r['read_seconds']:8.2f}", flush=True)


if __name__ == "__main__":
    main()
