"""Root-cause analysis (issue #26, ``cubescale analyze --root-cause``) against the same one-process
analysis without it, in one run: wall and CPU seconds and peak memory (ru_maxrss) of each, on a
generated ring trace (``cubescale.testing.write_ring_trace``: solve > {compute, MPI_Send,
MPI_Recv, MPI_Allreduce} per iteration, 18 events each; by default 14 M events) and on the
shared jacobi-hybrid trace (MPI + OpenMP + CUDA). Each measurement runs in a fresh process (so
that its peak memory is its own), the two configurations alternating, the best of
``--repeat``; the extra columns say what the root-cause analysis held (its synchronization
points and bytes: points, costs, time maps and the indices built where intervals reach far back)
and its own wall time, of which the second read of the events (to cut the time maps).

The second table is the former quadratic case: three ranks, K iterations of an ``MPI_Bcast``
(rank 2 waits for the root, rank 1 always enters late: the root's points never name rank 1) or
of an ``MPI_Reduce`` (the root waits for rank 1, the last sender, whose points name only the
root), so that every instance's group start is the trace start; ``wide``: 40 ranks, K / 4
``MPI_Bcast``, a random half of the others waiting for the root each time, rank 1 always late
(the root's partner lists longer than 32 members, differing between instances); ``recurring``:
40 ranks, K / 4 ``MPI_Bcast`` whose root waits for 35 others, 3 of them late with rank 1, a set
of K / 20 recurring 5 instances in a row (many distinct long lists, each held by more than 4
points). ``--baseline OTHER_PYTHON``
(the interpreter of another cubescale installation, e.g. main's) runs the same measurements
there, side by side, in the same run.

    python benchmarks/waitstate_root_cause.py [--ring /work/perf/ring.otf2 | --iterations 194444]
                                              [--processes 4] [--data ../shared/data] [--repeat 2]
                                              [--late 10000,20000,40000] [--baseline OTHER_PYTHON]
                                              [--only ring|late] [--threads 1]

On a shared machine the wall times move with the load; the CPU column compares the work.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
from cubescale._core import analysis as _analysis
from cubescale.trace import open as open_trace
trace = open_trace(sys.argv[1])
root_cause = sys.argv[2] == "1"
threads = int(sys.argv[3])
start, cpu = time.perf_counter(), time.process_time()
_, stats = _analysis.analyze(trace._core, trace.location_indices(), root_cause=root_cause, threads=threads)
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"wall": wall, "cpu": cpu, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "events": stats["events"], "points": stats["root_cause_points"],
                  "bytes": stats["root_cause_bytes"], "read": stats["root_cause_read_seconds"],
                  "own": stats["root_cause_seconds"]}))
"""


THREADS = 1  # the analysis' threads in every measurement (--threads)


def measure(anchor: str, root_cause: bool, python: str = sys.executable) -> dict:
    """One analysis in a fresh interpreter (``python``: this one or a baseline's) on ``THREADS``
    threads: its wall/CPU seconds, peak memory and statistics."""
    out = subprocess.run([python, "-c", CHILD, anchor, "1" if root_cause else "0", str(THREADS)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def best(anchor: str, repeat: int, configurations: list[tuple[bool, str]]) -> dict[tuple[bool, str], dict]:
    """Per configuration (root cause or not, interpreter) the fastest wall and CPU time and the
    smallest peak of ``repeat`` runs, the configurations alternating (the same load for all)."""
    runs: dict[tuple[bool, str], list[dict]] = {c: [] for c in configurations}
    for _ in range(repeat):
        for c in configurations:
            runs[c].append(measure(anchor, c[0], c[1]))
    return {c: dict(r[0], wall=min(x["wall"] for x in r), cpu=min(x["cpu"] for x in r),
                    rss=min(x["rss"] for x in r), read=min(x["read"] for x in r), own=min(x["own"] for x in r))
            for c, r in runs.items()}


def late_collectives(kind: str, iterations: int) -> tuple[list[list[tuple]], int]:
    """The ranks' MPI calls (``cubescale.testing.write_mpi_trace``): per iteration, on three
    ranks, an ``MPI_Bcast`` whose root never synchronized with rank 1 (always late) or an
    ``MPI_Reduce`` whose last sender (rank 1) synchronized only with the root; ``wide``: 40
    ranks, an ``MPI_Bcast`` that a random half of the others enter before the root (they wait:
    the root's partner lists differ from one instance to the next), rank 1 always late;
    ``recurring``: 40 ranks, the root waiting for 35 others, the 3 late ones with rank 1 one of
    ``iterations // 5`` sets, each 5 instances in a row. The work before each call varies."""
    init = ("MPI_Init", 0, 100, [], 0)
    ranks: list[list[tuple]] = [[init] for _ in range(40 if kind in ("wide", "recurring") else 3)]
    rng = random.Random(3)
    # recurring: which 3 of the others enter late with rank 1, one set of iterations // 5, each
    # 5 instances in a row (the root's list of the 35 waiting members recurs)
    late_sets = [set(random.Random(1000 + d).sample(range(2, 40), 3)) for d in range(max(1, iterations // 5))]
    for i in range(iterations):
        t, j = 1000 + 1000 * i, (i * 7919) % 97
        if kind == "recurring":
            root, late = t + 500, late_sets[(i // 5) % len(late_sets)]
            ranks[0].append(("MPI_Bcast", root, root + 10, [0], 0))
            for r in range(1, len(ranks)):
                e = t + 700 if r == 1 or r in late else t + 100 + rng.randint(0, 50)
                ranks[r].append(("MPI_Bcast", e, max(e, root) + 10, [0], 0))
        elif kind == "wide":
            root = t + 300 + rng.randint(0, 50)
            ranks[0].append(("MPI_Bcast", root, root + 100, [0], 0))
            for r in range(1, len(ranks)):
                if r != 1 and rng.random() < 0.5:
                    ranks[r].append(("MPI_Bcast", t + 100 + rng.randint(0, 150), root + 100 + rng.randint(0, 20), [0], 0))
                else:
                    e = root + 10 + rng.randint(0, 300)
                    ranks[r].append(("MPI_Bcast", e, e + 100, [0], 0))
        elif kind == "bcast":
            ranks[0].append(("MPI_Bcast", t + 300 + j, t + 400 + j, [0], 0))
            ranks[1].append(("MPI_Bcast", t + 500 + j, t + 600 + j, [0], 0))
            ranks[2].append(("MPI_Bcast", t + 100, t + 400 + j, [0], 0))
        else:
            ranks[0].append(("MPI_Reduce", t + 100, t + 400 + j, [0], 0))
            ranks[1].append(("MPI_Reduce", t + 300 + j, t + 350 + j, [0], 0))
            ranks[2].append(("MPI_Reduce", t + 200, t + 250, [0], 0))
    end = 1000 * (iterations + 2)
    for r in ranks:
        r.append(("MPI_Finalize", end - 100, end - 50, [], 0))
    return ranks, end


def ring_table(traces: list[tuple[str, str]], repeat: int, baseline: str | None) -> None:
    """Without and with --root-cause on each trace (and the baseline's rows)."""
    print("| trace | events | analysis | wall s | CPU s | peak MB | CPU vs without | peak vs without |"
          " sync points | held MB | root cause s | its read s |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    builds = [("", sys.executable)] + ([("baseline: ", baseline)] if baseline else [])
    for name, anchor in traces:
        r = best(anchor, repeat, [(rc, python) for _, python in builds for rc in (False, True)])
        for prefix, python in builds:
            plain = r[(False, python)]
            for rc in (False, True):
                x = r[(rc, python)]
                label = prefix + ("--root-cause" if rc else "without")
                ratio = f"{x['cpu'] / plain['cpu']:.2f}x" if rc else ""
                extra = f"{(x['rss'] - plain['rss']) / 1e6:+.1f} MB" if rc else ""
                points = f"{x['points']:,}" if rc else ""
                held = f"{x['bytes'] / 1e6:.1f}" if rc else ""
                own = f"{x['own']:.2f} | {x['read']:.2f}" if rc else " | "
                print(f"| {name} | {x['events']:,} | {label} | {x['wall']:.2f} | {x['cpu']:.2f} | {x['rss'] / 1e6:.0f} |"
                      f" {ratio} | {extra} | {points} | {held} | {own} |", flush=True)


def late_table(folder: str, sizes: list[int], repeat: int, baseline: str | None) -> None:
    """The former quadratic case: without --root-cause, with it on the baseline, with it here."""
    from cubescale import testing

    print("| trace | K | events | analysis | wall s | CPU s | root cause s | held MB | root cause s vs baseline |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for kind in ("bcast", "reduce", "wide", "recurring"):
        for k in sizes if kind in ("bcast", "reduce") else [k // 4 for k in sizes]:
            ranks, end = late_collectives(kind, k)
            testing.write_mpi_trace(folder, f"{kind}{k}", ranks, end)
            anchor = os.path.join(folder, f"{kind}{k}.otf2")
            configurations = [(False, sys.executable)] + ([(True, baseline)] if baseline else []) + [(True, sys.executable)]
            r = best(anchor, repeat, configurations)
            for rc, python in configurations:
                x = r[(rc, python)]
                label = ("baseline: " if python != sys.executable else "") + ("--root-cause" if rc else "without")
                own = f"{x['own']:.3f} | {x['bytes'] / 1e6:.1f}" if rc else " | "
                vs = ""
                if rc and baseline and python == sys.executable:
                    vs = f"{r[(True, baseline)]['own'] / max(x['own'], 1e-9):.0f}x faster"
                print(f"| {kind} | {k:,} | {x['events']:,} | {label} | {x['wall']:.3f} | {x['cpu']:.3f} | {own} | {vs} |",
                      flush=True)


def main() -> None:
    """Print the tables (markdown)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ring", help="an existing ring trace (its anchor); else one is generated")
    parser.add_argument("--iterations", type=int, default=194444, help="ring iterations when generated (18 events each)")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--late", default="10000,20000,40000", help="iterations K of the late-collective traces")
    parser.add_argument("--baseline", help="interpreter of another cubescale installation to run side by side")
    parser.add_argument("--only", choices=["ring", "late"], help="one of the two tables")
    parser.add_argument("--threads", type=int, default=1, help="the analysis' threads (cubescale analyze: the cores)")
    args = parser.parse_args()
    global THREADS
    THREADS = args.threads
    with tempfile.TemporaryDirectory() as folder:
        if args.only != "late":
            ring = args.ring
            if ring is None:
                from cubescale import testing

                testing.write_ring_trace(folder, "ring", processes=args.processes, iterations=args.iterations)
                ring = os.path.join(folder, "ring.otf2")
            traces = [("ring", ring)]
            jacobi = os.path.join(args.data, "otf2", "jacobi-hybrid", "traces.otf2")
            if os.path.exists(jacobi):
                traces.append(("jacobi-hybrid", jacobi))
            ring_table(traces, args.repeat, args.baseline)
        if args.only != "ring":
            if args.only is None:
                print()
            late_table(folder, [int(k) for k in args.late.split(",")], args.repeat, args.baseline)


if __name__ == "__main__":
    main()
