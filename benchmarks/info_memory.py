"""Peak memory and time of ``cubescale info`` (or another command that reads a report:
``--command "top {report} -m m0"``) on a large report, this installation against another one
(``--baseline``: its interpreter), side by side in one run, alternating ``--rounds`` times
(issue: a reviewer's ``info`` held every metric's matrix at once; ``top`` several copies of one).

    python benchmarks/info_memory.py [--cnodes 2000] [--locations 2000] [--metrics 10] [--threads 4]
                                     [--rounds 3] [--baseline OTHER_PYTHON] [--command TEMPLATE]

The report (``--metrics`` DOUBLE metrics of ``--cnodes`` x ``--locations`` random values, one
of them INCLUSIVE, written by this installation's writer) is written once; each run is a fresh
process that runs the command on it and reports its peak resident memory (``VmHWM``,
of that process alone) and its wall time. The limit below which no ``info`` can go: one
metric's matrix (``cnodes * locations * 8`` bytes) over what the command holds on a tiny report.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

# Runs `cubescale ARGS` quietly and prints its peak resident memory (KiB) on stderr.
PEAK = """
import contextlib, os, sys
from cubescale.cli import main
with open(os.devnull, "w") as out, contextlib.redirect_stdout(out):
    status = main(sys.argv[1:])
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")), file=sys.stderr)
sys.exit(status)
"""


def write_report(path: str, cnodes: int, locations: int, metrics: int, threads: int = 4) -> None:
    """A report of ``metrics`` DOUBLE metrics over ``cnodes`` call paths (a root and its
    children) and ``locations`` threads (``locations / threads`` processes of ``threads``)."""
    import numpy as np

    import cubescale
    from cubescale.systree import SystemTree

    b = cubescale.ReportBuilder(SystemTree.from_shape(f"node:1 process:{locations // threads} thread:{threads}"))
    for i in range(metrics):
        b.add_metric(f"m{i}", unit="sec", kind="INCLUSIVE" if i == 1 else "EXCLUSIVE")
    regions = [b.add_region(f"r{i}") for i in range(50)]
    root = b.add_cnode(regions[0])
    for i in range(1, cnodes):
        b.add_cnode(regions[i % 50], parent=root)
    report = b.build()
    rng = np.random.default_rng(1)
    for i in range(metrics):
        values = rng.random((cnodes, locations))
        if i == 1:  # INCLUSIVE: the root holds its children's sums
            values[0] = values.sum(axis=0)
        report.set_values(f"m{i}", values)
    cubescale.write(report, path)


def peak(python: str, report: str, command: str = "info {report}") -> tuple[float, float]:
    """(peak resident MiB, wall seconds) of ``cubescale COMMAND`` (``{report}`` replaced by
    ``report``) run by ``python``."""
    start = time.perf_counter()
    words = [report if word == "{report}" else word for word in command.split()]
    done = subprocess.run([python, "-c", PEAK, *words], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{python}: {command} failed: {done.stderr.strip()[-500:]}")
    return int(done.stderr.split()[-1]) / 1024, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cnodes", type=int, default=2000)
    parser.add_argument("--locations", type=int, default=2000)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="interpreter of another cubescale installation")
    parser.add_argument("--threads", type=int, default=4, help="threads per process (default 4)")
    parser.add_argument("--command", default="info {report}",
                        help="the cubescale command measured, {report} for the report (default: info {report})")
    args = parser.parse_args()
    folder = tempfile.mkdtemp()
    big, small = os.path.join(folder, "big.cubex"), os.path.join(folder, "small.cubex")
    write_report(big, args.cnodes, args.locations, args.metrics, args.threads)
    write_report(small, 10, 4, args.metrics, min(args.threads, 4))
    sides = {"this": sys.executable, **({"baseline": args.baseline} if args.baseline else {})}
    runs: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
    tiny: dict[str, float] = {}
    for _ in range(args.rounds):
        for side, python in sides.items():
            runs[side].append(peak(python, big, args.command))
            tiny[side] = min(tiny.get(side, 1e9), peak(python, small, args.command)[0])
    matrix = args.cnodes * args.locations * 8 / 2**20
    print(f"cubescale {args.command}; report: {args.metrics} metrics x {args.cnodes} call paths x {args.locations} locations "
          f"({args.threads} per process), {os.path.getsize(big) / 2**20:.0f} MiB; one matrix {matrix:.0f} MiB; {args.rounds} alternating rounds")
    print("| installation | peak MiB (best) | peak MiB per round | of it above a tiny report's | "
          "wall s (best) | wall s per round |")
    print("|---|---:|---|---:|---:|---|")
    for side in sides:
        peaks, walls = [p for p, _ in runs[side]], [w for _, w in runs[side]]
        print(f"| {side} | {min(peaks):.0f} | {' / '.join(f'{p:.0f}' for p in peaks)} | "
              f"{min(peaks) - tiny[side]:.0f} ({(min(peaks) - tiny[side]) / matrix:.1f} matrices) | "
              f"{min(walls):.2f} | {' / '.join(f'{w:.2f}' for w in walls)} |")
    for path in (big, small):
        os.remove(path)
    os.rmdir(folder)


if __name__ == "__main__":
    main()
