"""Unification + collation of per-rank profiles into one .cubex vs the two baselines, 2..64
real (oversubscribed) ranks in one run.

    python3 benchmarks/collate.py                  # 2, 4, 8, 16, 32, 64 ranks
    python3 benchmarks/collate.py --sizes 2 4 8 --cnodes 100
    python3 benchmarks/collate.py --simulate          # unification's critical path, 2..1024 ranks

Every rank holds a random local profile (deterministic per rank), shaped like a real SPMD run:
--cnodes call paths of a call tree all ranks share plus 5% of paths only that rank visited
(ranks see different trees), 4 threads, 3 metrics (time DOUBLE, visits UINT64, bytes INT64
inclusive). Three ways to one report, each timed from a barrier to
the file being complete (max over ranks):

* ours — cubescale.parallel.write_report: unification by reduction tree, distributed system
  tree, collation in blocks into rank 0's streaming writer (block budget 1 MiB);
* files + merge — every rank writes its own .cubex (cubescale.write), then rank 0 reads
  them one after another and merges them into one report (the sequential step paper 001
  replaced);
* gather — every rank's whole profile goes to rank 0 at once (comm.gather), which merges.

Both baselines merge with the same NumPy code: call paths matched by their path of region
names in a dict, values copied into dense [global cnode, location] matrices, one write.
Writer memory: ours = the collation buffers on rank 0 (block + gathered parts), the
baselines = the dense matrices (and, for gather, the received profiles) rank 0 holds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from cubescale.mpirun import local_environment

REGIONS = [f"region_{i}" for i in range(60)]
METRICS = [("time", "DOUBLE", "EXCLUSIVE"), ("visits", "UINT64", "EXCLUSIVE"), ("bytes", "INT64", "INCLUSIVE")]
THREADS = 4


def make_profile(rank: int, cnodes: int, unique: float = 0.05):
    import numpy as np

    from cubescale.profile import LocalProfile, Metric, Region

    parents, regions, seen = [], [], set()

    def grow(rng, count):
        while len(parents) < count:
            n = len(parents)
            parent = -1 if n == 0 else int(rng.integers(max(0, n - 8), n))  # deep-ish trees
            region = 0 if n == 0 else int(rng.integers(1, len(REGIONS)))
            if (parent, region) in seen:
                continue
            seen.add((parent, region))
            parents.append(parent)
            regions.append(region)

    grow(np.random.default_rng(12345), cnodes)  # the tree every rank shares
    rng = np.random.default_rng(rank)
    grow(rng, cnodes + int(cnodes * unique))  # and paths only this rank saw
    cnodes = len(parents)
    shape = (cnodes, THREADS)
    values = [rng.random(shape), rng.integers(1, 1000, shape).astype(np.uint64),
              rng.integers(0, 1 << 20, shape).astype(np.int64)]
    return LocalProfile([Metric(name=n, dtype=d, kind=k) for n, d, k in METRICS],
                        [Region(name=r) for r in REGIONS], parents, regions,
                        [("Master thread" if t == 0 else f"OMP thread {t}", "thread") for t in range(THREADS)],
                        values, host=f"node{rank // 8}")


def _paths(profile):
    out = []
    for p, r in zip(profile._core.cnode_parents().tolist(), profile._core.cnode_regions().tolist()):
        out.append((out[p] if p >= 0 else ()) + (REGIONS[r],))
    return out


def merge_on_rank0(profiles, path: str) -> int:
    """The baselines' merge: returns the bytes of the dense matrices it held."""
    import numpy as np

    import cubescale
    from cubescale.systree import SingleNodeTree

    index: dict[tuple, int] = {}
    for p in profiles:
        for path_ in _paths(p):
            index.setdefault(path_, len(index))
    ordered = sorted(index)  # parents before children: a path sorts after its prefix
    row = {p: i for i, p in enumerate(ordered)}
    system = SingleNodeTree()
    machine = system.add_root("machine")
    nodes: dict[str, int] = {}
    for r, p in enumerate(profiles):
        host = p.host or "node"
        if host not in nodes:
            nodes[host] = system.add(machine, "node", host)
        process = system.add(nodes[host], "process", f"rank {r}")
        for name, kind in p.locations:
            system.add(process, kind, name, kind="location")
    builder = cubescale.ReportBuilder(system)
    for name, dtype, kind in METRICS:
        builder.add_metric(name, dtype=dtype, kind=kind)
    region_ids = {n: builder.add_region(n) for n in REGIONS}
    for p in ordered:
        builder.add_cnode(region_ids[p[-1]], parent=row[p[:-1]] if len(p) > 1 else None)
    report = builder.build()
    held = 0
    for name, _, _ in METRICS:
        dense = np.zeros(report.shape, dtype=profiles[0].values(name).dtype)
        held += dense.nbytes
        column = 0
        for p in profiles:
            rows = [row[x] for x in _paths(p)]
            dense[np.ix_(rows, range(column, column + p.shape[1]))] = p.values(name)
            column += p.shape[1]
        report.set_values(name, dense)
    cubescale.write(report, path)
    return held


def worker(cnodes: int, repeat: int, out_dir: str) -> None:
    from mpi4py import MPI

    import cubescale
    from cubescale.parallel import write_report
    from cubescale.profile import LocalProfile

    comm = MPI.COMM_WORLD
    profile = make_profile(comm.rank, cnodes)
    profile_bytes = sum(profile.values(n).nbytes for n, _, _ in METRICS)

    def timed(run):
        """Median over the repetitions of the wall time (slowest rank) and of the busiest
        rank's CPU time: with a core per rank no rank waits for a core, so the busiest rank's
        CPU is what the run cannot go below (on 2 cores the ranks' CPU is serialized)."""
        times, cpus = [], []
        for _ in range(repeat):
            comm.Barrier()
            start, cpu = time.perf_counter(), time.process_time()
            extra = run()
            cpu = time.process_time() - cpu
            comm.Barrier()
            times.append(comm.allreduce(time.perf_counter() - start, op=MPI.MAX))
            cpus.append(comm.allreduce(cpu, op=MPI.MAX))
        return statistics.median(times), extra, statistics.median(cpus)

    def ours():
        return write_report(comm, profile, os.path.join(out_dir, "ours.cubex"))

    def files_and_merge():
        own = os.path.join(out_dir, f"rank{comm.rank}.cubex")
        merge_on_rank0([profile], own)  # the rank's own report
        comm.Barrier()
        if comm.rank == 0:
            parts = []
            for r in range(comm.size):
                report = cubescale.open(os.path.join(out_dir, f"rank{r}.cubex"))
                part = LocalProfile.from_report(report)
                part.host = f"node{r // 8}"
                parts.append(part)
            return merge_on_rank0(parts, os.path.join(out_dir, "files.cubex"))
        return 0

    def gather():
        arrays = comm.gather(([profile.values(n) for n, _, _ in METRICS], profile._core.cnode_parents(),
                              profile._core.cnode_regions()), root=0)
        if comm.rank == 0:
            from cubescale.profile import Metric, Region

            parts = [LocalProfile([Metric(name=n, dtype=d, kind=k) for n, d, k in METRICS],
                                  [Region(name=r) for r in REGIONS], parents, regions,
                                  profile.locations, values, host=f"node{r // 8}")
                     for r, (values, parents, regions) in enumerate(arrays)]
            return merge_on_rank0(parts, os.path.join(out_dir, "gather.cubex")) + profile_bytes * comm.size
        return 0

    t_ours, costs, cpu_ours = timed(ours)
    t_files, files_held, cpu_files = timed(files_and_merge)
    t_gather, gather_held, cpu_gather = timed(gather)
    sent = comm.reduce(costs["unify"]["bytes_sent"] + costs["collate"]["bytes_sent"], op=MPI.SUM, root=0)
    unify_seconds = comm.allreduce(costs["unify"]["seconds"], op=MPI.MAX)
    # The phases of ours (last run, slowest rank each): where the time goes.
    system_seconds = comm.allreduce(costs["system_tree"]["seconds"], op=MPI.MAX)
    collate_seconds = comm.allreduce(costs["collate"]["seconds"], op=MPI.MAX)
    if comm.rank == 0:
        same = _same_values(os.path.join(out_dir, "ours.cubex"), os.path.join(out_dir, "files.cubex"))
        print(json.dumps({
            "ranks": comm.size, "ours": t_ours, "files": t_files, "gather": t_gather,
            "cpu_ours": cpu_ours, "cpu_files": cpu_files, "cpu_gather": cpu_gather,
            "writer_bytes": costs["collate"]["writer_buffer_bytes"], "files_held": files_held,
            "gather_held": gather_held, "bytes_moved": sent, "gather_moved": profile_bytes * (comm.size - 1),
            "rounds": costs["unify"]["rounds"], "unify_seconds": unify_seconds,
            "system_seconds": system_seconds, "collate_seconds": collate_seconds,
            "unify_peak": costs["unify"]["peak_bytes"], "same_values": same,
            "size": os.path.getsize(os.path.join(out_dir, "ours.cubex")),
        }), flush=True)


def _same_values(a: str, b: str) -> bool:
    """The two reports hold the same values per (call path by region path, location)."""
    import numpy as np

    import cubescale

    ra, rb = cubescale.open(a), cubescale.open(b)

    def keyed(r):
        out = []
        for c in r.cnodes:
            out.append((out[c.parent] if c.parent is not None else ()) + (c.region.name,))
        return {p: i for i, p in enumerate(out)}

    ka, kb = keyed(ra), keyed(rb)
    if set(ka) != set(kb) or ra.shape != rb.shape:
        return False
    order = [kb[p] for p in sorted(ka, key=ka.get)]
    return all(np.array_equal(np.asarray(ra.values(n, inclusive=None)), np.asarray(rb.values(n, inclusive=None))[order])
               for n, _, _ in METRICS)


def simulate(sizes: list[int], cnodes: int) -> None:
    """Unification of P profiles in one process along the same spanning tree (the C++ kernels
    of the MPI runs): the critical path with one core per rank, for identical call trees and
    for 5% rank-specific call paths."""
    from cubescale._core import profile as _profile

    print()
    print(f"Unification simulated in one process ({cnodes} shared call paths per rank): critical path = the "
          "longest chain of merges and map compositions, leaf -> root -> leaf, one core per rank")
    print()
    print("| ranks | rank-specific paths | global call paths | rounds | critical path ms | all ranks' work ms | "
          "most bytes one rank received |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for unique in (0.0, 0.05):
        for size in sizes:
            profiles = [make_profile(r, cnodes, unique)._core for r in range(size)]
            best = None
            for _ in range(3):
                r = _profile.unify_in_process(profiles)
                if best is None or r["critical_path_seconds"] < best["critical_path_seconds"]:
                    best = r
            assert best is not None
            print(f"| {size} | {unique:.0%} | {len(best['cnode_parents'])} | {best['rounds']} | "
                  f"{best['critical_path_seconds'] * 1e3:.1f} | {best['total_seconds'] * 1e3:.0f} | "
                  f"{best['max_bytes_received'] / 1024:.0f} KiB |", flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64])
    parser.add_argument("--cnodes", type=int, default=300, help="call paths per rank")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--simulate", type=int, nargs="*", default=None,
                        help="only the in-process unification for these numbers of ranks (default 2..1024)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.cnodes, args.repeat, args.out)
        return 0
    if args.simulate is not None:
        simulate(args.simulate or [2, 8, 64, 256, 1024], args.cnodes)
        return 0
    print(f"{args.cnodes} call paths x {THREADS} threads x {len(METRICS)} metrics per rank; median of {args.repeat}")
    print("| ranks | ours s | files+merge s | gather s | files/ours | gather/ours | busiest rank CPU s: ours | "
          "files+merge | gather | files/ours CPU | writer buffers (budget 1 MiB) | "
          "baseline rank-0 matrices | bytes moved ours | gather | unify rounds | unify s | system tree s | collate s | "
          "same values |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    env = local_environment()
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as out:
            command = ["timeout", "-k", "5", "1200", "mpirun", "-n", str(size), sys.executable, __file__, "--worker",
                       "--cnodes", str(args.cnodes), "--repeat", str(args.repeat), "--out", out]
            for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH"):
                if k in os.environ:
                    command[5:5] = ["-x", k]
            done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
            if done.returncode != 0:
                print(f"| {size} | failed: {done.stderr[-500:]} |")
                continue
            r = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
        print(f"| {r['ranks']} | {r['ours']:.3f} | {r['files']:.3f} | {r['gather']:.3f} | "
              f"{r['files'] / r['ours']:.1f}x | {r['gather'] / r['ours']:.1f}x | {r['cpu_ours']:.3f} | "
              f"{r['cpu_files']:.3f} | {r['cpu_gather']:.3f} | {r['cpu_files'] / r['cpu_ours']:.1f}x | "
              f"{r['writer_bytes'] / 1024:.0f} KiB | "
              f"{(r['gather_held']) / 1024:.0f} KiB | {r['bytes_moved'] / 1024:.0f} KiB | "
              f"{r['gather_moved'] / 1024:.0f} KiB | {r['rounds']} | {r['unify_seconds']:.3f} | "
              f"{r['system_seconds']:.3f} | {r['collate_seconds']:.3f} | {r['same_values']} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
