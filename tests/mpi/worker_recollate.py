"""A real report collated again under mpirun (cubescale.parallel.recollate): rank r holds a
contiguous block of the report's processes. Rank 0 prints one JSON line per report with the
file's SHA-256 (compared across numbers of ranks by the test), the number of (metric, call
path) rows that differ from the source bit for bit, whether the machine (location names,
process names and <rank>s) is the source's, and the writer's buffers against the budget.
Scenario ``broken``: a truncated report; every rank must raise and no file may be left."""

from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np
from launch import run_worker
from mpi4py import MPI
from worker_threads import call_paths

import cubescale
from cubescale.parallel.recollate import recollate

BUDGET = 4096  # many blocks, and rows of 128 locations x 36 bytes (TAU_ATOMIC) in pieces


def mismatches(again, source) -> int:
    row_of = {p: i for i, p in enumerate(call_paths(again))}
    rows = [row_of[p] for p in call_paths(source)]
    differ = 0
    for m in source.metrics:
        a = np.ascontiguousarray(np.asarray(again.values(m.name, inclusive=None))[rows])
        b = np.ascontiguousarray(np.asarray(source.values(m, inclusive=None)))
        differ += int((a.view(np.uint8).reshape(len(rows), -1) != b.view(np.uint8).reshape(len(rows), -1))
                      .any(axis=1).sum())
    return differ


def machine(report) -> list[tuple]:
    return [(loc.name, loc.process, loc.process_rank) for loc in report.locations]


def broken(comm, data: str, out_dir: str) -> None:
    path = os.path.join(out_dir, f"broken.n{comm.size}.cubex")
    if comm.rank == 0:
        with open(os.path.join(data, "cubex", "bt-mz.B.8x4.cubex"), "rb") as f:
            whole = f.read()
        with open(path, "wb") as f:
            f.write(whole[: len(whole) // 2])
    comm.Barrier()
    out = os.path.join(out_dir, f"broken.out.n{comm.size}.cubex")
    raised = ""
    try:
        recollate(comm, path, out)
    except Exception as e:  # noqa: BLE001
        raised = f"{type(e).__name__}: {e}"
    everyone = comm.gather(raised, root=0)
    comm.Barrier()
    if comm.rank == 0:
        left = sorted(f for f in os.listdir(out_dir) if f.startswith(f"broken.out.n{comm.size}"))
        print(json.dumps({"report": "broken", "raised": everyone, "left": left}), flush=True)


def main(argv: list[str]) -> int:
    comm = MPI.COMM_WORLD
    data, out_dir, names = argv[0], argv[1], argv[2:]
    for name in names:
        source_path = os.path.join(data, "cubex", name)
        out = os.path.join(out_dir, f"{name}.n{comm.size}.cubex")
        costs = recollate(comm, source_path, out, block_bytes=BUDGET)
        shares = comm.gather(costs["locations"], root=0)
        if comm.rank == 0:
            source, again = cubescale.open(source_path), cubescale.open(out)
            with open(out, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            print(json.dumps({"report": name, "sha256": digest, "mismatches": mismatches(again, source),
                              "same_machine": machine(again) == machine(source), "shares": shares,
                              "writer_buffer_bytes": costs["collate"]["writer_buffer_bytes"]}), flush=True)
    broken(comm, data, out_dir)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    run_worker(main)
