"""``cubescale info | dump | convert``: look into CUBE4 reports from the command line.

Example
-------
>>> from cubescale.cli import main
>>> from cubescale.examples import report_path
>>> main(["info", report_path()])  # doctest: +ELLIPSIS
demo.cubex: CUBE 4.4, 6 metrics, 21 call paths, 20 locations
...
0
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np

from .. import report as cube
from .. import scale_func
from ..views import format_value


def add_parser(subparsers) -> None:
    """Register the ``info``, ``dump`` and ``convert`` subcommands."""
    info = subparsers.add_parser(
        "info", help="summarize a .cubex report: metrics, call tree, system tree",
        description="Print the metric tree (with totals), bytes of data members beyond their index (ignored), "
                    "members that are not part of the report, the top of the call tree and the system tree size.",
        epilog="example:\n  cubescale info profile.cubex --depth 3", formatter_class=argparse.RawDescriptionHelpFormatter)
    info.add_argument("file", help=".cubex report, or an OTF2 trace's anchor (traces.otf2)")
    info.add_argument("--depth", type=int, default=2, help="call tree levels to show (default 2)")
    info.set_defaults(run=run_info)

    dump = subparsers.add_parser(
        "dump", help="print metric values per call path and location as CSV",
        description="Print values as CSV: one line per (call path, location) with a column per metric.",
        epilog="examples:\n  cubescale dump profile.cubex --metric time --inclusive\n"
               "  cubescale dump profile.cubex --metric visits --cnode main",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    dump.add_argument("file", help=".cubex report")
    dump.add_argument("--metric", action="append", help="metric (unique or display name); repeatable; default all")
    dump.add_argument("--cnode", help="only this call path: preorder index, or a region name (all its call paths)")
    dump.add_argument("--inclusive", action="store_true", help="inclusive values along the call tree (default exclusive)")
    dump.set_defaults(run=run_dump)

    convert = subparsers.add_parser(
        "convert", help="rewrite a .cubex report (optionally with zlib-compressed rows)",
        description="Read a report and write it again with cubescale's writer: SPARSE index, CUBE 4.4 anchor, "
                    "compact system tree member; --compress stores zlib-compressed rows (ZCUBEX). Members that are "
                    "not part of the report (text files, remapping.spec) are copied; rows beyond a metric's index "
                    "are dropped.",
        epilog="example:\n  cubescale convert old.cubex new.cubex --compress",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    convert.add_argument("input", help=".cubex report to read")
    convert.add_argument("output", help=".cubex report to write (replaced only when complete)")
    convert.add_argument("--compress", action="store_true", help="zlib-compress the rows")
    convert.set_defaults(run=run_convert)


def _derived_note(r: cube.Report, m) -> str:
    """Why a derived metric has no values, or nothing."""
    if not m.derived:
        return ""
    try:
        r.values(m)
    except ValueError as e:
        return f"  (not computed: {e})"
    return ""


def run_info(args) -> int:
    if args.file.endswith(".otf2"):  # an OTF2 trace's anchor
        from .trace import run_info as run_trace_info

        return run_trace_info(args.file)
    r = cube.open(args.file)
    cnodes, locations = r.shape
    print(f"{os.path.basename(args.file)}: CUBE {r.version}, {len(r.metrics)} metrics, "
          f"{cnodes} call paths, {locations} location{'s' if locations != 1 else ''}")
    creator = r.attrs.get("Creator") or r.attrs.get("CUBE Library version")
    if creator:
        print(f"created by {creator}")
    groups = r.location_group_count
    print(f"system tree: {len(r.system)} elements, {groups} location groups, {locations} locations")
    print("metrics (inclusive totals):")
    totals = r.metric_totals(inclusive=True)
    for m in r.metrics:
        depth = r.metric_depth(m)
        total = "" if m.dtype in ("MINDOUBLE", "MAXDOUBLE") else f"  {format_value(totals[m.index])} {m.unit}"
        print(f"  {'  ' * depth}{m.name} [{m.kind.lower()}, {m.dtype}]{total}{_derived_note(r, m)}")
    ignored = [(m, r.ignored_bytes(m)) for m in r.metrics if not m.derived]  # stored ones: loaded above
    for m, n in ignored:
        if n:
            print(f"{m.name}: {n} bytes of its data member beyond the indexed rows ignored (trailing rows, as Cube does)")
    for name, size in r.extra_members:
        print(f"extra member {name} ({size} bytes), kept by convert")
    print(r.call_tree_text(r.metrics[0] if r.metrics else None, max_depth=args.depth, max_lines=60))
    return 0


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
    out.writerow(["cnode", "cnode_id", "region", "location"] + [name for name, _ in columns])
    cnodes = r.cnodes
    for c in rows:
        prefix = [c, cnodes[c].id, cnodes[c].region.name]
        per_column = [v[c].tolist() for _, v in columns]  # exact integers, shortest round-trip floats
        lines = zip(*per_column) if per_column else [()] * r.shape[1]
        out.writerows(prefix + [loc] + list(line) for loc, line in enumerate(lines))
    return 0


def _progress(text: str) -> None:
    """A status line that overwrites itself on a terminal; logs get only the final line."""
    if sys.stderr.isatty():
        print(f"\r\x1b[K{text}", end="", file=sys.stderr, flush=True)


def run_convert(args) -> int:
    start = time.perf_counter()
    r = cube.open(args.input)
    n = len(r.metrics)
    for i, m in enumerate(r.metrics, 1):  # reading dominates; show it metric by metric
        r.values(m, inclusive=None)
        _progress(f"reading metric {i}/{n}")
    _progress(f"writing {args.output}...")
    cube.write(r, args.output, compress=args.compress)
    _progress("")
    print(f"converted {args.input} -> {args.output} ({os.path.getsize(args.output)} bytes, "
          f"{time.perf_counter() - start:.2f} s)", file=sys.stderr)
    return 0
