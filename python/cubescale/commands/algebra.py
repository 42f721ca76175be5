"""``cubescale diff | merge | mean | cut``: report algebra on the command line (CubeLib's
``cube_diff``, ``cube_merge``, ``cube_mean``, ``cube_cut``).

The inputs are read and the result is computed and written one metric at a time, so memory
stays at a few metric matrices whatever the number of metrics.

Example
-------
>>> import os, tempfile
>>> from cubescale.cli import main
>>> from cubescale import examples
>>> out = os.path.join(tempfile.mkdtemp(), "d.cubex")
>>> a = examples.report_path()
>>> main(["diff", a, a, "-o", out])  # doctest: +ELLIPSIS
diff: 2 reports -> ...d.cubex: 21 call paths, 20 locations, 6 metrics (system trees: same layout)
0
"""

from __future__ import annotations

import argparse
import os

from .. import algebra
from .. import report as cube

_SYSTEM_HELP = ("how system trees are matched: auto (the same layout, else collapsed to processes and "
                "threads matched by rank), same (fail unless the layouts are equal), processes (always collapse)")


def add_parser(subparsers) -> None:
    """Register the ``diff``, ``merge``, ``mean`` and ``cut`` subcommands."""
    for name, nargs, text in (
            ("diff", 2, "the difference A - B of two reports (integer metrics become INT64)"),
            ("merge", "+", "the union of the reports' metrics, each from the first report that has it"),
            ("mean", "+", "the mean of the reports' values (DOUBLE)")):
        p = subparsers.add_parser(
            name, help=text,
            description=f"Write {text}. The inputs are unified first: metrics by unique name, call paths "
                        "by region (name, module, lines), parameters and attributes from the roots down, "
                        "system trees by structure; a call path or location a report lacks counts as zero.",
            epilog=f"example:\n  cubescale {name} run1.cubex run2.cubex -o {name}.cubex",
            formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("inputs", nargs=nargs, metavar="REPORT", help=".cubex reports")
        p.add_argument("-o", "--output", required=True, help=".cubex report to write (replaced only when complete)")
        p.add_argument("--system", choices=algebra.SYSTEMS, default="auto", help=_SYSTEM_HELP)
        p.add_argument("--compress", action="store_true", help="zlib-compress the rows")
        if name == "diff":
            p.add_argument("--plot", help="also draw the largest changes of --metric per call path into this image")
            p.add_argument("--metric", default="time", help="the metric --plot draws (default time)")
        p.set_defaults(run=run_combine, operation=name)
    p = subparsers.add_parser(
        "cut", help="re-root a call tree at call paths and prune (inline) subtrees",
        description="Keep only the subtrees of the --root call paths and fold the descendants of the --prune "
                    "call paths into their exclusive values (CubeLib's cube_cut -r / -p). A name selects every "
                    "call path of that region, a number one call path by its index.",
        epilog="example:\n  cubescale cut profile.cubex -r main -p MPI_Init -o cut.cubex",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", help=".cubex report to read")
    p.add_argument("-r", "--root", action="append", default=[], help="region name or call path index (repeatable)")
    p.add_argument("-p", "--prune", action="append", default=[], help="region name or call path index (repeatable)")
    p.add_argument("-o", "--output", required=True, help=".cubex report to write (replaced only when complete)")
    p.add_argument("--compress", action="store_true", help="zlib-compress the rows")
    p.set_defaults(run=run_cut)


def _opened(path: str) -> cube.Report:
    r = cube.open(path)
    algebra.stream_values(r)  # read once per result metric, not kept
    return r


def _summary(name: str, inputs: int, out: cube.Report, path: str, system: str = "") -> None:
    cnodes, locations = out.shape
    print(f"{name}: {inputs} report{'s' if inputs != 1 else ''} -> {path}: {cnodes} call paths, {locations} "
          f"location{'s' if locations != 1 else ''}, {len(out.metrics)} metrics{system}")


def run_combine(args) -> int:
    """Run ``diff``, ``merge`` or ``mean``."""
    inputs = [_opened(p) for p in args.inputs]
    if args.operation == "diff":
        out = algebra.diff(inputs[0], inputs[1], system=args.system)
    else:
        out = (algebra.merge if args.operation == "merge" else algebra.mean)(*inputs, system=args.system)
    algebra.stream_values(out)
    if getattr(args, "plot", None):  # first: a plot that cannot be written leaves no report either
        from ..plots import save_diff_plot

        save_diff_plot(out, args.metric, args.plot, args.inputs, args.output)
    cube.write(out, args.output, compress=args.compress)
    same = out.attrs.get("cubescale::algebra::system") == "same"
    _summary(args.operation, len(inputs), out, args.output,
             f" (system trees: {'same layout' if same else 'collapsed to processes'})")
    return 0


def _selection(values: list[str]) -> list[int | str]:
    return [int(v) if v.isdigit() else v for v in values]


def run_cut(args) -> int:
    """Run ``cut``."""
    r = _opened(args.input)
    out = algebra.cut(r, root=_selection(args.root) or None, prune=_selection(args.prune) or None)
    algebra.stream_values(out)
    cube.write(out, args.output, compress=args.compress)
    _summary("cut", 1, out, os.fspath(args.output))
    return 0
