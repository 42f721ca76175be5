"""``cubescale info``: summarize a CUBE4 report (metrics, processes and threads, the top of the
call tree), an OTF2 trace, or an experiment directory.

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
import os

import numpy as np

from .. import files
from .. import report as cube
from ..algebra import stream_values
from ..views import format_value
from ._inputs import UsageError, input_of_info
from ._shared import count


def add_parser(subparsers) -> None:
    """Register the ``info`` subcommand."""
    info = subparsers.add_parser(
        "info", help="summarize a .cubex report: metrics, call tree, system tree",
        description="Print the metric tree (with totals), the processes and their threads, members that are not "
                    "part of the report, the top of the call tree (largest first, with percentages, all-zero "
                    "subtrees hidden) and one line on data rows beyond a metric's index (ignored, as Cube does; "
                    "--verbose lists them). Given an OTF2 anchor, summarize the trace; given an experiment "
                    "directory, its profile.cubex (or summary.cubex, trace.cubex), else its traces.otf2. Temporaries that "
                    "cubescale writers which died left beside the file are listed (cubescale clean removes them).",
        epilog="examples:\n  cubescale info profile.cubex --depth 3\n  cubescale info scorep_bt-mz_B_8x4_sum -m visits\n"
               "  cubescale info traces.otf2", formatter_class=argparse.RawDescriptionHelpFormatter)
    info.add_argument("file", help=".cubex report, an OTF2 trace's anchor (traces.otf2) or an experiment directory")
    info.add_argument("--depth", type=count, default=2, help="call tree levels to show (default 2)")
    info.add_argument("-m", "--metric", help="metric of the call tree (unique or display name; default the first)")
    info.add_argument("--exclusive", action="store_true", help="exclusive values in the call tree (default inclusive)")
    info.add_argument("-v", "--verbose", action="store_true",
                      help="every process, and every metric with rows beyond its index")
    info.set_defaults(run=run_info, prepare=prepare_info)


def _derived_note(r: cube.Report, m, total: float) -> str:
    """Why a derived metric has no values (its total is NaN), or nothing."""
    if not m.derived or not np.isnan(total):
        return ""
    try:
        r.values(m)
    except ValueError as e:
        return f"  (not computed: {e})"
    return ""


def prepare_info(args) -> None:
    """The report or trace ``info`` reads (an experiment directory resolved); a directory
    with neither but with stale temporaries of cubescale's writers (or unfinished trace folders of
    traced runs that died) gets only their list."""
    args.directory = args.file if os.path.isdir(args.file) else os.path.dirname(os.path.abspath(args.file))
    try:
        args.kind, args.file = input_of_info(args.file)
    except IsADirectoryError:
        if not files.stale_temporaries(args.file) and not files.stale_partial_traces(args.file):
            raise
        args.kind = "directory"
    report_options = [o for o, given in (("-m", args.metric), ("--depth", args.depth != 2),
                                         ("--exclusive", args.exclusive), ("-v", args.verbose)) if given]
    if args.kind == "otf2" and report_options:  # a trace's summary has no call tree to show them on
        verb = "apply" if len(report_options) > 1 else "applies"
        raise UsageError(f"{', '.join(report_options)} {verb} to a report; a trace's summary has no call tree "
                         f"(`cubescale trace-profile {os.path.basename(args.file)} -o profile.cubex` makes one)")


def run_info(args) -> int:
    if args.kind != "directory":
        _run_info_of_file(args)
    _print_stale_temporaries(args.directory)
    _print_stale_partial_traces(args.directory)
    return 0


def _print_stale_temporaries(directory: str) -> None:
    """What writers that died left in ``directory`` (never removed here: `clean` does it)."""
    stale = files.stale_temporaries(directory)
    if not stale:
        return
    total = sum(t.size for t in stale)
    print(f"{len(stale)} temporar{'y' if len(stale) == 1 else 'ies'} of cubescale writers that died in {directory} "
          f"({total} bytes): 'cubescale clean {directory}' removes them")
    for t in stale[:8]:
        print(f"  {os.path.basename(t.path)}: {t.size} bytes (temporary of {t.target}, writer pid {t.pid} gone)")


def _print_stale_partial_traces(directory: str) -> None:
    """Trace folders of traced runs whose every rank died (``<trace>.partial``)."""
    stale = files.stale_partial_traces(directory)
    if not stale:
        return
    print(f"{len(stale)} unfinished trace folder{'s' if len(stale) != 1 else ''} of traced runs that died in "
          f"{directory}: 'cubescale clean {directory}' removes them")
    for t in stale[:8]:
        print(f"  {os.path.basename(t.path)}: {t.size} bytes (trace {t.target}, {len(t.writers)} rank(s) gone)")


def _run_info_of_file(args) -> None:
    if args.kind == "otf2":
        from .. import trace
        from .._polled import reading_status, run_polled
        from ._shared import status_line

        opened, shown = trace.open(args.file), status_line()
        status = reading_status(opened, int(opened.announced_events().sum()))
        try:
            text = run_polled(opened.summary, status, (lambda line: shown(f"cubescale info: {line}")) if shown else None)
        finally:
            if shown:
                shown("")
        print(text)
        return
    r = cube.open(args.file)
    # One metric's matrix at a time: each is read for its totals (and again for its ignored
    # bytes, the call tree) and released, not kept for the rest of the command. Metrics the
    # file holds no values for are zero without a matrix.
    stream_values(r)
    # The metric of the call tree first: an unknown name is one line, before anything is printed.
    metric = r.metric(args.metric) if args.metric else (r.metrics[0] if r.metrics else None)
    cnodes, locations = r.shape
    print(f"{os.path.basename(args.file)}: CUBE {r.version}, {len(r.metrics)} metrics, "
          f"{cnodes} call paths, {locations} location{'s' if locations != 1 else ''}")
    creator = r.attrs.get("Creator") or r.attrs.get("CUBE Library version")
    if creator:
        print(f"created by {creator}")
    groups = r.location_group_count
    print(f"system tree: {len(r.system)} elements, {_count(groups, 'location group')}, "
          f"{_count(locations, 'location')}")
    _print_processes(r, limit=None if args.verbose else 8)
    print("metrics (inclusive totals):")
    totals = r.metric_totals(inclusive=True)
    for m in r.metrics:
        depth = r.metric_depth(m)
        total = "" if m.dtype in ("MINDOUBLE", "MAXDOUBLE") else f"  {format_value(totals[m.index])} {m.unit}"
        print(f"  {'  ' * depth}{m.name} [{m.kind.lower()}, {m.dtype}]{total}{_derived_note(r, m, totals[m.index])}")
    _print_ignored(r, args.verbose)
    for name, size in r.extra_members:
        print(f"extra member {name} ({size} bytes), kept by convert")
    if metric is not None:
        print(r.call_tree_text(metric, inclusive=not args.exclusive, max_depth=args.depth, max_lines=60,
                               percent=True, sort=True, hide_zero=True))


def _print_ignored(r: cube.Report, verbose: bool) -> None:
    """Rows beyond a metric's index (Scalasca writes them into every report): one summary
    line, or one line per metric with ``--verbose``."""
    ignored = [(m, r.ignored_bytes(m)) for m in r.metrics if not m.derived]  # stored ones, read again one by one
    ignored = [(m, n) for m, n in ignored if n]
    if not ignored:
        return
    if verbose:
        for m, n in ignored:
            print(f"{m.name}: {n} bytes of its data member beyond the indexed rows ignored (trailing rows, as Cube does)")
        return
    total = sum(n for _, n in ignored)
    print(f"{len(ignored)} metric{'s' if len(ignored) != 1 else ''} with rows beyond their index: {total} bytes "
          f"ignored, as Cube does (--verbose lists them)")


def _print_processes(r: cube.Report, limit: int | None) -> None:
    """Processes (location groups) with their rank and threads (locations): ``limit`` of them."""
    tree = r._core.system_tree()
    group_elements = r._core.location_group_elements()
    group_ranks = r._core.location_group_ranks()
    location_elements = r._core.location_elements()
    # Locations follow their group in the tree's depth-first order: a location belongs to
    # the last group element before it.
    order = np.argsort(group_elements, kind="stable")
    owner = order[np.searchsorted(group_elements[order], location_elements, side="right") - 1]
    counts = np.bincount(owner, minlength=len(group_elements))
    if len(counts) == 0:
        return
    low, high = int(counts.min()), int(counts.max())
    each = f"{low} location{'s' if low != 1 else ''}" if low == high else f"{low} to {high} locations"
    kinds = sorted({"GPU streams" if loc.type == "gpu" else "threads" if loc.type == "thread" else f"{loc.type} locations"
                    for loc in r.locations}, key=lambda k: k != "threads")
    print(f"processes: {len(counts)}, {each} each ({', '.join(kinds)})")
    shown = len(counts) if limit is None else min(limit, len(counts))
    by_group = np.argsort(owner, kind="stable")  # locations grouped, each group in tree order
    starts = np.concatenate(([0], np.cumsum(counts)))
    for g in range(shown):
        members = by_group[starts[g]:starts[g + 1]]
        names = [tree.name(int(location_elements[k])) for k in members[:4]]
        more = f", ... ({len(members)})" if len(members) > 4 else ""
        print(f"  rank {int(group_ranks[g])}: {tree.name(int(group_elements[g]))}: {', '.join(names)}{more}")
    if shown < len(counts):
        print(f"  ... {len(counts) - shown} more processes (--verbose lists them)")


def _count(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless one."""
    return f"{n} {noun}{'s' if n != 1 else ''}"
