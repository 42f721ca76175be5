"""Wait-state analysis (issue #26) against Scalasca's own analyzer, in one run: `cubescale
analyze` (one process, and under mpirun with one rank per traced process) vs Scalasca's
`scout.mpi` (which needs exactly one rank per traced process) vs reading the same events
with the OTF2 library alone (the limit), on a seeded random MPI run with every wait-state
pattern (`cubescale.testing.random_mpi_run`); wall and CPU seconds (CPU: all processes of
the run), peak memory, and whether the wait-state metrics' totals (patterns, counts, bytes)
of each report equal those of cubescale's one-process report (and which metrics only scout
writes: its root-cause analysis).

    python benchmarks/waitstate_scout.py --scout /path/to/scout.mpi [--iterations 200000] [--processes 4] [--ranks 2 4]

Scalasca is not installable from Debian or PyPI: build it from its sources (2.6:
`configure --with-mpi=openmpi --with-nocross-compiler-suite=gcc && make install`) and name
its `scout.mpi`. scout runs with its default options (critical path, root-cause analysis and
instance statistics on) and with `--no-rootcause` (closer to what cubescale computes: no
delay costs and no wait-state propagation). With two cores, 4 ranks wait for a core: compare
the CPU columns; the wall times move with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import cubescale
from cubescale import testing
from cubescale.mpirun import local_environment


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_command(command: list[str], cwd: str) -> tuple[float, float, str]:
    """(wall, CPU of all its processes, output) of a command that must succeed."""
    start, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(command, cwd=cwd, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=3600)
    wall, used = time.perf_counter() - start, children_cpu() - cpu
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return wall, used, done.stdout + done.stderr


def trace_bytes(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(folder) for f in files
               if not f.endswith(".cubex"))


def timed_call(function) -> tuple[float, float]:
    """(wall, CPU) of a call in this process."""
    start, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - start, time.process_time() - cpu


ALONE = """
import json, resource, sys, time
import cubescale
runs = []
for _ in range(3):
    start, cpu = time.perf_counter(), time.process_time()
    cubescale.analyze(sys.argv[1], sys.argv[2])
    runs.append((time.perf_counter() - start, time.process_time() - cpu))
wall, cpu = min(runs)
print(json.dumps({"wall": wall, "cpu": cpu, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def analyze_alone(anchor: str, output: str) -> tuple[float, float, int]:
    """(wall, CPU, peak RSS in KiB) of the one-process analysis, best of three, in a fresh
    interpreter (the trace generator's memory is not counted)."""
    done = subprocess.run([sys.executable, "-c", ALONE, anchor, output], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["wall"], result["cpu"], result["rss_kib"]


def pattern_totals(path: str) -> dict[str, float]:
    """Per metric of the wait-state tree, the sum over call paths and processes."""
    report = cubescale.open(path)
    return {m.name: float(np.asarray(report.values(m.name, inclusive=False), dtype=float).sum())
            for m in report.metrics if m.name.startswith(("mpi_", "syncs", "comms", "bytes_"))}


def agreement(report: dict[str, float], ours: dict[str, float]) -> str:
    """Whether a report's metric totals equal the one-process analysis' where both have them."""
    both = [name for name in report if name in ours]
    differing = [name for name in both if not np.isclose(report[name], ours[name], rtol=1e-9, atol=1e-12)]
    extra = [name for name in report if name not in ours and report[name] != 0]
    text = f"differ: {differing}" if differing else f"equal ({len(both)} metrics)"
    return text + (f"; {len(extra)} more ({', '.join(sorted(extra))})" if extra else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scout", help="Scalasca's scout.mpi")
    parser.add_argument("--iterations", type=int, default=200000)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 4], help="ranks of cubescale's replay")
    args = parser.parse_args()
    if not args.scout or not os.access(args.scout, os.X_OK):
        print("waitstate_scout: no scout.mpi given (--scout PATH): nothing to compare")
        return
    work = tempfile.mkdtemp(prefix="cubescale_scout_")
    try:
        run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work: str) -> None:
    start = time.perf_counter()
    # written by a child: a process's peak RSS passes to the children it forks, so this one
    # stays small and the one-process analysis' peak is its own
    write = ("import sys; from cubescale import testing; calls, end = testing.random_mpi_run(int(sys.argv[2]), "
             "int(sys.argv[3])); print(testing.write_mpi_trace(sys.argv[1], 'traces', calls, end))")
    done = subprocess.run([sys.executable, "-c", write, work, str(args.processes), str(args.iterations)],
                          capture_output=True, text=True, check=True)
    events = int(done.stdout.strip())
    anchor = os.path.join(work, "traces.otf2")
    print(f"trace: {events:,} events, {args.processes} processes, written in {time.perf_counter() - start:.1f} s")
    ranks = ["mpirun", "-n", str(args.processes)]
    rows = []  # (run, wall, CPU, peak memory, report or None)
    wall, cpu = min(timed_call(lambda: testing.read_with_empty_callbacks(anchor)) for _ in range(3))
    rows.append(("libotf2 alone (the limit), 1 process", wall, cpu, "", None))
    ours = os.path.join(work, "ours.cubex")
    wall, cpu, rss = analyze_alone(anchor, ours)
    rows.append(("cubescale analyze, 1 process", wall, cpu, f"{rss / 1024:.0f} MiB", ours))
    for size in args.ranks:
        replayed = os.path.join(work, f"ours_mpi{size}.cubex")
        command = ["mpirun", "-n", str(size), sys.executable, "-m", "cubescale", "analyze", anchor, "-o", replayed]
        wall, cpu, _ = timed_command(command, work)
        rows.append((f"cubescale analyze, mpirun -n {size}", wall, cpu, "", replayed))
    for label, options in (("scout.mpi (defaults)", []), ("scout.mpi --no-rootcause", ["--no-rootcause"])):
        wall, cpu, output = timed_command([*ranks, args.scout, *options, "traces.otf2"], work)
        memory = re.search(r"Max\. memory usage\s*:\s*([\d.]+\s*\w+)", output)
        kept = os.path.join(work, f"scout{len(rows)}.cubex")
        shutil.move(os.path.join(work, "scout.cubex"), kept)
        rows.append((f"{label}, mpirun -n {args.processes}", wall, cpu, memory.group(1) if memory else "", kept))
    reference = pattern_totals(ours)
    print(f"trace files: {trace_bytes(work) / 2**20:.0f} MiB; scout's peak memory is its own report (per process)")
    print("\n| run | wall s | CPU s | Mevents/s (CPU) | % of the limit (CPU) | peak memory | wait-state metrics vs the one-process report |")
    print("|---|---:|---:|---:|---:|---|---|")
    limit_cpu = rows[0][2]
    for label, wall, cpu, memory, report in rows:
        agrees = "" if report in (None, ours) else agreement(pattern_totals(report), reference)
        print(f"| {label} | {wall:.2f} | {cpu:.2f} | {events / cpu / 1e6:.1f} | {100 * limit_cpu / cpu:.0f} % | "
              f"{memory} | {agrees} |")


if __name__ == "__main__":
    main()
