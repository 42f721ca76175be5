"""MPI worker: builds the system tree of the machines in machines.py with the distributed
algorithm and with the naive baseline, and prints, on rank 0, one JSON line per scenario
with both results. Scenarios: KIND[:option...], options: collide (every hash equal),
weak (hash = path length mod 3), names, chunk1 (names streamed one per chunk), rootonly."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machines import KINDS  # noqa: E402
from mpi4py import MPI  # noqa: E402

from cubescale.parallel import build_system_tree, build_system_tree_naive  # noqa: E402
from cubescale.systree import SingleNodeTree  # noqa: E402

HASHES = {"collide": lambda path: 0, "weak": lambda path: len(path) % 3}


def run(comm, scenario: str) -> dict | None:
    kind, *options = scenario.split(":")
    view = KINDS[kind](comm.rank, comm.size)
    hash_fn = next((HASHES[o] for o in options if o in HASHES), None)
    streamed = []
    names = streamed.extend if "chunk1" in options else "names" in options
    ours = build_system_tree(comm, view, root_only="rootonly" in options, names=names,
                             hash=hash_fn, name_chunk=1 if "chunk1" in options else 4096)
    naive = build_system_tree_naive(comm, view, names=bool(names))
    trees_equal = ours.tree is None or ours.tree == naive.tree
    mine = {
        "ours": [ours.location_indices.tolist(), ours.location_group_index, ours.responsible],
        "naive": [naive.location_indices.tolist(), naive.location_group_index, naive.responsible],
        "tree_equal": trees_equal,
        "has_tree": ours.tree is not None,
        "stats": ours.stats,
        "naive_peak": naive.stats["peak_bytes"],
    }
    everyone = comm.gather(mine, root=0)
    if comm.rank != 0:
        return None
    out = {
        "scenario": scenario,
        "size": comm.size,
        "ours": [e["ours"] for e in everyone],
        "naive": [e["naive"] for e in everyone],
        "trees_equal": all(e["tree_equal"] for e in everyone),
        "has_tree": [e["has_tree"] for e in everyone],
        "stats": [e["stats"] for e in everyone],
        "naive_peak": [e["naive_peak"] for e in everyone],
        "records": len(naive.tree),
        "locations": naive.tree.count("locations"),
        "json": naive.tree.to_json(indent=None),
    }
    if names:
        ours_names = [list(e) for e in streamed] if streamed else sorted(ours.tree.names.items())
        out["names"] = [list(e) for e in ours_names]
        out["naive_names"] = [list(e) for e in sorted(naive.tree.names.items())]
    return out


def different_roots(comm) -> dict | None:
    """Views whose machine roots differ must fail on every rank, not hang."""
    view = SingleNodeTree()
    root = view.add_root("machine", f"machine {comm.rank % 2}")
    view.add(view.add(root, "node", f"host {comm.rank}"), "process", f"rank {comm.rank}")
    try:
        build_system_tree(comm, view)
        error = None
    except ValueError as e:
        error = str(e)
    errors = comm.gather(error, root=0)
    return {"scenario": "badroot", "errors": errors} if comm.rank == 0 else None


def main() -> None:
    comm = MPI.COMM_WORLD
    for scenario in sys.argv[1:]:
        result = different_roots(comm) if scenario == "badroot" else run(comm, scenario)
        if result is not None:
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
