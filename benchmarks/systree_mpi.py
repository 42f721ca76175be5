"""Distributed system tree construction vs the naive gather, on real MPI ranks and simulated.

    python3 benchmarks/systree_mpi.py            # 2..64 real ranks, simulation up to 1.8M
    python3 benchmarks/systree_mpi.py --quick    # fewer simulated sizes

Real ranks: regular machines (4 threads per process), both algorithms with root_only=True,
the median of --repeat timed runs (max over ranks, after a barrier). Memory is the
algorithm's own data: for ours the peak of payloads, merge states, relative starts and
offsets a rank held (RankState accounting); for the naive baseline rank 0's gathered views plus the single-node
union and the folded tree. Bytes moved: ours = the up, settle and down passes' point-to-point bytes
(communicator splits not counted); naive = gathered views + scattered indices.

Simulation: the same kernels for P virtual ranks (JUQUEEN racks); the naive rank-0 memory
there is computed (views' sizes + single-node size of the tree), not materialized.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cubescale.mpirun import local_environment

REAL_SHAPES = {
    2: "node:2 process:1 thread:4",
    4: "node:2 process:2 thread:4",
    8: "node:4 process:2 thread:4",
    16: "node:4 process:4 thread:4",
    32: "node:8 process:4 thread:4",
    64: "node:8 process:8 thread:4",
}
JUQUEEN = "rack:{} midplane:2 nodeboard:16 node:32 process:64"
# JUQUEEN's depth with every level branching, from 32 virtual ranks up to where the racks
# series above takes over: flatness over five orders of magnitude of P on one tree shape.
SMALL_JUQUEEN_DEPTH = [
    "rack:2 midplane:2 nodeboard:2 node:2 process:2 thread:4",
    "rack:2 midplane:2 nodeboard:4 node:4 process:4 thread:4",
    "rack:2 midplane:2 nodeboard:8 node:8 process:16 thread:4",
]


def worker(shape: str, repeat: int) -> None:
    """Run under mpirun: time both algorithms, print one JSON line on rank 0."""
    from mpi4py import MPI

    from cubescale.parallel import build_system_tree, build_system_tree_naive, regular_view

    comm = MPI.COMM_WORLD
    view = regular_view(shape, comm.rank)
    row = {}
    for name, build in (("ours", build_system_tree), ("naive", build_system_tree_naive)):
        times = []
        for _ in range(repeat):
            comm.Barrier()
            start = time.perf_counter()
            result = build(comm, view, root_only=True)
            times.append(comm.allreduce(time.perf_counter() - start, op=MPI.MAX))
        peaks = comm.gather(result.stats["peak_bytes"], root=0)
        sent = comm.reduce(result.stats.get("bytes_sent", 0), op=MPI.SUM, root=0)
        locations = comm.reduce(len(result.location_indices), op=MPI.SUM, root=0)
        if comm.rank == 0:
            if name == "naive":  # rank 0 scatters every rank's indices (8 bytes each) and group index
                sent += 8 * locations + 8 * comm.size
            row[name] = {"time": statistics.median(times), "rank0": peaks[0],
                         "max": max(peaks), "min": min(peaks), "bytes": sent}
    if comm.rank == 0:
        print(json.dumps(row), flush=True)


def real_row(ranks: int, repeat: int) -> dict:
    env = local_environment()
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    command = ["timeout", "-k", "5", "300", "mpirun", "-n", str(ranks), *passed, sys.executable,
               str(Path(__file__).resolve()), "--worker", REAL_SHAPES[ranks], "--repeat", str(repeat)]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mpirun -n {ranks} failed:\n{done.stderr[-2000:]}")
    return json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", metavar="SHAPE")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="fewer simulated sizes")
    parser.add_argument("--max-ranks", type=int, default=64)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.repeat)
        return

    from cubescale.parallel import simulate_system_tree

    print("Real MPI ranks (regular machines, 4 threads per process; memory = algorithm data)\n")
    print("| ranks | shape | ours time | naive time | ours rank-0 | naive rank-0 | ours per-rank max / min | "
          "naive per-rank max | ours bytes moved | naive bytes moved |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    real_peaks = []
    for ranks in (r for r in REAL_SHAPES if r <= args.max_ranks):
        row = real_row(ranks, args.repeat)
        ours, naive = row["ours"], row["naive"]
        real_peaks.append(ours["max"])
        print(f"| {ranks} | `{REAL_SHAPES[ranks]}` | {ours['time'] * 1e3:.2f} ms | {naive['time'] * 1e3:.2f} ms | "
              f"{human(ours['rank0'])} | {human(naive['rank0'])} | {human(ours['max'])} / {human(ours['min'])} | "
              f"{human(naive['max'])} | {human(ours['bytes'])} | {human(naive['bytes'])} |")
    print(f"\nours per-rank peak (max over ranks) across 2..{args.max_ranks} ranks: "
          f"max/min = {max(real_peaks) / min(real_peaks):.3f}\n")

    racks = [2, 8, 28] if args.quick else [1, 2, 4, 8, 16, 28]
    print("Simulated ranks (JUQUEEN racks; same kernels; naive rank-0 memory computed, not materialized)\n")
    print("| virtual ranks | threads | records | rounds | sim wall time | ours rank-0 | ours per-rank max / min | "
          "naive rank-0 | naive / ours rank-0 | ours max msgs / bytes per rank | ours bytes moved |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for threads in (1, 4):
        peaks = []
        for r in racks:
            shape = JUQUEEN.format(r) + f" thread:{threads}"
            start = time.perf_counter()
            sim = simulate_system_tree(shape)
            wall = time.perf_counter() - start
            peaks.append(sim["peak_bytes_max"])
            ratio = sim["naive_rank0_bytes"] / sim["peak_bytes_rank0"]
            print(f"| {sim['ranks']:,} | {threads} | {len(sim['tree'])} | {sim['rounds']} | {wall:.1f} s | "
                  f"{human(sim['peak_bytes_rank0'])} | {human(sim['peak_bytes_max'])} / {human(sim['peak_bytes_min'])} | "
                  f"{human(sim['naive_rank0_bytes'])} | {ratio:,.0f}x | {sim['messages_max']} / {human(sim['bytes_max'])} | "
                  f"{human(sim['bytes_total'])} |")
        multi = [p for r, p in zip(racks, peaks) if r >= 2]
        print(f"\n{threads} thread(s): per-rank peak max across {racks[0]}..{racks[-1]} racks: "
              f"max/min = {max(peaks) / min(peaks):.3f}; across 2..{racks[-1]} racks "
              f"(the machine's group has more than one member): {max(multi) / min(multi):.3f}\n")
    small_depth_table(multi)


def small_depth_table(juqueen_peaks: list[int]) -> None:
    """The same depth from 32 virtual ranks: per-rank peak, then against the 4-thread racks above."""
    from cubescale.parallel import simulate_system_tree

    print("JUQUEEN's depth with every level branching (4 threads), then the racks above\n")
    print("| virtual ranks | shape | ours per-rank max |")
    print("|---:|---|---:|")
    peaks = []
    for shape in SMALL_JUQUEEN_DEPTH:
        sim = simulate_system_tree(shape)
        peaks.append(sim["peak_bytes_max"])
        print(f"| {sim['ranks']:,} | `{shape}` | {human(sim['peak_bytes_max'])} |")
    everything = peaks + juqueen_peaks
    print(f"\nper-rank peak max from 32 virtual ranks to 1.8M (these rows, then 2..28 racks with 4 threads): "
          f"max/min = {max(everything) / min(everything):.3f}. A single rack is a shallower case: its machine "
          f"level has one child, so the last round merges nothing.\n")


if __name__ == "__main__":
    main()
