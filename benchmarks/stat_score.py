"""``cubescale.stat`` and ``cubescale.score`` on a large report, against loading what they read.

    python3 benchmarks/stat_score.py                                 # 65,536 locations x 100 call paths
    python3 benchmarks/stat_score.py --locations 16384 --cnodes 50   # a quick run

One report of --cnodes call paths (a main with --cnodes - 1 regions below it, a tenth of them MPI
collectives) x --locations locations (4 threads per process) with ``time`` (DOUBLE, exclusive)
and ``visits`` (UINT64, inclusive) is written once with ``cubescale.ReportBuilder``. Tasks run
round robin --repeat times, each on a freshly opened report; the table shows the best time:

* load: open the report and read the exclusive ``visits`` and ``time`` matrices (the baseline:
  what every use of the values costs);
* stat: ``cubescale.stat(report, "time", top=10)`` (reads time exclusive and inclusive and the
  visits, sums call paths into regions, statistics across locations);
* score: ``cubescale.score(report)`` (reads visits and time, estimates per type, region and process).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def write_input(path: str, cnodes: int, locations: int) -> None:
    """Writes the report."""
    import numpy as np

    import cubescale
    from cubescale.systree import SystemTree

    threads = 4
    processes = max(1, locations // threads)
    nodes = max(1, processes // 64)
    tree = SystemTree.from_shape(f"node:{nodes} process:{processes // nodes} thread:{threads}")
    b = cubescale.ReportBuilder(tree)
    b.add_metric("time", unit="sec")
    b.add_metric("visits", unit="occ", dtype="UINT64", kind="INCLUSIVE")
    root = b.add_cnode(b.add_region("main"))
    for c in range(1, cnodes):
        mpi = c % 10 == 0
        region = b.add_region("MPI_Allreduce" if mpi and c == 10 else f"MPI_Bcast{c}" if mpi else f"r{c}",
                              paradigm="mpi" if mpi else "user")
        b.add_cnode(region, parent=root)
    r = b.build()
    rng = np.random.default_rng(0)
    r.set_values("time", rng.random(r.shape))
    visits = rng.integers(1, 1000, r.shape, dtype=np.uint64)
    visits[0] += visits[1:].sum(axis=0)  # inclusive: the root includes its children
    r.set_values("visits", visits)
    cubescale.write(r, path)


def run(task: str, path: str) -> float:
    """Seconds of one task on a freshly opened report."""
    import cubescale

    start = time.perf_counter()
    report = cubescale.open(path)
    if task == "load":
        report.values("visits", inclusive=False)
        report.values("time", inclusive=False)
    elif task == "stat":
        cubescale.stat(report, "time", top=10)
    else:
        cubescale.score(report)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locations", type=int, default=65536)
    parser.add_argument("--cnodes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "big.cubex")
        write_input(path, args.cnodes, args.locations)
        best = {task: float("inf") for task in ("load", "stat", "score")}
        for _ in range(args.repeat):
            for task in best:
                best[task] = min(best[task], run(task, path))
        size = os.path.getsize(path)
    print(f"{args.cnodes} call paths x {args.locations} locations, 2 metrics, {size / 1e6:.0f} MB; "
          f"best of {args.repeat}")
    print("| task | seconds | vs load |")
    print("|---|---:|---:|")
    for task, seconds in best.items():
        print(f"| {task} | {seconds:.3f} | {seconds / best['load']:.2f}x |")


if __name__ == "__main__":
    main()
