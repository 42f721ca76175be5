"""``cubescale convert``: rewrite a report with cubescale's writer (optionally with
zlib-compressed rows), never over its input.

Example
-------
>>> import os, tempfile
>>> from cubescale.cli import main
>>> from cubescale.examples import report_path
>>> out = os.path.join(tempfile.mkdtemp(), "demo.zcubex")
>>> main(["convert", report_path(), out, "--compress"])
0
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from .. import report as cube
from ._inputs import check_output, report_path
from ._shared import progress


def add_parser(subparsers) -> None:
    """Register the ``convert`` subcommand."""
    convert = subparsers.add_parser(
        "convert", help="rewrite a .cubex report (optionally with zlib-compressed rows)",
        description="Read a report and write it again with cubescale's writer: SPARSE index, CUBE 4.4 anchor, "
                    "compact system tree member; --compress stores zlib-compressed rows (ZCUBEX). Members that are "
                    "not part of the report (text files, remapping.spec) are copied; rows beyond a metric's index "
                    "are dropped. The output must not be the input.",
        epilog="example:\n  cubescale convert old.cubex new.cubex --compress",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    convert.add_argument("input", help=".cubex report to read (or an experiment directory)")
    convert.add_argument("output", help=".cubex report to write (replaced only when complete)")
    convert.add_argument("--compress", action="store_true", help="zlib-compress the rows")
    convert.set_defaults(run=run_convert, prepare=prepare_convert)


def prepare_convert(args) -> None:
    """The report ``convert`` reads; never the file it writes."""
    args.input = report_path(args.input)
    check_output(args.output, [args.input])


def run_convert(args) -> int:
    start = time.perf_counter()
    r = cube.open(args.input)
    n = len(r.metrics)
    for i, m in enumerate(r.metrics, 1):  # reading dominates; show it metric by metric
        r.values(m, inclusive=None)
        progress(f"reading metric {i}/{n}")
    progress(f"writing {args.output}...")
    cube.write(r, args.output, compress=args.compress)
    progress("")
    print(f"converted {args.input} -> {args.output} ({os.path.getsize(args.output)} bytes, "
          f"{time.perf_counter() - start:.2f} s)", file=sys.stderr)
    return 0
