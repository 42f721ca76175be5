"""Staged evaluation under mpirun: every rank owns a round-robin share of the synthetic
machine's timelines (tests/timeline_machines.py) and evaluates expressions for the machine,
a node and a package; rank 0 prints one JSON line per (expression, target, samples) with the
values' SHA-256 (bitwise identity across worker counts), the values and the largest message."""

from __future__ import annotations

import hashlib
import json
import os
import sys

from launch import run_worker
from mpi4py import MPI

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from timeline_machines import SECONDS, machine  # noqa: E402
from timeline_machines import store as machine_store  # noqa: E402

from cubescale.parallel import evaluate_staged  # noqa: E402
from cubescale.parallel.collective import CollectiveError  # noqa: E402

EXPRESSIONS = {
    "energy_per_flop": ('"energy" "stairstep" source-counter "sum" aggregate "0" diff-quot '
                        '"flops" "stairstep" source-counter "sum" aggregate "0" diff-quot /'),
    "watts": '"energy" "stairstep" source-counter "sum" aggregate "0" diff-quot',
    "max_flops": '"flops" "stairstep" source-counter "max" aggregate',
}


def main(argv: list[str]) -> int:
    comm = MPI.COMM_WORLD
    _, kinds = machine()
    targets = {"machine": 0, "node": kinds["node"][1], "package": kinds["package"][0]}
    for samples in (1, 50):  # 50x the events: the same values on the grid, the same messages
        store = machine_store(comm.rank, comm.size, samples)
        for name, text in EXPRESSIONS.items():
            for where, target in targets.items():
                t, v, stats = evaluate_staged(comm, text, store, target, points=SECONDS + 1)
                largest = comm.reduce(stats["message_bytes"], op=MPI.MAX, root=0)
                if comm.rank == 0:
                    print(json.dumps({"expression": name, "target": where, "samples": samples,
                                      "sha256": hashlib.sha256(v.tobytes()).hexdigest(), "values": v.tolist(),
                                      "times": [t[0], t[-1], len(t)], "message_bytes": largest}), flush=True)
    try:  # a typo in a metric: every rank raises, nobody hangs
        evaluate_staged(comm, '"wats" "stairstep" source-counter "sum" aggregate', store, 0, points=8)
        failed = ""
    except CollectiveError as e:
        failed = str(e)
    if comm.rank == 0:
        print(json.dumps({"expression": "typo", "error": failed}), flush=True)
    return 0


if __name__ == "__main__":
    run_worker(main)
