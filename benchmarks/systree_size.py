"""Single-node vs sequence system trees on JUQUEEN partitions (paper 000, section 5).

For 1 rack up to the full machine (1,835,008 processes), with 1 and 4 threads per process:
the size of both forms (bytes of their binary serializations), the time to expand the
sequence records into single elements and to fold them back (the single-node baseline is
really built, not estimated), and the rate of index look-ups through NumPy (path_of of
random location indices, and the node of each location).

    python3 benchmarks/systree_size.py            # all partitions (~2 min, ~3 GB RAM)
    python3 benchmarks/systree_size.py --quick    # 1 and 2 racks only
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cubescale.systree import SystemTree


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def row(racks: int, threads: int, lookups: int, rng) -> dict:
    shape = f"rack:{racks} midplane:2 nodeboard:16 node:32 process:64 thread:{threads}"
    seq = SystemTree.from_shape(shape)
    single, t_expand = timed(seq.expand)
    single_bytes = single.nbytes
    assert single_bytes == seq.single_nbytes  # the closed form agrees with the real thing
    folded, t_fold = timed(single.fold)
    assert folded == seq
    del single
    n_loc = seq.count("locations")
    idx = rng.integers(0, n_loc, size=lookups, dtype=np.uint64)
    _, t_paths = timed(lambda: seq.paths_of(idx, "locations"))
    _, t_anc = timed(lambda: seq.ancestors(idx, depth=4, of="locations", to="nodes"))
    return {
        "racks": racks,
        "threads": threads,
        "processes": seq.count("location_groups"),
        "elements": seq.count("all"),
        "single B": single_bytes,
        "records": len(seq),
        "seq B": seq.nbytes,
        "ratio": single_bytes / seq.nbytes,
        "expand s": t_expand,
        "fold s": t_fold,
        "path_of /s": lookups / t_paths,
        "node_of /s": lookups / t_anc,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="only 1 and 2 racks")
    parser.add_argument("--lookups", type=int, default=1_000_000, help="random look-ups per row")
    args = parser.parse_args()
    rng = np.random.default_rng(42)
    racks = [1, 2] if args.quick else [1, 2, 4, 7, 14, 28]
    rows = [row(r, t, args.lookups, rng) for t in (1, 4) for r in racks]
    cols = list(rows[0])
    fmt = {
        "ratio": "{:,.0f}", "expand s": "{:.2f}", "fold s": "{:.2f}",
        "path_of /s": "{:,.0f}", "node_of /s": "{:,.0f}",
    }
    cells = [[fmt.get(c, "{:,}").format(r[c]) for c in cols] for r in rows]
    widths = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    print("| " + " | ".join(c.rjust(w) for c, w in zip(cols, widths)) + " |")
    print("|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|")
    for x in cells:
        print("| " + " | ".join(v.rjust(w) for v, w in zip(x, widths)) + " |")
    seq_sizes = {r["seq B"] for r in rows}
    print(f"\nsequence bytes over all rows: {min(seq_sizes)}..{max(seq_sizes)} (goal: constant, <= 672)")
    print(f"slowest look-up rate: {min(r['path_of /s'] for r in rows):,.0f}/s (goal: >= 1,000,000/s)")


if __name__ == "__main__":
    main()
