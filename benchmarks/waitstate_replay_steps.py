"""The wait-state replay under mpirun, step by step (issue #26, speed): per step of
``cubescale.parallel.analysis.analyze_trace`` (each ``_step``: the core's work on a rank, not
the wait for the other ranks) the seconds of the rank that took longest, best of ``--rounds``,
on a generated ring of ``--processes`` MPI processes (send, receive and allreduce per
iteration) at ``--ranks`` ranks; with ``--baseline`` another installation's interpreter runs
the same replay, the two alternating, so that both see the same load. The whole replay's wall
seconds too.

    python benchmarks/waitstate_replay_steps.py [--iterations 900000] [--processes 4] [--ranks 2]
                                                [--rounds 3] [--baseline OTHER_PYTHON] [--unbound]

With two cores, more than 2 ranks wait for a core: their steps' seconds include that wait.
``--unbound``: ``mpirun --bind-to none`` (Open MPI binds up to 2 ranks to a core each else), so
that a rank reads its share and takes the steps after on a thread per core it may run on.
"""

from __future__ import annotations

import argparse
import collections
import json
import linecache
import os
import subprocess
import sys
import time

from ring_rounds import add_ring_arguments, alternating_rounds


def measure(path: str, output: str) -> None:
    """One replay under mpirun (run by every rank): prints rank 0's JSON of every rank's seconds
    per step."""
    from mpi4py import MPI

    import cubescale.parallel.analysis as replay

    comm = MPI.COMM_WORLD
    work: collections.Counter = collections.Counter()
    checked = replay.raise_everywhere

    def timed_step(comm_, step):
        name = getattr(step, "__name__", "?")
        if name == "<lambda>":  # its line in parallel/analysis.py names it
            code = step.__code__
            line = linecache.getline(code.co_filename, code.co_firstlineno).strip()
            name = line[line.find("replay."):].split("(")[0] if "replay." in line else f"line {code.co_firstlineno}"
        start = time.perf_counter()
        error, result = None, None
        try:
            result = step()
        except Exception as e:  # noqa: BLE001 - every rank raises it below, as _step does
            error = e
        work[name] += time.perf_counter() - start
        checked(comm_, error)
        return result

    replay._step = timed_step
    start = time.perf_counter()
    replay.analyze_trace(comm, path, output)
    total = time.perf_counter() - start
    everyone = comm.gather((dict(work), total), root=0)
    if comm.rank == 0:
        print(json.dumps(everyone), flush=True)


def elsewhere(python: str, path: str, ranks: int, output: str, unbound: bool = False) -> tuple[dict[str, float], float]:
    """One replay by ``python`` at ``ranks`` ranks (``unbound``: ``--bind-to none``): per step the
    slowest rank's seconds, and the slowest rank's whole replay."""
    from cubescale.mpirun import local_environment

    command = ["timeout", "-k", "5", "900", "mpirun", "-n", str(ranks)] + (["--bind-to", "none"] if unbound else []) + [
               python, os.path.abspath(__file__), "--measure", path, output]
    done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{python} failed:\n{done.stderr[-2000:]}")
    everyone = json.loads(done.stdout.splitlines()[-1])
    steps: dict[str, float] = {}
    for work, _ in everyone:
        for name, seconds in work.items():
            steps[name] = max(steps.get(name, 0.0), seconds)
    return steps, max(total for _, total in everyone)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        measure(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_ring_arguments(parser, iterations=900000, rounds=3)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--unbound", action="store_true", help="mpirun --bind-to none: a rank on every core")
    args = parser.parse_args()

    def replay(python: str, path: str) -> tuple[dict[str, float], float]:
        return elsewhere(python, path, args.ranks, os.path.join(os.path.dirname(path), "out.cubex"), args.unbound)

    events, runs = alternating_rounds(args, replay)
    binding = " (--bind-to none)" if args.unbound else ""
    print(f"ring of {args.processes} processes, {events:,} events, {args.ranks} ranks{binding}; per step the slowest "
          f"rank's seconds of work, best of {args.rounds} alternating rounds (steps over 0.01 s)")
    print("| step | this s | baseline s | this, per round | baseline, per round |")
    print("|---|---:|---:|---|---|")
    names = sorted({n for steps, _ in runs["this"] + runs["baseline"] for n in steps},
                   key=lambda n: -max(steps.get(n, 0.0) for steps, _ in runs["this"]))
    rows = [(n, [s.get(n, 0.0) for s, _ in runs["this"]], [s.get(n, 0.0) for s, _ in runs["baseline"]])
            for n in names]
    rows.append(("whole replay (wall)", [t for _, t in runs["this"]], [t for _, t in runs["baseline"]]))
    for name, mine, base in rows:
        if max(mine + base) < 0.01:
            continue
        best_base = f"{min(base):.3f}" if base else ""
        print(f"| {name} | {min(mine):.3f} | {best_base} | {' / '.join(f'{x:.3f}' for x in mine)} | "
              f"{' / '.join(f'{x:.3f}' for x in base)} |")


if __name__ == "__main__":
    main()
