"""Report algebra on large reports: diff and mean of two synthetic reports against loading them.

    python3 benchmarks/algebra.py                                # 1,048,576 locations x 100 call paths
    python3 benchmarks/algebra.py --locations 65536 --cnodes 50  # a quick run

Two reports of --cnodes call paths x --locations locations with two metrics each (time: DOUBLE,
exclusive; visits: UINT64, inclusive) are written once with ``cubescale.ReportBuilder`` and
``cubescale.write``; the second one's last tenth of call paths are other regions, so the call
trees must be unified (the result has more call paths than either input). Each measurement
runs in a fresh process that first reads the files untimed (so that every task starts from the
page cache, which other processes on a shared machine may have evicted); the
tasks run round robin --repeat times (a busy machine slows a whole round alike) and the table
shows each task's best time and largest peak:

* load: open both reports and load every metric (what any use of them costs);
* A written again: ``cubescale.write`` of the first input, read one metric at a time (what the
  writer costs for a result of this size);
* diff / mean to a file: the command line's way (``cubescale diff A B -o OUT``): inputs read
  and the result computed and written one metric at a time;
* diff / mean in memory: every metric of the result computed (``values``), nothing written.

CPU seconds (user + system, all threads: ``time.process_time``) are shown beside the wall
time: on a shared machine they vary less, since waiting for a core does not count.

Peak memory is the child's peak resident set (VmHWM) above what it held after opening the
reports (definitions only), against the issue's limit: three times the inputs' largest metric.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def write_inputs(folder: str, cnodes: int, locations: int) -> list[str]:
    """Writes the two reports; returns their paths."""
    import numpy as np

    import cubescale
    from cubescale.systree import SystemTree

    threads = 4
    processes = max(1, locations // threads)
    nodes = max(1, processes // 64)
    tree = SystemTree.from_shape(f"node:{nodes} process:{processes // nodes} thread:{threads}")
    paths = []
    for k in range(2):
        b = cubescale.ReportBuilder(tree)
        b.add_metric("time", unit="sec")
        b.add_metric("visits", unit="occ", dtype="UINT64", kind="INCLUSIVE")
        root = b.add_cnode(b.add_region("main"))
        other = cnodes - cnodes // 10  # the second report's last tenth are other regions
        for c in range(1, cnodes):
            name = f"r{c}" if k == 0 or c < other else f"s{c}"
            b.add_cnode(b.add_region(name), parent=root)
        r = b.build()
        rng = np.random.default_rng(k)
        r.set_values("time", rng.random(r.shape))
        visits = rng.integers(1, 1000, r.shape, dtype=np.uint64)
        visits[0] += visits[1:].sum(axis=0)  # inclusive: the root includes its children
        r.set_values("visits", visits)
        del visits
        path = os.path.join(folder, f"in{k}.cubex")
        cubescale.write(r, path)
        paths.append(path)
        del r
    return paths


def peak_resident() -> int:
    """This process's peak resident bytes (VmHWM, not inherited from the parent)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def child(task: str, paths: list[str], out: str) -> None:
    """One measurement in this (fresh) process; prints a JSON line."""
    import cubescale
    from cubescale import algebra

    chunk = bytearray(1 << 20)  # small: it must not raise the peak that the baseline takes
    for p in paths:  # into the page cache (other processes on a shared machine evict it): a warm read is timed
        with open(p, "rb", buffering=0) as f:
            while f.readinto(chunk):
                pass
    reports = [cubescale.open(p) for p in paths]
    base = peak_resident()
    start, cpu_start = time.perf_counter(), time.process_time()
    if task == "load":
        for r in reports:
            for m in r.metrics:
                r.values(m, inclusive=None)
    elif task == "copy-file":  # the writer alone: the first input written again
        algebra.stream_values(reports[0])
        cubescale.write(reports[0], out)
    else:
        op, where = task.split("-")
        for r in reports:
            algebra.stream_values(r)
        result = cubescale.diff(*reports) if op == "diff" else cubescale.mean(*reports)
        algebra.stream_values(result)
        if where == "file":
            cubescale.write(result, out)
        else:
            for m in result.metrics:
                result.values(m, inclusive=None)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak": peak_resident() - base}))


def measure(task: str, paths: list[str], out: str) -> dict:
    """One run of `task` in a fresh process: its seconds and peak bytes."""
    proc = subprocess.run([sys.executable, __file__, "--child", task, "--out", out, *paths],
                          check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--locations", type=int, default=1 << 20)
    p.add_argument("--cnodes", type=int, default=100)
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement (best time, largest peak)")
    p.add_argument("--child")
    p.add_argument("--out")
    p.add_argument("paths", nargs="*")
    args = p.parse_args()
    if args.child:
        child(args.child, args.paths, args.out)
        return
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR", "/tmp")) as folder:
        start = time.perf_counter()
        paths = write_inputs(folder, args.cnodes, args.locations)
        written = time.perf_counter() - start
        out = os.path.join(folder, "out.cubex")
        metric_bytes = args.cnodes * args.locations * 8
        sizes = sum(os.path.getsize(p) for p in paths)
        print(f"two reports of {args.cnodes} call paths x {args.locations:,} locations x 2 metrics: "
              f"{sizes / 1e9:.2f} GB on disk, largest metric {metric_bytes / 1e6:.0f} MB, written in {written:.1f} s\n")
        tasks = [("load", "load both (every metric)"), ("copy-file", "A read and written again (the writer alone)"),
                 ("diff-file", "diff A B, written"),
                 ("mean-file", "mean A B, written"), ("diff-memory", "diff A B, computed"),
                 ("mean-memory", "mean A B, computed")]
        measure("load", paths, out)  # page cache
        # Round robin: a busy machine slows every task of a round alike; best of the rounds.
        runs: dict[str, list[dict]] = {task: [] for task, _ in tasks}
        for _ in range(args.repeat):
            for task, _ in tasks:
                runs[task].append(measure(task, paths, out))
        best = {task: {"seconds": min(r["seconds"] for r in rs), "cpu": min(r["cpu"] for r in rs),
                       "peak": max(r["peak"] for r in rs)} for task, rs in runs.items()}
        load, load_cpu = best["load"]["seconds"], best["load"]["cpu"]
        print("| task | seconds | × load | CPU s | CPU × load | peak MB above open | × largest metric |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for task, label in tasks:
            r = best[task]
            print(f"| {label} | {r['seconds']:.2f} | {r['seconds'] / load:.2f} | {r['cpu']:.2f} | "
                  f"{r['cpu'] / load_cpu:.2f} | {r['peak'] / 1e6:.0f} | {r['peak'] / metric_bytes:.2f} |")


if __name__ == "__main__":
    main()
