"""Memory of loading a compressed (ZCUBEX) metric: peak resident memory above the matrix the
load must produce, for each given build, side by side in one run.

    python3 benchmarks/zcubex_memory.py --build installed --build build-dev
    python3 benchmarks/zcubex_memory.py --cnodes 2000 --locations 65536

A report of one DOUBLE metric (--cnodes rows x --locations columns, values that compress
about 10x, as counters do) is written once with ``compress=True``. Each build then opens it in
a fresh process and loads the metric (``values(..., inclusive=None)``: the stored rows, no
conversion); the child reports its peak resident memory (``VmHWM``) above what it held
after opening, and the time of the load. The limit is the matrix itself: a load cannot hold
less. ``installed`` is the pip-installed package; a directory is a CMake build tree of the
extension (``CUBESCALE_DEV_BUILD``, with this checkout's ``python/``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def write_report(path: str, cnodes: int, locations: int) -> int:
    """Writes the compressed report; returns the matrix bytes."""
    import numpy as np

    import cubescale
    from cubescale.systree import SystemTree

    threads = 4
    tree = SystemTree.from_shape(f"node:{max(1, locations // (threads * 64))} process:64 thread:{threads}")
    builder = cubescale.ReportBuilder(tree)
    builder.add_metric("time", unit="sec")
    region = builder.add_region("main")
    root = builder.add_cnode(region)
    for c in range(1, cnodes):
        builder.add_cnode(builder.add_region(f"r{c}"), parent=root)
    report = builder.build()
    rows, columns = report.shape
    # Counter-like values: a few distinct magnitudes per row, so zlib finds repeats.
    values = (np.arange(rows, dtype=np.float64)[:, None] * 0.5 + (np.arange(columns) % 16)[None, :]).astype(np.float64)
    report.set_values("time", values)
    cubescale.write(report, path, compress=True)
    return values.nbytes


def peak_resident() -> int:
    """This process's peak resident bytes (VmHWM: unlike ru_maxrss, not inherited from the
    parent that forked it)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(path: str) -> None:
    import cubescale

    report = cubescale.open(path)
    before = peak_resident()
    start = time.perf_counter()
    values = report.values("time", inclusive=None)
    seconds = time.perf_counter() - start
    peak = peak_resident()
    print(json.dumps({"extra_peak": peak - before, "matrix": values.nbytes, "seconds": seconds}))


def measure(build: str, path: str) -> dict:
    env = dict(os.environ)
    if build == "installed":
        env.pop("CUBESCALE_DEV_BUILD", None)
        env.pop("PYTHONPATH", None)
        cwd = tempfile.gettempdir()  # not this checkout: the installed package is imported
    else:
        env["CUBESCALE_DEV_BUILD"] = os.path.abspath(build)
        env["PYTHONPATH"] = os.path.join(HERE, "..", "python")
        cwd = HERE
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path], env=env, cwd=cwd,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cnodes", type=int, default=1000)
    parser.add_argument("--locations", type=int, default=65536)
    parser.add_argument("--build", action="append", help="'installed' or a CMake build tree (repeatable)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    builds = args.build or ["installed"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "compressed.cubex")
        matrix = write_report(path, args.cnodes, args.locations)
        size = os.path.getsize(path)
        print(f"{args.cnodes} x {args.locations} doubles: matrix {matrix / 2**20:.0f} MiB, "
              f"file {size / 2**20:.0f} MiB (ZCUBEX)")
        print("| build | load s | peak above the open report MiB | of it above the matrix MiB | peak / matrix |")
        print("|---|---:|---:|---:|---:|")
        for build in builds:
            r = measure(build, path)
            print(f"| {build} | {r['seconds']:.2f} | {r['extra_peak'] / 2**20:.0f} | "
                  f"{(r['extra_peak'] - r['matrix']) / 2**20:.0f} | {r['extra_peak'] / r['matrix']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
