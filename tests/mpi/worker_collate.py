"""Collation under mpirun: every rank makes a random local profile (deterministic from the
seed, its rank and the number of ranks), write_report collates them, rank 0 checks the
report against every rank's input and prints one JSON line per scenario.

Scenarios: ``values:<block_bytes>:<compress>`` (all dtypes; the file's SHA-256 is printed so
that runs with other budgets can be compared byte for byte), ``pycubexr`` (dtypes pycubexr
reads; pycubexr opens the file), ``fail`` (rank 1's collation raises before any data moves),
``fail_block`` (the last rank raises while cutting its third block of values, budget 300 bytes),
``conflict`` (a metric with another data type on rank 1)."""

from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np
from launch import run_worker
from mpi4py import MPI

import cubescale
from cubescale.parallel import CollectiveError, write_report

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from profile_strategies import ALL_DTYPES, PYCUBEXR_DTYPES, REGIONS, random_profile  # noqa: E402


def paths(parents, names_params):
    out = []
    for c, p in enumerate(parents):
        out.append((out[p] if p >= 0 else ()) + (names_params[c],))
    return out


def check_values(path: str, seed: int, size: int, dtypes) -> dict:
    """Every value of the report equals the owning rank's input (bytes); the rest are zero."""
    report = cubescale.open(path)
    report_paths = paths([c.parent if c.parent is not None else -1 for c in report.cnodes],
                         [(c.region.name, tuple(sorted((a["parkey"], a["parvalue"]) for a in report.cnode_parameters(c.index))))
                          for c in report.cnodes])
    row_of = {p: i for i, p in enumerate(report_paths)}
    mismatches, covered = 0, {m: np.zeros(report.shape, dtype=bool) for m, _, _ in dtypes}
    for rank in range(size):
        profile = random_profile(seed, rank, dtypes)
        core = profile._core
        local_paths = paths(core.cnode_parents().tolist(),
                            [(REGIONS[r], tuple(sorted((a["parkey"], a["parvalue"]) for a in core.parameters(c))))
                             for c, r in enumerate(core.cnode_regions().tolist())])
        columns = [loc.index for loc in report.locations if loc.process == f"rank {rank}"]
        assert len(columns) == profile.shape[1], (rank, columns)
        for name, _, _ in dtypes:
            mine = profile.values(name)
            theirs = np.asarray(report.values(name, inclusive=None))
            for c, lp in enumerate(local_paths):
                row = row_of[lp]
                if mine[c].tobytes() != theirs[row, columns].tobytes():
                    mismatches += 1
                covered[name][row, columns] = True
    for name, _, _ in dtypes:
        rest = np.asarray(report.values(name, inclusive=None))[~covered[name]]
        mismatches += int(np.count_nonzero(rest.view(np.uint8)))
    return {"mismatches": mismatches, "cnodes": report.shape[0], "locations": report.shape[1]}


class _FailsAtBlock:
    """A rank's row source whose n-th block raises: a failure after data has moved."""

    def __init__(self, source, n: int):
        self.source, self.left = source, n

    def row_costs(self, *args):
        return self.source.row_costs(*args)

    def block(self, *args):
        self.left -= 1
        if self.left == 0:
            raise RuntimeError("injected failure in a block")
        return self.source.block(*args)


def main(argv: list[str]) -> int:
    comm = MPI.COMM_WORLD
    out_dir, seed, scenarios = argv[0], int(argv[1]), argv[2:]
    for scenario in scenarios:
        kind, *options = scenario.split(":")
        path = os.path.join(out_dir, f"{scenario.replace(':', '_')}.p{comm.size}.cubex")
        result: dict = {"scenario": scenario, "size": comm.size}
        if kind in ("values", "pycubexr"):
            dtypes = ALL_DTYPES if kind == "values" else PYCUBEXR_DTYPES
            block = int(options[0]) if options else 1 << 20
            compress = len(options) > 1 and options[1] == "z"
            costs = write_report(comm, random_profile(seed, comm.rank, dtypes), path, compress=compress,
                                 block_bytes=block)
            if comm.rank == 0:
                result.update(check_values(path, seed, comm.size, dtypes))
                result["sha256"] = hashlib.sha256(open(path, "rb").read()).hexdigest()
                result["writer_buffer_bytes"] = costs["collate"]["writer_buffer_bytes"]
                result["block_bytes"] = block
                if kind == "pycubexr":
                    from pycubexr import CubexParser

                    with CubexParser(path) as parsed:
                        result["pycubexr_metrics"] = [m.name for m in parsed.get_metrics()]
                        time = parsed.get_metric_by_name("time")
                        values = parsed.get_metric_values(time)
                        result["pycubexr_cnodes"] = len(values.cnode_indices)
        elif kind in ("fail", "fail_block", "conflict"):
            collate_module = sys.modules["cubescale.parallel.collate"]  # the module, not the function

            original = collate_module._row_source
            if kind == "fail" and comm.rank == 1 % comm.size:
                def broken(*args):
                    raise RuntimeError("injected failure")
                collate_module._row_source = broken
            if kind == "fail_block" and comm.rank == comm.size - 1:
                def failing_later(*args, source=original):
                    return _FailsAtBlock(source(*args), 3)
                collate_module._row_source = failing_later
            budget = 300 if kind == "fail_block" else 1 << 20
            try:
                write_report(comm, random_profile(seed, comm.rank, PYCUBEXR_DTYPES, conflict=kind == "conflict"), path,
                             block_bytes=budget)
                raised = ""
            except CollectiveError as e:
                raised = str(e)
            collate_module._row_source = original
            everyone = comm.gather(raised, root=0)
            if comm.rank == 0:
                result["errors"] = everyone
                mine = os.path.basename(path)  # the report and its temporaries (.<name>.cubescale-tmp.*)
                result["left_behind"] = sorted(f for f in os.listdir(out_dir) if f.startswith((mine, f".{mine}.")))
        comm.Barrier()
        if comm.rank == 0:
            print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    run_worker(main)
