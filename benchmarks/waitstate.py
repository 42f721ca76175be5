"""Wait-state analysis (one process, this slice of issue #26), in one run: events per second of
the whole analysis (profile + record extraction + matching + metric tree) vs the trace ->
profile kernel alone and vs reading the same events with the OTF2 library alone (empty
callbacks: the limit), best of three, on the largest shared trace with MPI and on a generated
trace (a ring of MPI processes: send, receive and allreduce in every iteration), plus the
records' bytes per communication event.

    python benchmarks/waitstate.py [--iterations 250000] [--processes 4]

The replay over MPI ranks (1, 2, 4 ranks) and peak memory per rank are not measured: the
replay is not written yet.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import cubescale.otf2 as otf2
from cubescale import testing
from cubescale._core import analysis as _analysis

MESSAGE_RECORD_BYTES, COLLECTIVE_RECORD_BYTES = 64, 56  # analysis/waitstates.hpp (static_asserts)


def best(function, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(name: str, path: str) -> None:
    trace = otf2.open(path)
    locations = trace.location_indices()
    events = int(trace.locations["events"].sum())
    limit = best(lambda: testing.read_with_empty_callbacks(trace, locations))
    profile = best(lambda: trace._core.profile(locations))
    analysis = best(lambda: _analysis.analyze(trace._core, locations))
    stats = _analysis.analyze(trace._core, locations)[1]
    record_bytes = stats["messages"] * MESSAGE_RECORD_BYTES + stats["collectives"] * COLLECTIVE_RECORD_BYTES
    communication = stats["messages"] + stats["collectives"]
    for label, seconds in (("read (limit)", limit), ("profile", profile), ("analysis", analysis)):
        print(f"| {name} | {events:,} | {label} | {seconds:.3f} | {events / seconds / 1e6:.2f} | "
              f"{limit / seconds * 100:.0f} % |")
    print(f"| {name} | {communication:,} communication events | records | {record_bytes / 2**20:.1f} MiB | "
          f"{record_bytes / max(communication, 1):.1f} B/event | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=250000)
    parser.add_argument("--processes", type=int, default=4)
    args = parser.parse_args()
    print("| trace | events | what | seconds | M events/s | of the limit |")
    print("|---|---|---|---|---|---|")
    shared = os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                                  "shared", "data"))
    measure("jacobi-hybrid", os.path.join(shared, "otf2", "jacobi-hybrid", "traces.otf2"))
    folder = tempfile.mkdtemp()
    try:
        testing.write_ring_trace(folder, "ring", processes=args.processes, iterations=args.iterations,
                                     counters=False)
        measure(f"generated ring ({args.processes} processes)", os.path.join(folder, "ring.otf2"))
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
