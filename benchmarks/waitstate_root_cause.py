"""Root-cause analysis (issue #26, ``cubescale analyze --root-cause``) against the same one-process
analysis without it, in one run: wall and CPU seconds and peak memory (ru_maxrss) of each, on a
generated ring trace (``cubescale.testing.write_ring_trace``: solve > {compute, MPI_Send,
MPI_Recv, MPI_Allreduce} per iteration, 18 events each; by default 14 M events) and on the
shared jacobi-hybrid trace (MPI + OpenMP + CUDA). Each measurement runs in a fresh process (so
that its peak memory is its own), the two configurations alternating, the best of
``--repeat``; the extra columns say what the root-cause analysis held (its synchronization
points and bytes: points, costs and time maps) and its own wall time, of which the second read
of the events (to cut the time maps).

    python benchmarks/waitstate_root_cause.py [--ring /work/perf/ring.otf2 | --iterations 194444]
                                              [--processes 4] [--data ../shared/data] [--repeat 2]

On a shared machine the wall times move with the load; the CPU column compares the work.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
from cubescale._core import analysis as _analysis
from cubescale.trace import open as open_trace
trace = open_trace(sys.argv[1])
root_cause = sys.argv[2] == "1"
start, cpu = time.perf_counter(), time.process_time()
_, stats = _analysis.analyze(trace._core, trace.location_indices(), root_cause=root_cause)
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"wall": wall, "cpu": cpu, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "events": stats["events"], "points": stats["root_cause_points"],
                  "bytes": stats["root_cause_bytes"], "read": stats["root_cause_read_seconds"],
                  "own": stats["root_cause_seconds"]}))
"""


def measure(anchor: str, root_cause: bool) -> dict:
    """One analysis in a fresh interpreter: its wall/CPU seconds, peak memory and statistics."""
    out = subprocess.run([sys.executable, "-c", CHILD, anchor, "1" if root_cause else "0"], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def best(anchor: str, repeat: int) -> dict[bool, dict]:
    """Per configuration the fastest wall and CPU time and the smallest peak of ``repeat`` runs,
    the configurations alternating (the same load for both)."""
    runs: dict[bool, list[dict]] = {False: [], True: []}
    for _ in range(repeat):
        for root_cause in (False, True):
            runs[root_cause].append(measure(anchor, root_cause))
    return {rc: dict(r[0], wall=min(x["wall"] for x in r), cpu=min(x["cpu"] for x in r),
                     rss=min(x["rss"] for x in r), read=min(x["read"] for x in r), own=min(x["own"] for x in r))
            for rc, r in runs.items()}


def main() -> None:
    """Print the table (markdown)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ring", help="an existing ring trace (its anchor); else one is generated")
    parser.add_argument("--iterations", type=int, default=194444, help="ring iterations when generated (18 events each)")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        ring = args.ring
        if ring is None:
            from cubescale import testing

            testing.write_ring_trace(folder, "ring", processes=args.processes, iterations=args.iterations)
            ring = os.path.join(folder, "ring.otf2")
        traces = [("ring", ring)]
        jacobi = os.path.join(args.data, "otf2", "jacobi-hybrid", "traces.otf2")
        if os.path.exists(jacobi):
            traces.append(("jacobi-hybrid", jacobi))
        print("| trace | events | analysis | wall s | CPU s | peak MB | CPU vs without | peak vs without |"
              " sync points | held MB | root cause s | its read s |")
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, anchor in traces:
            r = best(anchor, args.repeat)
            plain = r[False]
            for rc in (False, True):
                x = r[rc]
                label = "--root-cause" if rc else "without"
                ratio = f"{x['cpu'] / plain['cpu']:.2f}x" if rc else ""
                extra = f"{(x['rss'] - plain['rss']) / 1e6:+.1f} MB" if rc else ""
                points = f"{x['points']:,}" if rc else ""
                held = f"{x['bytes'] / 1e6:.1f}" if rc else ""
                own = f"{x['own']:.2f} | {x['read']:.2f}" if rc else " | "
                print(f"| {name} | {x['events']:,} | {label} | {x['wall']:.2f} | {x['cpu']:.2f} | {x['rss'] / 1e6:.0f} |"
                      f" {ratio} | {extra} | {points} | {held} | {own} |", flush=True)


if __name__ == "__main__":
    main()
