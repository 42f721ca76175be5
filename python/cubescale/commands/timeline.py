"""``cubescale timeline``: the metrics an OTF2 trace recorded, per system-tree node and
location with their hardware level, and aggregate expressions over them (the Vampir hardware-levels paper).

Example
-------
>>> from cubescale.cli import main
>>> from cubescale.examples import trace_path
>>> main(["timeline", trace_path()])  # doctest: +ELLIPSIS
ring/traces.otf2: 2 metrics on 4 elements, 320 metric events
element                        level      metric           mode         samples  first ... last
...
0
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from .. import files
from .._optional import require
from ..parallel.timeline import element_path
from ..timeline import MOST_POINTS, Expression
from ..trace import open as open_trace
from ._shared import check_trace_command, communicator


def add_parser(subparsers) -> None:
    """Register the ``timeline`` subcommand."""
    p = subparsers.add_parser(
        "timeline", help="list a trace's recorded metrics per system-tree node; evaluate aggregate expressions",
        description="Without --expr: every metric the trace recorded, on the system-tree element it belongs to "
                    "(counters on their location, metric instances on their scope: a package's energy on the "
                    "package) with that element's level (class) and samples. With --expr: the expression in "
                    "Vampir's reverse Polish notation for --node, on a grid of --points, as min/mean/max and, "
                    "with --plot, a picture (PNG, SVG, PDF ... by its extension). Under mpirun every rank reads its share of the locations and partial "
                    "timelines of a bounded size are reduced along a tree; rank 0 prints the result and writes the "
                    "plot (the listing is rank 0's alone).",
        epilog='examples:\n  cubescale timeline traces.otf2\n'
               '  cubescale timeline traces.otf2 --node "node 0" --plot epf.png --expr \\\n'
               '    \'"energy" "stairstep" source-counter "sum" aggregate "0" diff-quot '
               '"PAPI_FP_OPS" "stairstep" source-counter "sum" aggregate "0" diff-quot /\'\n'
               '  mpirun -n 4 python -m cubescale timeline traces.otf2 --expr ...',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace", help="OTF2 anchor file (traces.otf2) or an experiment directory holding it")
    p.add_argument("--expr", help="metric expression (reverse Polish notation)")
    p.add_argument("--node", default=None, help="target system-tree element: name or index (default: the root)")
    p.add_argument("--points", type=int, default=512,
                   help=f"grid points, 2 to {MOST_POINTS} (default 512; a plot has a few thousand pixels across)")
    p.add_argument("--plot", help="write the timeline as a picture, its format from the extension: "
                                  f"{', '.join(PICTURES)} (matplotlib)")
    p.set_defaults(run=run_timeline, prepare=prepare_timeline, every_rank=True)


def prepare_timeline(args) -> None:
    """The trace's anchor (an experiment directory resolved); the plot is none of its files and
    can be written where rank 0 writes it; the expression parses and --node names one element
    (``args.element``, with the trace opened for it as ``args.opened``); one verdict on every
    rank."""
    if args.plot and not args.expr:
        raise ValueError("--plot draws an expression: give it with --expr")
    if args.node is not None and not args.expr:  # the listing shows every element
        raise ValueError("--node names the element an expression is evaluated for: give it with --expr")
    if args.plot and _picture_format(args.plot) not in PICTURES:
        raise ValueError(f"--plot {args.plot}: not a picture's extension ({', '.join(PICTURES)})")
    if not 2 <= args.points <= MOST_POINTS:
        raise ValueError(f"--points {args.points}: a timeline needs 2 to {MOST_POINTS} points")
    if args.expr is not None:
        Expression(args.expr)  # a syntax error, before any rank reads the trace

    def element() -> None:  # from the trace's definitions, which each rank reads (run reads them no more)
        from ..parallel.timeline import _element

        args.opened = open_trace(args.trace)
        if not len(args.opened._definitions["metric_members"]["name"]):  # (the trace's own definitions)
            raise ValueError(f"{os.path.basename(args.trace)} records no metrics (Score-P's SCOREP_METRIC_* "
                             "settings record them): --expr has nothing to evaluate")
        args.element = _element(args.opened, _target(args.node))

    check_trace_command(communicator(), args, args.plot, element if args.expr is not None else None)


# The formats matplotlib writes by itself and with Pillow (one of its requirements).
PICTURES = ("png", "svg", "pdf", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


def _picture_format(path: str) -> str:
    """The picture format a plot's file name asks for (PNG without an extension)."""
    return os.path.splitext(path)[1].lstrip(".").lower() or "png"


def _target(node: str | None) -> int | str:
    """--node as an element index or a name (the root without it)."""
    return 0 if node is None else int(node) if node.isdigit() else node


def run_timeline(args) -> int:
    # Under mpirun the ranks share the evaluation; rank 0 alone prints and writes the plot (every
    # rank saving one file would race, and the listing would come once per rank).
    comm = communicator()
    if not args.expr and comm.rank != 0:
        return 0
    trace = getattr(args, "opened", None) or open_trace(args.trace)
    tree = trace.system_tree()
    short = os.path.join(os.path.basename(os.path.dirname(os.path.abspath(args.trace))), os.path.basename(args.trace))
    if not args.expr:
        from .._core import timeline as _tl

        store, stats = _tl.trace_timelines(trace._core, None)
        entries = store.metrics()
        elements = sorted({e for e, _ in entries})
        print(f"{short}: {len({m for _, m in entries})} metrics on {len(elements)} elements, "
              f"{stats['metric_events']} metric events")
        print(f"{'element':<30} {'level':<10} {'metric':<16} {'mode':<12} {'samples':>7}  first ... last")
        for e, m in entries:
            tl = store.get(e, m)
            assert tl is not None  # listed by the store itself
            values = tl.values
            print(f"{element_path(tree, e):<30} {tree.class_name(e):<10} {m:<16} {tl.mode:<12} {len(tl):>7}  "
                  f"{values[0]:.6g} ... {values[-1]:.6g}")
        return 0
    expression = Expression(args.expr)
    times, values, stats = _evaluate(trace, args.trace, expression, args.element, args.points)
    if comm.rank != 0:
        return 0
    finite = values[np.isfinite(values)]
    named = _target(args.node)
    where = named if isinstance(named, str) else element_path(tree, args.element)  # as the user named it
    print(f"{short}: {expression} for {where!r} on {len(times)} points from {times[0]:.6g} s to {times[-1]:.6g} s")
    if finite.size:
        print(f"min {finite.min():.6g}  mean {finite.mean():.6g}  max {finite.max():.6g}")
    else:
        print("no finite values")
    if args.plot:
        matplotlib = require("matplotlib", "plot", "--plot")
        matplotlib.use("Agg")
        plt = require("matplotlib.pyplot", "plot", "--plot")

        fig, ax = plt.subplots(figsize=(8, 3))
        ax.plot(times, values)
        ax.set_xlabel("seconds since the trace's start")
        ax.set_title(f"{where}: {args.expr}"[:110], fontsize=8)
        fig.tight_layout()
        with files.atomic_write(args.plot, "wb") as f:  # never a half-written picture
            fig.savefig(f, format=_picture_format(args.plot), dpi=120)
        print(f"plot: {args.plot}")
    return 0


def _evaluate(trace, path: str, expression: Expression, element: int, points: int):
    """Staged over MPI when there is more than one rank (each reading its share of ``path``),
    else over ``trace`` (opened from it) in this process."""
    comm = communicator()
    if comm.size > 1:
        from ..parallel.timeline import evaluate_trace

        return evaluate_trace(comm, path, expression, target=element, points=points)
    from ..timeline import evaluate

    t, v = evaluate(expression, trace.timelines(), element, points)
    return t, v, {}


