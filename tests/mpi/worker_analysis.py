"""Wait-state analysis under mpirun: rank 0 writes the synthetic traces (and a truncated
copy of one), every rank takes part in the replay of each, rank 0 prints one JSON line per
trace: the report's SHA-256 and its non-zero pattern values, or what every rank raised and
which files were left."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys

from mpi4py import MPI

import cubescale
from cubescale import testing
from cubescale.parallel.analysis import analyze_trace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch import run_worker  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from analysis_cases import (  # noqa: E402
    BROKEN,
    CYCLE,
    INTERCOMM,
    OMP,
    SHAPES,
    THREAD_LATENCY,
    TIME_CORRECT,
    TIME_CORRECT_LATENCY,
    pattern_values,
    shared_anchors,
)


def write_synthetic(directory: str) -> None:
    """Rank 0 writes every synthetic shape and broken case (and a truncated event file)."""
    for name, (ranks, end) in SHAPES.items():
        testing.write_mpi_trace(directory, name, ranks, end)
    for name, case in OMP.items():
        testing.write_omp_trace(directory, name, *case)
    for name, case in INTERCOMM.items():
        testing.write_intercomm_trace(directory, name, *case)
    for name, (ranks, _, _) in BROKEN.items():
        testing.write_mpi_trace(directory, name, ranks, 100)
    testing.write_mpi_trace(directory, "cycle", CYCLE, 100)
    ranks, end = SHAPES["chain"]
    testing.write_mpi_trace(directory, "truncated", ranks, end)
    events = os.path.join(directory, "truncated", "1.evt")
    with open(events, "rb") as f:
        data = f.read()
    with open(events, "wb") as f:
        f.write(data[: len(data) // 2])


def main(argv: list[str]) -> int:
    traces, out_dir = argv
    comm = MPI.COMM_WORLD
    traces = os.path.join(traces, f"n{comm.size}")  # each launch writes its own copies
    if comm.rank == 0:
        os.makedirs(traces)
        write_synthetic(traces)
    comm.Barrier()
    anchors = [(name, os.path.join(traces, f"{name}.otf2")) for name in [*SHAPES, *OMP, *INTERCOMM]]
    anchors += [(name, str(anchor)) for name, anchor in shared_anchors()]
    runs = [(name, anchor, False) for name, anchor in anchors]
    runs += [(name, anchor, True) for name, anchor in anchors if name in TIME_CORRECT]
    runs += [(name, anchor, "latency") for name, anchor in anchors if name in TIME_CORRECT_LATENCY]
    runs += [(name, anchor, "checks") for name, anchor in anchors if name in TIME_CORRECT_LATENCY]
    runs += [(name, anchor, "thread") for name, anchor in anchors if name in THREAD_LATENCY]
    for name, anchor, correct in runs:
        key = f"{name}+time-correct" if correct is True else f"{name}+{correct}" if correct else name
        out = os.path.join(out_dir, f"{key}.n{comm.size}.cubex")
        # "checks": the clock checks with the latency, no correction; "thread": corrected with a
        # latency for the OpenMP threads of its own
        latency, thread = THREAD_LATENCY[name] if correct == "thread" else (
            TIME_CORRECT_LATENCY[name] if correct in ("latency", "checks") else 0.0, None)
        stats = analyze_trace(comm, anchor, out, time_correct=correct in (True, "latency", "thread"),
                              min_latency=latency, min_thread_latency=thread)
        if comm.rank == 0:
            with open(out, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            print(json.dumps({"trace": key, "sha256": digest, "shape": stats["shape"], "hand_offs": stats["hand_offs"],
                              "correction": stats["correction"], "values": pattern_values(cubescale.open(out))}),
                  flush=True)
    # Each rank reads its share on 3 threads (uneven parts of its processes), the steps after
    # the reading in chunks of a record at least (so that these small traces are cut too).
    if comm.size <= 2:
        for name, anchor in anchors:
            for correct in (False, True) if name in TIME_CORRECT else (False,):
                key = f"{name}+threads" + ("+time-correct" if correct else "")
                out = os.path.join(out_dir, f"{key}.n{comm.size}.cubex")
                stats = analyze_trace(comm, anchor, out, time_correct=correct, threads=3, chunk_records=1)
                if comm.rank == 0:
                    with open(out, "rb") as f:
                        print(json.dumps({"trace": key, "sha256": hashlib.sha256(f.read()).hexdigest(),
                                          "threads": stats["threads"]}), flush=True)
    for name, anchor in anchors:  # cubescale.analyze over the ranks: rank 0's report has the statistics
        if name not in TIME_CORRECT:
            continue
        for correct in (False, True):
            out = os.path.join(out_dir, f"{name}.stat{int(correct)}.n{comm.size}.cubex")
            report = cubescale.analyze(anchor, out, time_correct=correct, comm=comm)
            if comm.rank == 0:
                stats = dataclasses.asdict(cubescale.analysis.statistics(report))
                print(json.dumps({"trace": f"{name}+statistics{int(correct)}", "statistics": stats}), flush=True)
    broken = [(name, name == "cycle") for name in [*BROKEN, "truncated", "cycle"]]
    broken += [(name, True) for name in BROKEN]  # the same errors after a time correction
    for name, correct in broken:
        key = f"{name}+time-correct" if correct and name != "cycle" else name
        out = os.path.join(out_dir, f"{key}.n{comm.size}.cubex")
        raised = ""
        try:
            analyze_trace(comm, os.path.join(traces, f"{name}.otf2"), out, time_correct=correct)
        except cubescale.FormatError as e:
            raised = str(e)
        everyone = comm.gather(raised, root=0)
        comm.Barrier()
        if comm.rank == 0:
            left = sorted(f for f in os.listdir(out_dir) if f.startswith(f"{key}.n{comm.size}"))
            print(json.dumps({"trace": key, "raised": everyone, "left": left}), flush=True)
    return 0


if __name__ == "__main__":
    run_worker(main)
