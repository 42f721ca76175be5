"""Bytes of trace definitions rank 0 receives when `cubescale run --trace` writes the archive:
the tree reduction (cubescale.measure.trace) against gathering every rank's definitions to
rank 0 (the way before it), side by side in one run.

    python3 benchmarks/trace_definitions.py              # mpirun -n 2, 4, 8
    python3 benchmarks/trace_definitions.py --ranks 2 4

Each rank traces a program of --functions Python functions that every rank calls (the same
regions everywhere, as in an SPMD program) and one function of its own, in the main thread and
one more thread. "gather" is the sum of the other ranks' definitions (close_trace's bytes:
what rank 0 received before); "tree" is what rank 0 receives now: its children's unified
definitions up the binary tree plus every other rank's summary (host, process, locations,
clock offsets). On a 2-core machine more than two ranks wait for a core: bytes, not times,
are measured.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from cubescale.mpirun import local_environment


def worker(functions: int, directory: str) -> None:
    """Run under mpirun: trace the program, write the archive, print one JSON line on rank 0."""
    import threading

    from mpi4py import MPI

    from cubescale import measure
    from cubescale.measure import trace

    comm = MPI.COMM_WORLD.Dup()
    source = "\n".join(f"def function_{i}(x):\n    return x + {i}\n" for i in range(functions))
    source += f"def only_rank_{comm.rank}(x):\n    return x\n"
    program: dict = {}
    exec(compile(source, "/benchmark/spmd_program.py", "exec"), program)
    calls = [program[f"function_{i}"] for i in range(functions)] + [program[f"only_rank_{comm.rank}"]]

    def run() -> None:
        for f in calls:
            f(1)

    measure.start(auto=True, trace=os.path.join(directory, "trace"), comm=comm)
    run()
    side = threading.Thread(target=run, name="side")
    side.start()
    side.join()
    measure.stop()
    measure.write_trace(comm)
    if comm.rank == 0:
        print(json.dumps(dict(trace.LAST_WRITE, ranks=comm.size)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--functions", type=int, default=300)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--directory", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.functions, args.directory)
        return
    rows = []
    for ranks in args.ranks:
        with tempfile.TemporaryDirectory() as directory:
            passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
            command = ["timeout", "-k", "5", "300", "mpirun", "-n", str(ranks), *passed, sys.executable,
                       str(Path(__file__).resolve()), "--worker", "--functions", str(args.functions),
                       "--directory", directory]
            done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=320)
            if done.returncode != 0:
                raise SystemExit(f"mpirun -n {ranks} failed ({done.returncode}):\n{done.stderr[-3000:]}")
            rows.append(json.loads(next(line for line in done.stdout.splitlines() if line.startswith("{"))))
    print(f"bytes of trace definitions rank 0 receives ({args.functions} shared functions, 2 threads per rank)")
    print("| ranks | gather to rank 0 (before) | tree reduction (now) | now / before |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['ranks']} | {r['gathered']:,} | {r['rank0_received']:,} | {r['rank0_received'] / r['gathered']:.3f} |")


if __name__ == "__main__":
    main()
