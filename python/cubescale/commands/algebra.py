"""``cubescale diff | merge | mean | median | min | max | cut | common``: report algebra on the command
line (CubeLib's ``cube_diff``, ``cube_merge``, ``cube_mean``, ``cube_cut``, ``cube_commoncalltree``).

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
from collections.abc import Callable

from .. import algebra
from .. import report as cube
from ._inputs import check_output

_SYSTEM_HELP = ("how system trees are matched: auto (the same layout, else collapsed to processes and "
                "threads matched by rank), same (fail unless the layouts are equal), processes (always collapse, "
                "as the cube tools' -C), reduce (machines and nodes matched by name, the levels between them "
                "dropped, as cube_diff's and cube_merge's -c and cube_mean's default)")

# name -> (number of inputs, what it writes, the function)
_OPERATIONS: dict[str, tuple[int | str, str, Callable[..., cube.Report]]] = {
    "diff": (2, "the difference A - B of two reports (integer metrics become INT64)", algebra.diff),
    "merge": ("+", "the union of the reports, every report's values written in order (a later one overwriting an "
                   "earlier one where both have the call path and location, as cube_merge)", algebra.merge),
    "mean": ("+", "the mean of the reports' values (DOUBLE)", algebra.mean),
    "median": ("+", "the median of the reports' exclusive values, inclusive ones their sums (DOUBLE; of an "
                    "even number the mean of the middle two)", algebra.median),
    "min": ("+", "the element-wise minimum of the reports' exclusive values, inclusive ones their sums "
                 "(integer metrics as INT64)", algebra.minimum),
    "max": ("+", "the element-wise maximum of the reports' exclusive values, inclusive ones their sums "
                 "(integer metrics as INT64)", algebra.maximum),
}


def add_parser(subparsers) -> None:
    """Register the ``diff``, ``merge``, ``mean``, ``median``, ``min``, ``max``, ``cut`` and ``common`` subcommands."""
    for name, (nargs, text, _) in _OPERATIONS.items():
        p = subparsers.add_parser(
            name, help=text,
            description=f"Write {text}. The inputs are unified first: metrics by unique name, call paths "
                        "by region (name, module, lines), call site, parameters and attributes from the roots "
                        "down, system trees by structure; a call path or location a report lacks counts as zero.",
            epilog=f"example:\n  cubescale {name} run1.cubex run2.cubex -o {name}.cubex",
            formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("inputs", nargs=nargs, metavar="REPORT", help=".cubex reports")
        p.add_argument("-o", "--output", required=True, help=".cubex report to write (replaced only when complete)")
        _add_system_options(p, name)
        p.add_argument("--compress", action="store_true", help="zlib-compress the rows")
        if name == "diff":
            p.add_argument("--plot", help="also draw the largest changes of --metric per call path into this image")
            p.add_argument("--metric", default="time", help="the metric --plot draws (default time)")
        p.set_defaults(run=run_combine, operation=name)
    p = subparsers.add_parser(
        "common", help="each report reduced to the call tree all of them have",
        description="Write each report reduced to the call paths that every report has (CubeLib's "
                    "cube_commoncalltree); the values of the others are folded into their nearest common "
                    "ancestor's exclusive value. The results go to DIR/<name>.common.cubex.",
        epilog="example:\n  cubescale common run1.cubex run2.cubex -o common/",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="REPORT", help=".cubex reports")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write the reports to")
    p.add_argument("--compress", action="store_true", help="zlib-compress the rows")
    p.set_defaults(run=run_common)
    p = subparsers.add_parser(
        "cut", help="re-root a call tree at call paths and prune (inline) subtrees",
        description="Keep only the subtrees of the --root call paths and inline the --prune call paths: each "
                    "goes with its subtree, whose values its caller takes (CubeLib's cube_cut -r / -p). A name "
                    "selects every call path of that region, a number one call path by its index. A region both "
                    "root and pruned, and pruned call paths inside other pruned ones, are refused (as cube_cut).",
        epilog="example:\n  cubescale cut profile.cubex -r main -p MPI_Init -o cut.cubex",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", help=".cubex report to read")
    p.add_argument("-r", "--root", action="append", default=[], help="region name or call path index (repeatable)")
    p.add_argument("-p", "--prune", action="append", default=[],
                   help="region name or call path index to inline into its caller (repeatable)")
    p.add_argument("-o", "--output", required=True, help=".cubex report to write (replaced only when complete)")
    p.add_argument("--compress", action="store_true", help="zlib-compress the rows")
    p.set_defaults(run=run_cut)


# What -c means per command, as in CubeLib's tools: cube_diff and cube_merge reduce with -c;
# cube_mean reduces by default and -c keeps the system trees unreduced. -C collapses to
# processes everywhere and wins over -c. min, max and median (no cube tool) follow diff.
_DEFAULT_SYSTEM = {"mean": "reduce"}
_C_MEANS = {"mean": "auto"}


def _add_system_options(p: argparse.ArgumentParser, name: str) -> None:
    """--system, and Cube's short forms -c and -C with the meaning of the cube_* tool of that name."""
    default = _DEFAULT_SYSTEM.get(name, "auto")
    p.add_argument("--system", choices=algebra.SYSTEMS, default=None,
                   help=f"{_SYSTEM_HELP}; default {default}" + (" (as cube_mean)" if name == "mean" else ""))
    c = _C_MEANS.get(name, "reduce")
    p.add_argument("-c", dest="reduce_flag", action="store_true",
                   help="do not reduce the system trees (the same as --system auto), as cube_mean's -c"
                   if c == "auto" else "reduce the system trees (the same as --system reduce), as cube_diff's -c")
    p.add_argument("-C", dest="collapse_flag", action="store_true",
                   help="collapse the system trees to processes (the same as --system processes); wins over -c")


def _system(args) -> str:
    """The --system of a combining command from --system, -c and -C (ValueError if both kinds are given)."""
    flags = args.reduce_flag or args.collapse_flag
    if flags and args.system is not None:
        raise ValueError("give either --system or -c / -C, not both")
    if args.collapse_flag:
        return "processes"
    if args.reduce_flag:
        return _C_MEANS.get(args.operation, "reduce")
    return args.system or _DEFAULT_SYSTEM.get(args.operation, "auto")


def _opened(path: str) -> cube.Report:
    r = cube.open(path)
    algebra.stream_values(r)  # read once per result metric, not kept
    return r


def _summary(name: str, inputs: int, out: cube.Report, path: str, system: str = "") -> None:
    cnodes, locations = out.shape
    print(f"{name}: {inputs} report{'s' if inputs != 1 else ''} -> {path}: {cnodes} call paths, {locations} "
          f"location{'s' if locations != 1 else ''}, {len(out.metrics)} metrics{system}")


_SYSTEM_SUMMARY = {"same": "same layout", "processes": "collapsed to processes", "reduce": "reduced to machines and nodes"}


def run_combine(args) -> int:
    """Run ``diff``, ``merge``, ``mean``, ``median``, ``min`` or ``max``."""
    if args.operation == "merge" and len(args.inputs) < 2:
        raise ValueError("merge needs at least two reports (as cube_merge)")
    system = _system(args)
    check_output(args.output, args.inputs)
    inputs = [_opened(p) for p in args.inputs]
    try:
        out = _OPERATIONS[args.operation][2](*inputs, system=system)
    except ValueError as e:
        if args.operation in _DEFAULT_SYSTEM and system == "reduce" and not args.system and "reduced" in str(e):
            raise ValueError(f"{e} ({args.operation} reduces the system trees by default, as cube_{args.operation}; "
                             "-c keeps them)") from None
        raise
    algebra.stream_values(out)
    if getattr(args, "plot", None):  # first: a plot that cannot be written leaves no report either
        from ..plots import save_diff_plot

        save_diff_plot(out, args.metric, args.plot, args.inputs, args.output)
    cube.write(out, args.output, compress=args.compress)
    matched = _SYSTEM_SUMMARY.get(out.attrs.get("cubescale::algebra::system", ""), "?")
    _summary(args.operation, len(inputs), out, args.output, f" (system trees: {matched})")
    return 0


def run_common(args) -> int:
    """Run ``common``."""
    names = [os.path.splitext(os.path.basename(p))[0] + ".common.cubex" for p in args.inputs]
    if len(set(names)) != len(names):
        raise ValueError("two inputs have the same file name: their results would overwrite each other in "
                         f"{args.output} (nothing was written)")
    outputs = algebra.common(*[_opened(p) for p in args.inputs])
    os.makedirs(args.output, exist_ok=True)
    for out, name in zip(outputs, names):
        algebra.stream_values(out)
        path = os.path.join(args.output, name)
        cube.write(out, path, compress=args.compress)
        _summary("common", 1, out, path)
    return 0


def _selection(values: list[str]) -> list[int | str]:
    return [int(v) if v.isdigit() else v for v in values]


def run_cut(args) -> int:
    """Run ``cut``."""
    check_output(args.output, [args.input])
    r = _opened(args.input)
    out = algebra.cut(r, root=_selection(args.root) or None, prune=_selection(args.prune) or None)
    algebra.stream_values(out)
    cube.write(out, args.output, compress=args.compress)
    _summary("cut", 1, out, os.fspath(args.output))
    return 0
