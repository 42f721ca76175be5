"""Cost of the clock checks, the time correction and the Late Receiver / non-blocking
collective extraction of ``cubescale analyze`` (issue #26, parts 1 and 3), in one run: seconds
and events per second of the whole analysis without and with ``--time-correct`` (best of
three) side by side with the trace -> profile kernel alone (the baseline the analysis extends),
on the largest shared trace with MPI and on a generated ring (send, receive and allreduce in
every iteration); the bytes kept beside the wait-state records per communication event.

    python benchmarks/clock_correction.py [--iterations 250000] [--processes 4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from cubescale import testing
from cubescale._core import analysis as _analysis
from cubescale.trace import open as open_trace

SEND_COMPLETION_BYTES, RECEIVE_POSTED_BYTES = 32, 8  # analysis/late_receiver.hpp


def best(function, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(name: str, path: str) -> None:
    trace = open_trace(path)
    locations = trace.location_indices()
    events = int(trace.locations["events"].sum())
    profile = best(lambda: trace._core.profile(locations))
    plain = best(lambda: _analysis.analyze(trace._core, locations))
    corrected = best(lambda: _analysis.analyze(trace._core, locations, time_correct=True))
    stats = _analysis.analyze(trace._core, locations, time_correct=True)[1]
    for label, seconds in (("profile (baseline)", profile), ("analysis", plain), ("analysis --time-correct", corrected)):
        print(f"| {name} | {events:,} | {label} | {seconds:.3f} | {events / seconds / 1e6:.2f} | "
              f"{seconds / profile:.2f}x |")
    # every message is one send and one receive: half the message records are sends
    extra = stats["messages"] // 2 * (SEND_COMPLETION_BYTES + RECEIVE_POSTED_BYTES)
    print(f"| {name} | {stats['messages']:,} message events | extras | {extra / 2**20:.1f} MiB | "
          f"{extra / max(stats['messages'], 1):.1f} B/event | violations {stats['p2p_violations']} p2p, "
          f"{stats['collective_violations']} coll., {stats['corrected_jumps']} jumps |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=250000)
    parser.add_argument("--processes", type=int, default=4)
    args = parser.parse_args()
    print("| trace | events | what | seconds | M events/s | vs profile |")
    print("|---|---|---|---|---|---|")
    shared = os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                                  "shared", "data"))
    folder = os.path.join(shared, "otf2", "jacobi-hybrid")
    measure("jacobi-hybrid", os.path.join(folder, sorted(f for f in os.listdir(folder) if f.endswith(".otf2"))[0]))
    folder = tempfile.mkdtemp()
    try:
        testing.write_ring_trace(folder, "ring", processes=args.processes, iterations=args.iterations,
                                 counters=False)
        measure(f"generated ring ({args.processes} processes)", os.path.join(folder, "ring.otf2"))
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
