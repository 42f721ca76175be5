"""Trace metrics staged over MPI (paper 004), in one run: metric events per second of the
staged evaluation of energy per FLOP (each worker reads its share of the locations' Metric
events, resamples and aggregates, partials reduced along a tree) vs reading the same events
with the OTF2 library alone (empty callbacks, one process), and the largest message vs the
number of events, at 1, 2, 4, 8 workers on this machine's 2 cores.

    python benchmarks/trace_metrics.py [--seconds 200] [--rates 100 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from cubescale import testing
from cubescale.mpirun import local_environment

EPF = ('"energy" "stairstep" source-counter "sum" aggregate "0" diff-quot '
       '"PAPI_FP_OPS" "stairstep" source-counter "sum" aggregate "0" diff-quot /')
HERE = os.path.dirname(os.path.abspath(__file__))


def worker(path: str, points: int) -> None:
    from mpi4py import MPI

    from cubescale.parallel import evaluate_trace

    comm = MPI.COMM_WORLD
    best = None
    for _ in range(3):
        comm.Barrier()
        start = time.perf_counter()
        _, values, stats = evaluate_trace(comm, path, EPF, "machine", points=points)
        seconds = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
        best = seconds if best is None else min(best, seconds)
    events = comm.allreduce(stats["metric_events"], op=MPI.SUM)
    largest = comm.allreduce(stats["message_bytes"], op=MPI.MAX)
    if comm.rank == 0:
        print(json.dumps({"seconds": best, "events": events, "message_bytes": largest,
                          "value": float(values[len(values) // 2])}), flush=True)


def run(ranks: int, path: str, points: int) -> dict:
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    done = subprocess.run(["timeout", "-k", "5", "900", "mpirun", "-n", str(ranks), *passed, sys.executable, __file__,
                           "--worker", path, "--points", str(points)],
                          env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=200, help="trace length in seconds of samples")
    parser.add_argument("--rates", type=int, nargs="+", default=[100, 1000], help="samples per second")
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--points", type=int, default=1001)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.points)
        return 0
    from cubescale import trace

    print(f"synthetic machine: 4 nodes x 2 packages x 8 cores + 1 GPU per node; energy per FLOP of the machine "
          f"on {args.points} points; best of 3")
    print("| samples/s | metric events | workers | staged s | M events/s | OTF2 alone s | M events/s | ours / OTF2 "
          "time | largest message B |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for rate in args.rates:
            path = testing.write_hardware_trace(os.path.join(tmp, f"r{rate}"), "traces", nodes=4, cores_per_package=8,
                                             seconds=args.seconds, samples_per_second=rate)
            trace = trace.open(path)
            limit = min(_timed(lambda: testing.read_with_empty_callbacks(trace)) for _ in range(3))
            for ranks in args.ranks:
                r = run(ranks, path, args.points)
                ev = r["events"]
                print(f"| {rate} | {ev:,} | {ranks} | {r['seconds']:.3f} | {ev / r['seconds'] / 1e6:.2f} | "
                      f"{limit:.3f} | {ev / limit / 1e6:.2f} | {r['seconds'] / limit:.2f} | {r['message_bytes']} |",
                      flush=True)
    return 0


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
