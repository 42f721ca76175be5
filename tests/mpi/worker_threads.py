"""Thread aggregation during collation under mpirun: every rank takes one process of a real
multi-threaded report (LocalProfile.from_report), write_report(threads=strategy) aggregates
it before any value leaves the rank, and rank 0 compares the collated report with the same
report aggregated in one process (cubescale.threads.aggregate): same locations, and every
value equal per call path. Prints one JSON line per strategy."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
from launch import run_worker
from mpi4py import MPI

import cubescale
from cubescale import threads
from cubescale.parallel import write_report
from cubescale.profile import LocalProfile


def call_paths(report) -> list[tuple]:
    """Each call path as the tuple of (region, parameters) from its root: the key that
    unification's canonical order may permute."""
    out: list[tuple] = []
    for c in report.cnodes:
        params = tuple(sorted((a["parkey"], a["parvalue"]) for a in report.cnode_parameters(c.index)))
        out.append((out[c.parent] if c.parent is not None else ()) + ((c.region.name, params),))
    return out


def columns_by_process(report) -> list[int]:
    """Location columns ordered by (process name, position). The collated machine groups
    processes of equal structure (sequence form), so its process order may differ from the
    source's; process names ("MPI Rank 2") travel with the profiles and tell them apart."""
    groups: dict[str, list[int]] = {}
    for loc in report.locations:
        groups.setdefault(loc.process, []).append(loc.index)
    return [c for name in sorted(groups) for c in groups[name]]


def compare(collated, expected) -> int:
    """Number of (metric, call path) rows that differ; location names must agree."""
    mine, theirs = columns_by_process(collated), columns_by_process(expected)
    assert [collated.locations[c].name for c in mine] == [expected.locations[c].name for c in theirs]
    row_of = {p: i for i, p in enumerate(call_paths(collated))}
    rows = [row_of[p] for p in call_paths(expected)]
    mismatches = 0
    for m in expected.metrics:
        a = np.ascontiguousarray(collated.values(m.name, inclusive=None)[rows][:, mine])
        b = np.ascontiguousarray(expected.values(m.name, inclusive=None)[:, theirs])
        mismatches += int((a.view(np.uint8).reshape(len(rows), -1) != b.view(np.uint8).reshape(len(rows), -1)).any(axis=1).sum())
    return mismatches


def main(argv: list[str]) -> int:
    comm = MPI.COMM_WORLD
    source, out_dir, strategies = argv[0], argv[1], argv[2:]
    report = cubescale.open(source)
    profile = LocalProfile.from_report(report, part=(comm.rank, comm.size))
    for strategy in strategies:
        path = os.path.join(out_dir, f"{strategy}.{comm.size}.cubex")
        write_report(comm, profile, path, threads=strategy)
        if comm.rank == 0:
            collated = cubescale.open(path)
            expected = threads.aggregate(report, strategy)
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            print(json.dumps({"strategy": strategy, "mismatches": compare(collated, expected),
                              "locations": collated.shape[1], "threads": report.shape[1], "sha256": digest,
                              "bytes": os.path.getsize(path),
                              # bt-mz's process names carry their MPI ranks: the collated <rank>s must agree
                              "ranks_match": all(loc.process == f"MPI Rank {loc.process_rank}"
                                                 for loc in collated.locations)}), flush=True)
    return 0


if __name__ == "__main__":
    run_worker(main)
