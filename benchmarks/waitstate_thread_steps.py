"""The one-process wait-state analysis step by step on one thread and on several (issue #26,
speed): per step of ``cubescale._core.analysis.analyze`` (its ``seconds``) the best of
``--rounds`` on a generated ring of ``--processes`` MPI processes (send, receive and allreduce
per iteration), on 1 thread and on ``--threads`` (default: this machine's cores); with
``--baseline`` another installation's interpreter runs the same analyses, the two alternating,
so that both see the same load. A step that takes longer on more threads than on one does
work that the threads get in each other's way for.

    python benchmarks/waitstate_thread_steps.py [--iterations 900000] [--processes 4] [--threads N]
                                                [--rounds 3] [--baseline OTHER_PYTHON]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ring_rounds import add_ring_arguments, alternating_rounds, measured_by


def measure(path: str, threads: list[int]) -> None:
    """Prints per thread count the analysis' seconds per step, as one JSON line."""
    from cubescale._core import analysis as _analysis
    from cubescale.trace import open as open_trace

    trace = open_trace(path)
    locations = trace.location_indices()
    seconds = {str(t): _analysis.analyze(trace._core, locations, threads=t)[1]["seconds"] for t in threads}
    print(json.dumps(seconds), flush=True)


def elsewhere(python: str, path: str, threads: list[int]) -> dict[str, dict[str, float]]:
    """``measure`` run by ``python``."""
    return measured_by(python, __file__, path, *map(str, threads))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        measure(sys.argv[2], [int(t) for t in sys.argv[3:]])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_ring_arguments(parser, iterations=900000, rounds=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    if args.threads < 1:
        parser.error("--threads: a whole number of at least 1")
    counts = sorted({1, args.threads})  # --threads 1: one column per side, not the same twice
    events, runs = alternating_rounds(args, lambda python, path: elsewhere(python, path, counts))
    sides = ["this"] + (["baseline"] if args.baseline else [])
    columns = [(str(t), side) for t in counts for side in sides]
    print(f"ring of {args.processes} processes, {events:,} events; per step of the one-process analysis its "
          f"seconds, best of {args.rounds} alternating rounds")
    print("| step | " + " | ".join(f"{t} thread{'s' * (t != '1')}, {side}" for t, side in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    steps = list(runs["this"][0][str(counts[0])])
    best = {(t, side): {s: min(r[t].get(s, 0.0) for r in runs[side]) for s in steps} for t, side in columns}
    for step in steps + ["all"]:
        cells = [sum(best[c].values()) if step == "all" else best[c][step] for c in columns]
        if step == "all" or max(cells) >= 0.001:
            print(f"| {step} | " + " | ".join(f"{x:.3f}" for x in cells) + " |")


if __name__ == "__main__":
    main()
