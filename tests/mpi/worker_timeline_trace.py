"""Trace metrics under mpirun: every rank reads its share of a synthetic trace's locations and
the aggregates are reduced along a tree; rank 0 prints one JSON line per (trace, target)."""

from __future__ import annotations

import hashlib
import json

from launch import run_worker
from mpi4py import MPI

from cubescale.parallel import evaluate_trace

EPF = ('"energy" "stairstep" source-counter "sum" aggregate "0" diff-quot '
       '"PAPI_FP_OPS" "stairstep" source-counter "sum" aggregate "0" diff-quot /')


def main(argv: list[str]) -> int:
    comm = MPI.COMM_WORLD
    for path in argv:
        for target in ("machine", "node 1"):
            t, v, stats = evaluate_trace(comm, path, EPF, target=target, points=17)  # on the samples' seconds
            largest = comm.reduce(stats["message_bytes"], op=MPI.MAX, root=0)
            events = comm.reduce(stats["metric_events"], op=MPI.SUM, root=0)
            if comm.rank == 0:
                print(json.dumps({"trace": path, "target": target, "values": v.tolist(),
                                  "sha256": hashlib.sha256(v.tobytes()).hexdigest(),
                                  "message_bytes": largest, "events": events}), flush=True)
    return 0


if __name__ == "__main__":
    run_worker(main)
