"""Benchmark: reading OTF2 traces, ours vs the OTF2 C library alone vs OTF2's Python bindings.

For the largest shared trace (by events) and a generated trace (OTF2 writer API through
``cubescale.testing.write_ring_trace``; ``--iterations`` per process, 18 events each) it prints
events per second of:

* limit       — libotf2 reading every event with callbacks that do nothing (the C library
                alone: what any reader over it can reach);
* reader      — our reader: every event decoded into an ``Event`` and handed to a sink that
                counts them per type (``Trace.event_counts``);
* profile     — trace -> call-path profile kernel (``Trace.local_profile``, all locations);
* DataFrame   — ``Trace.events()``: NumPy columns in C++ and the pandas frame;
* py reader   — OTF2's Python bindings (``otf2.reader``) iterating every event;
* py frame    — the bindings building the same kind of DataFrame row by row (time, location,
                type, region name) as a notebook would without us;

and the mpirun conversion ``profile_trace`` (read, unify, collate, write) at 1, 2, 4 ranks.
Python bindings run on the shared trace and on a 1 M-event generated trace only (they need
minutes for 50 M); the DataFrame on the large trace holds ``--frame-locations`` of its
locations (memory). Times are the best of ``--repeat`` runs, page cache warm.

Run (from the repository root, with a build in build-dev; Debian's python3-otf2 for the
bindings)::

    CUBESCALE_DEV_BUILD=build-dev PYTHONPATH=python:/usr/lib/python3/dist-packages \\
        python3 benchmarks/otf2_read.py --iterations 350000

Benchmarks are not tests: they print a table and exit 0.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

import cubescale.trace as trace
from cubescale import testing
from cubescale.mpirun import local_environment

HERE = os.path.dirname(os.path.abspath(__file__))


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return min(times)


def python_bindings():
    try:
        import otf2 as bindings  # Debian python3-otf2 (import path: /usr/lib/python3/dist-packages)
    except ImportError:
        return None
    if not hasattr(bindings, "reader"):
        return None
    return bindings


def py_read(bindings, path: str) -> int:
    n = 0
    with bindings.reader.open(path) as trace:
        for _location, _event in trace.events:
            n += 1
    return n


def py_frame(bindings, path: str):
    import pandas as pd

    rows = []
    with bindings.reader.open(path) as trace:
        for location, event in trace.events:
            region = getattr(event, "region", None)
            rows.append((event.time, location.name, type(event).__name__, region.name if region is not None else None))
    return pd.DataFrame(rows, columns=["Timestamp", "Location", "Event Type", "Name"])


def mpi_worker(path: str, out: str) -> None:
    from mpi4py import MPI

    from cubescale.parallel.trace import profile_trace

    comm = MPI.COMM_WORLD
    comm.Barrier()
    start = time.perf_counter()
    stats = profile_trace(comm, path, out)
    comm.Barrier()
    seconds = time.perf_counter() - start
    if comm.rank == 0:
        print(json.dumps({"seconds": seconds, "events": stats["events"], "read": stats["read_seconds"]}), flush=True)


def mpirun(ranks: int, path: str, out: str) -> dict:
    env = local_environment()
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in env for a in ("-x", k)]
    command = ["timeout", "-k", "5", "3600", "mpirun", "-n", str(ranks), *passed, sys.executable,
               os.path.abspath(__file__), "--mpi-worker", path, out]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True)
    return json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])


def measure(name: str, path: str, repeat: int, frame_locations: int | None, bindings, ranks: list[int]) -> list[str]:
    trace = trace.open(path)
    events = int(trace.locations["events"].sum())
    rows = []

    def rate(seconds: float, n: int = events) -> str:
        return f"{n / seconds / 1e6:8.2f} M/s ({seconds:7.3f} s)"

    limit = best(lambda: testing.read_with_empty_callbacks(trace), repeat)
    reader = best(lambda: trace.event_counts(), repeat)
    kernel = best(lambda: trace.local_profile(), repeat)
    locations = None if frame_locations is None else list(range(min(frame_locations, len(trace.locations))))
    frame_events = events if locations is None else int(trace.locations["events"][locations].sum())
    frame = best(lambda: trace.events(locations=locations), max(1, repeat - 1))
    rows.append(f"{name}: {events:,} events, {len(trace.locations)} locations")
    rows.append(f"  limit (libotf2, empty callbacks)  {rate(limit)}")
    rows.append(f"  reader (ours, counting sink)      {rate(reader)}   {reader / limit:5.2f}x the limit's time")
    rows.append(f"  profile kernel (ours)             {rate(kernel)}   {limit / kernel * 100:5.1f}% of the limit's rate")
    rows.append(f"  DataFrame (ours)                  {rate(frame, frame_events)}"
                + (f"   ({len(locations)} locations)" if locations is not None else ""))
    if bindings is not None and events <= 2_000_000:
        try:
            py = best(lambda: py_read(bindings, path), 1)
            pyf = best(lambda: py_frame(bindings, path), 1)
            rows.append(f"  py reader (otf2 bindings)         {rate(py)}")
            rows.append(f"  py frame (otf2 bindings)          {rate(pyf)}   "
                        f"ours {pyf / frame * frame_events / events:6.1f}x faster")
        except Exception as e:  # noqa: BLE001 - the bindings reject some real traces
            rows.append(f"  otf2 bindings: cannot read this trace ({type(e).__name__}: {str(e)[:60]})")
    for k in ranks:
        with tempfile.TemporaryDirectory() as tmp:
            r = min((mpirun(k, path, os.path.join(tmp, "p.cubex")) for _ in range(max(1, repeat - 1))),
                    key=lambda x: x["seconds"])
        rows.append(f"  trace-profile mpirun -n {k}          {rate(r['seconds'])}   (share read+kernel {r['read']:.3f} s)")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=350_000, help="per process of the generated trace (18 events)")
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--frame-locations", type=int, default=2, help="locations of the large trace in the DataFrame")
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--dir", default=None, help="where to write the generated traces (default: a temporary dir)")
    parser.add_argument("--mpi-worker", nargs=2, metavar=("TRACE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mpi_worker:
        mpi_worker(*args.mpi_worker)
        return 0
    ranks = [int(x) for x in args.ranks.split(",") if x]
    bindings = python_bindings()
    shared = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "otf2")
    anchors = [os.path.join(shared, d, a) for d in sorted(os.listdir(shared))
               for a in sorted(os.listdir(os.path.join(shared, d))) if a.endswith(".otf2")]
    largest = max(anchors, key=lambda a: int(trace.open(a).locations["events"].sum()))
    work = args.dir or tempfile.mkdtemp(prefix="otf2bench")
    small = os.path.join(work, "small.otf2")
    if not os.path.exists(small):
        testing.write_ring_trace(work, "small", processes=4, iterations=1_000_000 // (4 * 18))
    big = os.path.join(work, f"big{args.processes}x{args.iterations}.otf2")
    if not os.path.exists(big):
        start = time.perf_counter()
        n = testing.write_ring_trace(work, os.path.basename(big)[:-5], processes=args.processes,
                                         iterations=args.iterations)
        print(f"generated {n:,} events in {time.perf_counter() - start:.1f} s: {big}", flush=True)
    print(f"python bindings: {'otf2 ' + getattr(bindings, '__version__', '') if bindings else 'not installed'}")
    by_size = sorted(anchors, key=lambda a: int(trace.open(a).locations["events"].sum()))
    for name, path, frame_locations in [(f"shared {os.path.basename(os.path.dirname(largest))}", largest, None),
                                        (f"shared {os.path.basename(os.path.dirname(by_size[-2]))}", by_size[-2], None),
                                        ("generated 1M", small, None),
                                        ("generated large", big, args.frame_locations)]:
        for line in measure(name, path, args.repeat, frame_locations, bindings, ranks):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
