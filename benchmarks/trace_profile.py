"""The trace -> profile pass (``cubescale trace-profile`` without the writing) and the summary
of ``cubescale info TRACE`` (``Trace.summary``), this installation against another one
(``--baseline``: its interpreter), side by side in one run, alternating ``--rounds`` times,
beside the limit: libotf2 reading the same events with callbacks that do nothing
(``cubescale.testing.read_with_empty_callbacks``).

    python benchmarks/trace_profile.py [--trace ANCHOR | --iterations 900000 --processes 4]
                                       [--rounds 3] [--baseline OTHER_PYTHON]

Without ``--trace`` the trace is the generated ring of the wait-state benchmark (send, receive
and allreduce in every iteration: a loop calling three regions in turn). Each measurement is a
fresh process reading every location on one thread; CPU seconds (process_time) are given
beside wall seconds, since on a shared machine the wall time moves with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

# Reads the trace once in this process: {"wall": s, "cpu": s, "events": n} on stdout.
ONE_PASS = """
import json, sys, time
from cubescale import testing
from cubescale.trace import open as open_trace
trace = open_trace(sys.argv[1])
start, cpu = time.perf_counter(), time.process_time()
if sys.argv[2] == "limit":
    testing.read_with_empty_callbacks(trace, trace.location_indices())
elif sys.argv[2] == "info":
    trace.summary()
else:
    trace._core.profile(trace.location_indices())
print(json.dumps({"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu,
                  "events": int(trace.announced_events().sum())}))
"""


def one_pass(python: str, trace: str, what: str) -> dict:
    """The ``what`` pass ("limit", "profile" or "info") over ``trace`` in a fresh ``python``."""
    done = subprocess.run([python, "-c", ONE_PASS, trace, what], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{python}: {what} failed: {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", help="an OTF2 anchor (default: a generated ring)")
    parser.add_argument("--iterations", type=int, default=900_000, help="of the generated ring, per process")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="interpreter of another cubescale installation")
    args = parser.parse_args()
    folder = None
    trace = args.trace
    if trace is None:
        from cubescale import testing

        folder = tempfile.mkdtemp()
        testing.write_ring_trace(folder, "ring", processes=args.processes, iterations=args.iterations, counters=False)
        trace = os.path.join(folder, "ring.otf2")
    sides = [("libotf2 alone (limit)", sys.executable, "limit"), ("this: profile", sys.executable, "profile")]
    if args.baseline:
        sides.append(("baseline: profile", args.baseline, "profile"))
    sides.append(("this: info", sys.executable, "info"))
    if args.baseline:
        sides.append(("baseline: info", args.baseline, "info"))
    runs: dict[str, list[dict]] = {label: [] for label, _, _ in sides}
    for _ in range(args.rounds):
        for label, python, what in sides:
            runs[label].append(one_pass(python, trace, what))
    events = runs[sides[0][0]][0]["events"]
    limit_cpu = min(r["cpu"] for r in runs[sides[0][0]])
    print(f"{os.path.basename(trace)}: {events:,} events, {args.rounds} alternating rounds, one thread")
    print("| pass | CPU s (best) | CPU s per round | wall s (best) | M events/s (CPU) | of the limit's rate (CPU) |")
    print("|---|---:|---|---:|---:|---:|")
    for label, _, _ in sides:
        cpu = [r["cpu"] for r in runs[label]]
        wall = min(r["wall"] for r in runs[label])
        print(f"| {label} | {min(cpu):.2f} | {' / '.join(f'{c:.2f}' for c in cpu)} | {wall:.2f} | "
              f"{events / min(cpu) / 1e6:.1f} | {limit_cpu / min(cpu) * 100:.0f} % |")
    if folder:
        import shutil

        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
