"""The wait-state analysis' pass over the events, part by part (issue #26, speed): CPU seconds
(best of ``--repeat``) on a generated ring of ``--processes`` MPI processes (send, receive and
allreduce per iteration) of reading the events with libotf2 alone (empty callbacks: the limit),
the trace -> profile builder alone, the records-only replay's extraction (``Replay(trace,
locations, locations)``), the complete replay's extraction (every observer beside the records,
``complete=True``) and the whole one-process analysis (``_core.analysis.analyze``); with
``--baseline`` another installation's interpreter measures the same parts on the same trace,
the two alternating ``--rounds`` times, so that both see the same load.

    python benchmarks/waitstate_pass.py [--iterations 250000] [--processes 4] [--repeat 3]
                                        [--rounds 2] [--baseline OTHER_PYTHON]

CPU seconds (process_time: all threads of the process) are the stable measure on a shared
machine; wall seconds move with the load.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from ring_rounds import add_ring_arguments, alternating_rounds, measured_by

PARTS = ["limit", "profile", "records", "complete", "analyze"]


def measure(path: str, repeat: int) -> dict[str, float]:
    """CPU seconds of each part (best of ``repeat``) with this interpreter's cubescale."""
    from cubescale import testing
    from cubescale._core import analysis as _analysis
    from cubescale.trace import open as open_trace

    trace = open_trace(path)
    locations = trace.location_indices()
    runs = {
        "limit": lambda: testing.read_with_empty_callbacks(trace, locations),
        "profile": lambda: trace._core.profile(locations),
        "records": lambda: _analysis.Replay(trace._core, locations, locations),
        "complete": lambda: _analysis.Replay(trace._core, locations, locations, complete=True),
        "analyze": lambda: _analysis.analyze(trace._core, locations),
    }
    out = {}
    for part in PARTS:
        times = []
        for _ in range(repeat):
            cpu = time.process_time()
            runs[part]()
            times.append(time.process_time() - cpu)
        out[part] = min(times)
    return out


def elsewhere(python: str, path: str, repeat: int) -> dict[str, float]:
    """The same parts measured by another interpreter (its own cubescale installation)."""
    return measured_by(python, __file__, path, str(repeat))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        print(json.dumps(measure(sys.argv[2], int(sys.argv[3]))), flush=True)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_ring_arguments(parser, iterations=250000, rounds=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    events, rows = alternating_rounds(args, lambda python, path: elsewhere(python, path, args.repeat))
    print(f"ring of {args.processes} processes, {events:,} events; CPU seconds, best of {args.repeat} "
          f"in each of {args.rounds} alternating rounds (the best round's, then every round's)")
    print("| part | this | baseline | this, per round | baseline, per round | this: of the limit's rate |")
    print("|---|---:|---:|---|---|---:|")
    limit = min(r["limit"] for r in rows["this"])
    for part in PARTS:
        mine = [r[part] for r in rows["this"]]
        base = [r[part] for r in rows["baseline"]]
        print(f"| {part} | {min(mine):.3f} | {min(base):.3f} | " if base else f"| {part} | {min(mine):.3f} | | ",
              end="")
        print(f"{' / '.join(f'{x:.3f}' for x in mine)} | {' / '.join(f'{x:.3f}' for x in base)} | "
              f"{limit / min(mine) * 100:.0f} % |")


if __name__ == "__main__":
    main()
