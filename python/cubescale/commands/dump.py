"""``cubescale dump``: a report's values per (call path, location) as CSV, with the names of
regions, call paths, processes and threads beside the indices.

Example
-------
>>> from cubescale.cli import main
>>> from cubescale.examples import report_path
>>> main(["dump", report_path(), "-m", "visits", "--cnode", "0"])  # doctest: +ELLIPSIS
cnode,cnode_id,region,call_path,location,process,process_rank,thread,thread_rank,visits
0,0,stencil.py,stencil.py,0,MPI Rank 0,0,Master thread,0,1
...
0
"""

from __future__ import annotations

import argparse
import csv
import sys

import numpy as np

from .. import report as cube
from .. import scale_func
from ..views import call_path, call_paths
from ._inputs import report_path


def add_parser(subparsers) -> None:
    """Register the ``dump`` subcommand."""
    dump = subparsers.add_parser(
        "dump", help="print metric values per call path and location as CSV",
        description="Print values as CSV: one line per (call path, location) with a column per metric, beside the "
                    "indices: the region, the call path (regions from the root, joined by '/'), the process "
                    "(name and rank) and the thread (name and rank) of the location.",
        epilog="examples:\n  cubescale dump profile.cubex --metric time --inclusive\n"
               "  cubescale dump profile.cubex --metric visits --cnode main",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    dump.add_argument("file", help=".cubex report or an experiment directory")
    dump.add_argument("-m", "--metric", action="append", help="metric (unique or display name); repeatable; default all")
    dump.add_argument("--cnode", help="only this call path: preorder index, or a region name (all its call paths)")
    dump.add_argument("--inclusive", action="store_true", help="inclusive values along the call tree (default exclusive)")
    dump.set_defaults(run=run_dump, prepare=prepare_dump)


def _cnode_rows(r: cube.Report, selector: str | None) -> list[int]:
    if selector is None:
        return list(range(r.shape[0]))
    if selector.isdigit():
        index = int(selector)
        if index >= r.shape[0]:
            raise ValueError(f"cnode {index} out of range (report has {r.shape[0]})")
        return [index]
    rows = [c.index for c in r.cnodes if c.region.name == selector]
    if not rows:
        raise ValueError(f"no call path calls a region named {selector!r}")
    return rows


def prepare_dump(args) -> None:
    """The report ``dump`` reads (an experiment directory resolved)."""
    args.file = report_path(args.file)


def run_dump(args) -> int:
    r = cube.open(args.file)
    metrics = [r.metric(m) for m in args.metric] if args.metric else r.metrics
    rows = _cnode_rows(r, args.cnode)
    columns = []
    for m in metrics:
        values = r.values(m, inclusive=args.inclusive)
        if m.dtype == "SCALE_FUNC":  # one column of function texts
            texts = np.array([[str(scale_func.decode(v)) for v in row] for row in values], dtype=object)
            columns.append((m.name, texts))
            continue
        if values.dtype.names or values.ndim > 2:
            print(f"cubescale: skipping {m.name}: {m.dtype} values are not scalars", file=sys.stderr)
            continue
        columns.append((m.name, values))
    out = csv.writer(sys.stdout, lineterminator="\n")  # region names may hold commas and quotes
    out.writerow(["cnode", "cnode_id", "region", "call_path", "location", "process", "process_rank", "thread",
                  "thread_rank"] + [name for name, _ in columns])
    cnodes = r.cnodes
    # all paths at once where every row is printed (a parent's path reused), else one per row
    paths = call_paths(r) if len(rows) == len(cnodes) else {c: call_path(r, c) for c in rows}
    where = [[loc.process, loc.process_rank, loc.name, loc.rank] for loc in r.locations]
    for c in rows:
        prefix = [c, cnodes[c].id, cnodes[c].region.name, paths[c]]
        per_column = [v[c].tolist() for _, v in columns]  # exact integers, shortest round-trip floats
        lines = zip(*per_column) if per_column else [()] * r.shape[1]
        out.writerows(prefix + [loc] + where[loc] + list(line) for loc, line in enumerate(lines))
    return 0
