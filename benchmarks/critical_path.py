"""The one-process analysis with and without the critical path's second read (issue #26): CPU
seconds of ``_core.analysis.analyze`` of this installation against another one (``--baseline``,
an earlier commit in its own virtualenv) and against this one with ``reread_path=True`` (every
location on the path read a second time, as before the time lines), beside the limit (libotf2
with empty callbacks). Every measurement runs in a fresh process, the four alternating round
by round, so that the load of a shared machine hits them alike; the best round counts. Traces:
the 14 M-event ring (4 processes, 250,000 iterations, no counters), the 50 M-event ring of
benchmarks/waitstate.py (900,000 iterations), jacobi-hybrid, and a seeded random MPI run whose
critical path crosses every process many times (``cubescale.testing.random_mpi_run``).

    python benchmarks/critical_path.py --baseline OTHER_PYTHON [--repeat 5] [--big 900000] [--random 20000]
                                       [--data ../shared/data]

Columns: CPU seconds (best of the rounds), the share of the limit's CPU rate, the peak memory
(ru_maxrss) of the baseline and of this installation, and what the time lines held at the end of
the pass per communication event (messages and collectives; in brackets per communication or OpenMP
synchronization event) with the locations read again.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def one(mode: str, path: str) -> None:
    """In a fresh process: one measurement as one JSON line (CPU of this process's threads)."""
    from cubescale import testing
    from cubescale._core import analysis as _analysis
    from cubescale.trace import open as open_trace

    trace = open_trace(path)
    locations = trace.location_indices()
    cpu = time.process_time()
    if mode == "limit":
        testing.read_with_empty_callbacks(trace, locations)
        stats: dict = {}
    else:
        options = {"reread_path": True} if mode == "reread" else {}
        stats = _analysis.analyze(trace._core, locations, **options)[1]
        stats.pop("patterns", None)
    cpu = time.process_time() - cpu
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"cpu": cpu, "maxrss": maxrss, "stats": stats}), flush=True)


def run(python: str, mode: str, path: str) -> dict:
    done = subprocess.run(["timeout", "-k", "5", "900", python, os.path.abspath(__file__), "--one", mode, path],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{python} {mode} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def measure(name: str, path: str, baseline: str, repeat: int) -> str:
    runs: dict[str, list[dict]] = {"limit": [], "baseline": [], "ours": [], "reread": []}
    for _ in range(repeat):
        runs["limit"].append(run(sys.executable, "limit", path))
        runs["baseline"].append(run(baseline, "analyze", path))
        runs["ours"].append(run(sys.executable, "analyze", path))
        runs["reread"].append(run(sys.executable, "reread", path))
    cpu = {k: min(r["cpu"] for r in v) for k, v in runs.items()}
    rss = {k: max(r["maxrss"] for r in v) / 2**20 for k, v in runs.items()}
    stats = runs["ours"][0]["stats"]
    communication = stats["messages"] + stats["collectives"]
    share = {k: cpu["limit"] / cpu[k] * 100 for k in ("baseline", "ours", "reread")}
    return (f"| {name} | {stats['events']:,} | {communication:,} | {cpu['limit']:.3f} | {cpu['baseline']:.3f} "
            f"({share['baseline']:.0f} %) | {cpu['reread']:.3f} ({share['reread']:.0f} %) | {cpu['ours']:.3f} "
            f"({share['ours']:.0f} %) | {rss['baseline']:.0f} / {rss['ours']:.0f} | "
            f"{stats['critical_path_bytes'] / max(communication, 1):.1f} "
            f"({stats['critical_path_bytes'] / max(communication + stats.get('omp_sync_events', 0), 1):.1f}) | "
            f"{stats['critical_path_reread']} of "
            f"{runs['reread'][0]['stats']['critical_path_reread']} |")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="interpreter of another cubescale installation")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--big", type=int, default=900000, help="iterations of the large ring (0: none)")
    parser.add_argument("--random", type=int, default=20000, help="iterations of the random run (0: none)")
    parser.add_argument("--data", default=os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")))
    args = parser.parse_args()
    from cubescale import testing

    folder = tempfile.mkdtemp(prefix="cubescale_critical_path_")
    try:
        traces = []
        testing.write_ring_trace(folder, "ring14", processes=4, iterations=250000, counters=False)
        traces.append(("ring, 250,000 iterations", os.path.join(folder, "ring14.otf2")))
        if args.big:
            testing.write_ring_trace(folder, "ring50", processes=4, iterations=args.big, counters=False)
            traces.append((f"ring, {args.big:,} iterations", os.path.join(folder, "ring50.otf2")))
        jacobi = os.path.join(args.data, "otf2", "jacobi-hybrid", "traces.otf2")
        if os.path.exists(jacobi):
            traces.append(("jacobi-hybrid", jacobi))
        if args.random:
            testing.write_mpi_trace(folder, "random", *testing.random_mpi_run(processes=4, iterations=args.random))
            traces.append((f"random_mpi_run, 4 processes, {args.random:,} iterations", os.path.join(folder, "random.otf2")))
        print(f"best of {args.repeat} alternating rounds, CPU seconds (share of the limit's CPU rate); baseline: "
              f"{args.baseline}\n")
        print("| trace | events | communication events | limit (libotf2) | baseline | this, every location on the "
              "path read again | this | peak MiB baseline / this | time-line bytes per communication event (per "
              "communication or OpenMP synchronization event) | "
              "locations read again (of those on the path) |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, path in traces:
            print(measure(name, path, args.baseline, args.repeat), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
