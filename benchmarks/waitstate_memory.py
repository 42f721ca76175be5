"""Memory of the wait-state replay step by step (issue #26): the bytes of records and of the
buffers beside them (``Replay.record_bytes() + Replay.beside_bytes()``) per communication
event of each rank's share, at their largest in each phase of the complete replay (extraction;
rounds begun; during the message rounds; after ``messages_beside``; every later step), with
the ranks' exchanges done by hand in one process (``cubescale.testing.replay_memory``: as
``parallel.analysis`` runs the steps under mpirun, without MPI). Beside this installation,
``--baseline`` runs the same traces in another installation's interpreter, side by side in one
run (the numbers do not depend on the load); one older than ``replay_memory`` runs this
checkout's over its own core.

    python benchmarks/waitstate_memory.py [--baseline OTHER_PYTHON] [--iterations 8000] [--time-correct]
                                          [--data ../shared/data]

``--time-correct`` runs the correction's steps first (``testing.CORRECTION_PHASES``: between
its steps, and the most held inside its moves); its baseline must count the correction's
buffers (``Replay.correction_peak_bytes``, c18c285 or later).

The traces, written once by this installation: the ring of ``tests/test_analysis_waitstates``
(send, receive and allreduce per iteration; 500 iterations), messages only (``testing.
messages_only_run``: blocking, half non-blocking, only non-blocking), the one-way case of
``testing.one_way_run`` (two pairs, every message its own tag) and ``testing.irecv_one_way_run``:
one process sending 20,000 blocking messages to one receiving them by ``MPI_Irecv``/``MPI_Wait``
(one tag, and every message its own tag in a scrambled order: out of queue order), at 1, 2 and 4 ranks (the
last at 1 and 2: two processes).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile


def write_traces(directory: str, iterations: int, data: str | None = None) -> list[tuple[str, str, list[int]]]:
    """(name, path, rank counts) of the traces measured, written into ``directory`` (with
    ``data``, the shared data's directory, jacobi-hybrid first: two processes, OpenMP)."""
    from cubescale import testing

    cases = [("ring", None), ("blocking messages only", testing.messages_only_run(2000, False)),
             ("half non-blocking messages", testing.messages_only_run(2000, True)),
             ("only non-blocking messages", testing.messages_only_run(iterations, True, True)),
             ("one-way, a tag each", testing.one_way_run(20_000, 2)),
             ("MPI_Irecv receiver, one tag", testing.irecv_one_way_run(20_000, False)),
             ("MPI_Irecv receiver, a tag each", testing.irecv_one_way_run(20_000, True))]
    out = []
    jacobi = os.path.join(data or "", "otf2", "jacobi-hybrid", "traces.otf2")
    if data and os.path.exists(jacobi):
        out.append(("jacobi-hybrid (shared)", jacobi, [1, 2]))
    for k, (name, calls) in enumerate(cases):
        if calls is None:
            testing.write_ring_trace(directory, f"t{k}", processes=4, iterations=500, counters=False)
        else:
            testing.write_mpi_trace(directory, f"t{k}", *calls)
        out.append((name, os.path.join(directory, f"t{k}.otf2"), [1, 2] if "Irecv" in name else [1, 2, 4]))
    return out


def replay_memory():
    """``cubescale.testing.replay_memory``; in a baseline installation older than it, this
    checkout's, run over the baseline's core (its Replay steps are the same)."""
    from cubescale import testing

    if hasattr(testing, "replay_memory"):
        return testing.replay_memory
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "cubescale", "testing.py")
    spec = importlib.util.spec_from_file_location("cubescale._testing_of_this_checkout", here)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "cubescale"  # its relative imports: the baseline's core and parallel modules
    spec.loader.exec_module(module)
    return module.replay_memory


def measure(traces: list[tuple[str, str, list[int]]], time_correct: bool = False) -> list[dict]:
    measured = replay_memory()
    extra = {"time_correct": True} if time_correct else {}
    return [{"trace": name, "ranks": n, "phases": measured(path, n, **extra).phases}
            for name, path, counts in traces for n in counts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="interpreter of another cubescale installation, run side by side")
    parser.add_argument("--iterations", type=int, default=8000, help="of the only-non-blocking trace")
    parser.add_argument("--time-correct", action="store_true", help="with the --time-correct steps first")
    parser.add_argument("--data", default=os.environ.get("CUBESCALE_SHARED_DATA"),
                        help="the shared data (adds jacobi-hybrid)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # JSON of the traces: measure them, print JSON
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(json.loads(args.worker), args.time_correct)), flush=True)
        return
    with tempfile.TemporaryDirectory() as directory:
        traces = write_traces(directory, args.iterations, args.data)
        rows = {"this": measure(traces, args.time_correct)}
        if args.baseline:
            done = subprocess.run([args.baseline, os.path.abspath(__file__), "--worker", json.dumps(traces)] +
                                  (["--time-correct"] if args.time_correct else []),
                                  capture_output=True, text=True, timeout=3000, cwd=directory)
            if done.returncode:
                raise SystemExit(f"baseline failed:\n{done.stderr[-2000:]}")
            rows["baseline"] = json.loads(done.stdout.strip().splitlines()[-1])
    phases = list(rows["this"][0]["phases"])

    print("bytes of records and buffers per own communication event, each rank's largest in the phase (rank 0 / 1 / ...)")
    print("| trace | ranks | build | " + " | ".join(phases) + " | largest |")
    print("|---|---:|---|" + "---:|" * (len(phases) + 1))
    for k in range(len(rows["this"])):
        for build in rows:
            r = rows[build][k]
            cells = ["/".join(f"{x:.1f}" for x in r["phases"][p]) for p in phases]
            largest = max(max(v) for v in r["phases"].values())
            print(f"| {r['trace']} | {r['ranks']} | {build} | " + " | ".join(cells) + f" | {largest:.1f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
