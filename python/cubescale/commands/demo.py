"""``cubescale demo``: measure the bundled MPI + threads stencil solver and show what a user
looks at first.

Example
-------
>>> from cubescale.commands.demo import mpi_command
>>> mpi_command("/usr/bin/mpirun", 4, "demo.cubex")[:3]
['/usr/bin/mpirun', '-n', '4']
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import time

import numpy as np

from .. import report as cube
from ..mpirun import local_environment
from ..systree import SystemTree
from ..views import call_path


def add_parser(subparsers) -> None:
    """Register the ``demo`` subcommand."""
    p = subparsers.add_parser(
        "demo", help="measure a bundled MPI + threads stencil solver and show where its time goes",
        description="Runs cubescale/demo/stencil.py (a Jacobi solver whose last rank has 60%% more rows and whose "
                    "thread pool gets chunks of 1:1:2:4) under mpirun on this machine with `cubescale run`, "
                    "writes the report, and prints the top call paths, the imbalance across processes and "
                    "threads, the machine in single-node and sequence form, and how to explore it further. "
                    "Without mpirun it runs one process and says so (CUBESCALE_MPIRUN names another launcher; "
                    "empty: none).",
        epilog="examples:\n  cubescale demo\n  cubescale demo --ranks 8 -o big.cubex\n"
               "  cubescale demo --trace   (also an OTF2 trace, analyzed for wait states)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", default="demo.cubex", help="report to write (default demo.cubex)")
    p.add_argument("--ranks", type=int, default=4, help="MPI ranks (default 4; oversubscribed where needed)")
    p.add_argument("--iterations", type=int, default=60, help="solver iterations (default 60)")
    p.add_argument("--trace", action="store_true",
                   help="also trace the run (OTF2, in the report's name with -trace) and show its wait states: where "
                        "the processes wait and for whom")
    p.set_defaults(run=run_demo)


def _stencil() -> tuple[str, str]:
    from .. import demo

    here = os.path.dirname(os.path.abspath(demo.__file__))
    return os.path.join(here, "stencil.py"), os.path.join(here, "demo.filt")


def mpi_command(mpirun: str, ranks: int, output: str, iterations: int = 60, trace: str | None = None) -> list[str]:
    """The mpirun command line of the demo (environment: :func:`cubescale.mpirun.local_environment`);
    with ``trace`` (a folder) the run is traced too."""
    app, filt = _stencil()
    passed = [a for k in ("PYTHONPATH", "CUBESCALE_DEV_BUILD") if k in os.environ for a in ("-x", k)]
    return [mpirun, "-n", str(ranks), *passed, sys.executable, "-m", "cubescale", "run", "-o", output,
            "--filter", filt, "--quiet", *_trace_options(trace), app, "--iterations", str(iterations)]


def _trace_options(trace: str | None) -> list[str]:
    return ["--trace", "--trace-dir", trace] if trace else []


def _trace_folder(output: str) -> str:
    """The demo's trace folder beside its report; the trace of an earlier demo there is replaced
    (anything else in the way is refused, as `cubescale run --trace` refuses it)."""
    folder = os.path.splitext(output)[0] + "-trace"
    ours = {"traces.otf2", "traces.def", "traces"}  # an OTF2 archive: anchor, global definitions, events
    if os.path.isfile(os.path.join(folder, "traces.otf2")) and set(os.listdir(folder)) <= ours:
        shutil.rmtree(folder)
    return folder


def _run_command(argv: list[str]) -> int:
    """``cubescale run`` in this process, parsed by its own subcommand (not through cli.py,
    which imports this module)."""
    from . import run as run_command

    parser = argparse.ArgumentParser(prog="cubescale")
    run_command.add_parser(parser.add_subparsers())
    parsed = parser.parse_args(argv)
    return parsed.run(parsed) or 0


def run_demo(args) -> int:
    start = time.perf_counter()
    # CUBESCALE_MPIRUN names the launcher to use ("" for none); default: mpirun on the PATH.
    mpirun = os.environ.get("CUBESCALE_MPIRUN", shutil.which("mpirun") or "") or None
    ran_mpi = False
    trace = _trace_folder(args.output) if args.trace else None
    if mpirun and importlib.util.find_spec("mpi4py") is None:  # the ranks' report travels over MPI
        print("cubescale demo: mpi4py is not installed (pip install 'cubescale[mpi]'); measuring one process "
              "without MPI")
    elif mpirun:
        print(f"cubescale demo: measuring {args.ranks} MPI ranks x 4 threads of the stencil solver "
              f"(mpirun, {os.cpu_count()} cores here)...", flush=True)
        try:
            done = subprocess.run(mpi_command(mpirun, args.ranks, args.output, args.iterations, trace),
                                  env=local_environment(), stdin=subprocess.DEVNULL, timeout=600)
            ran_mpi = done.returncode == 0
            if not ran_mpi:
                print(f"cubescale demo: mpirun failed (exit {done.returncode}); measuring one process without MPI "
                      "instead")
        except subprocess.TimeoutExpired:
            print("cubescale demo: mpirun timed out; measuring one process without MPI instead")
    else:
        print("cubescale demo: mpirun not found; measuring one process without MPI")
    if not ran_mpi:  # in this process, without touching MPI (which may be what failed)
        app, filt = _stencil()
        if trace:
            shutil.rmtree(trace + ".partial", ignore_errors=True)  # the failed mpirun's
        status = _run_command(["run", "-o", args.output, "--filter", filt, "--quiet", *_trace_options(trace), app,
                               "--iterations", str(args.iterations), "--serial"])
        if status:
            return status
    report = cube.open(args.output)
    print(f"cubescale demo: measured and wrote {args.output} in {time.perf_counter() - start:.1f} s\n")
    print(summary(report, args.output))
    if trace:
        from ..analysis import analyze

        waits = os.path.splitext(args.output)[0] + "-waits.cubex"
        analysis = analyze(os.path.join(trace, "traces.otf2"), waits)
        assert analysis is not None  # one process: always a report
        print(wait_summary(analysis, trace, waits))
    return 0


def _top_patterns(report) -> list:
    """Scalasca's patterns of an analysis whose parent metric is no pattern (a parent's values
    hold its children's: summing only these counts each waiting second once)."""
    from ..analysis import PATTERNS

    metrics = report.metrics
    return [m for m in metrics if m.name in PATTERNS and (m.parent is None or metrics[m.parent].name not in PATTERNS)]


def wait_summary(analysis, trace: str, waits: str) -> str:
    """Where the processes of a traced demo wait (Scalasca's patterns, per process) and whom
    they wait for: the process that works most and waits least, the demo's injected imbalance.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.analyze(cubescale.examples.trace_path())
    >>> print(wait_summary(r, "run-trace", "waits.cubex").splitlines()[0])
    Wait states in the trace run-trace (cubescale analyze: Scalasca's patterns):
    """
    from ..analysis import summary as pattern_summary

    out = [f"Wait states in the trace {trace} (cubescale analyze: Scalasca's patterns):",
           "  " + pattern_summary(analysis).replace("\n", "\n  ")]
    groups = sorted({loc.process_rank for loc in analysis.locations})
    time_ = analysis.values("time", inclusive=False)
    chunk_rows = np.array([c.region.name == "update_chunk" for c in analysis.cnodes])
    mpi_rows = np.array([c.region.paradigm == "mpi" for c in analysis.cnodes])
    work_rows = chunk_rows if chunk_rows.any() else ~mpi_rows
    waiting = sum((analysis.values(m.name, inclusive=False) for m in _top_patterns(analysis)),
                  np.zeros_like(time_))
    rows = []
    for g in groups:
        cols = [loc.index for loc in analysis.locations if loc.process_rank == g]
        rows.append((analysis.locations[cols[0]].process, float(time_[work_rows][:, cols].sum()),
                     float(waiting[:, cols].sum())))
    out.append("\n  process        work s  waiting s")
    out += [f"  {name:<12} {w:8.3f} {wait:10.3f}" for name, w, wait in rows]
    if len(rows) > 1 and max(r[2] for r in rows) > 0:
        busiest = max(rows, key=lambda r: r[1])
        others = [r[2] for r in rows if r is not busiest]
        waited = sum(others) / len(others)
        least = min(r[1] for r in rows)
        ratio = f", {busiest[1] / least:.1f}x the least" if least > 0 else ""
        if busiest[2] < waited:
            out.append(f"  {busiest[0]} works most ({busiest[1]:.3f} s{ratio}) and the others wait for it: "
                       f"{waited:.3f} s each on average, against its own {busiest[2]:.3f} s. That is the demo's "
                       "injected imbalance: the last rank has 60 % more rows than the first")
        else:
            out.append(f"  {busiest[0]} works most ({busiest[1]:.3f} s{ratio}) but waits as long as the others "
                       f"({busiest[2]:.3f} s against {waited:.3f} s): on an oversubscribed machine waiting for a "
                       "core hides the imbalance")
    out.append(f"\nNext: cubescale view {waits}   (the wait states in the browser: metric, call path, process)\n"
               f"  cubescale analyze {os.path.join(trace, 'traces.otf2')} -o {waits}   (the analysis again)\n"
               f"  cubescale info {trace}   (the trace's locations and events)\n"
               f"  otf2-print {os.path.join(trace, 'traces.otf2')} | less   (every event, with Score-P's otf2-tools)")
    return "\n".join(out)


def _path(report, cnode: int) -> str:
    return call_path(report, cnode)  # as top, stat, dump and analyze print call paths


def summary(report, path: str = "demo.cubex") -> str:
    """What a user looks at first: top call paths, imbalance across processes and threads,
    the machine in both forms, and where to go next.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> print(summary(r).splitlines()[0])
    Where the time goes (exclusive time over all 20 threads of 4 processes, total 25.98 s):
    """
    out = []
    time_ = report.values("time", inclusive=False)
    per_path = time_.sum(axis=1)
    total = float(per_path.sum())
    groups = sorted({loc.process_rank for loc in report.locations})
    out.append(f"Where the time goes (exclusive time over all {report.shape[1]} threads of {len(groups)} "
               f"process{'es' if len(groups) != 1 else ''}, total {total:.2f} s):")
    for c in np.argsort(per_path)[::-1][:8]:
        out.append(f"  {100 * per_path[c] / total:5.1f} %  {per_path[c]:8.3f} s  {_path(report, int(c))}")
    # Processes: work (the solver's update_chunk, else all non-MPI time) and MPI time (waiting
    # in the halo exchange and the allreduce).
    mpi_rows = np.array([c.region.paradigm == "mpi" for c in report.cnodes])
    chunk_rows = np.array([c.region.name == "update_chunk" for c in report.cnodes])
    work_rows = chunk_rows if chunk_rows.any() else ~mpi_rows
    out.append("\nImbalance across processes (exclusive time summed over a process's threads):")
    out.append("  process        work s    MPI s")
    work = []
    for g in groups:
        cols = [loc.index for loc in report.locations if loc.process_rank == g]
        w = float(time_[work_rows][:, cols].sum())
        m = float(time_[mpi_rows][:, cols].sum())
        work.append(w)
        name = report.locations[cols[0]].process
        out.append(f"  {name:<12} {w:8.3f} {m:8.3f}")
    if len(work) > 1 and np.mean(work) > 0:
        busiest = [loc for loc in report.locations if loc.process_rank == groups[int(np.argmax(work))]][0]
        out.append(f"  max / mean work: {max(work) / np.mean(work):.2f} (1.00 = balanced); the most work: "
                   f"{busiest.process}; the others wait for it in MPI")
    if chunk_rows.any():
        g = groups[0]
        cols = [loc.index for loc in report.locations if loc.process_rank == g]
        per_thread = time_[chunk_rows][:, cols].sum(axis=0)
        share = per_thread / max(per_thread.sum(), 1e-300)
        out.append(f"\nImbalance across threads of {report.locations[cols[0]].process} (time in update_chunk):")
        for c, s, v in zip(cols, share, per_thread):
            out.append(f"  {report.locations[c].name:<28} {v:8.3f} s  {100 * s:5.1f} %")
    single = report.system
    sequence = SystemTree.from_single(single)
    out.append(f"\nThe machine: {len(single.preorder())} elements in single-node form, "
               f"{sequence.nbytes} bytes as sequence records:")
    out.append("  " + sequence.render().replace("\n", "\n  "))
    from .notebooks import how_to_open  # the notebooks ship in the package: copied out, then opened

    jupyter = "\n    ".join(how_to_open(os.path.join("notebooks", "explore_demo.ipynb"), os.path.abspath(path)))
    out.append(f"\nNext: cubescale info {path} --depth 4\n"
               f"  cubescale threads {path} key.cubex --strategy key   (threads aggregated, the Score-P thread-aggregation paper)\n"
               f"  python -c \"import cubescale; r = cubescale.open('{path}'); print(r.call_tree_text())\"\n"
               f"  cubescale notebooks notebooks   (copies the notebooks that ship with cubescale to ./notebooks)\n"
               f"  {jupyter}\n"
               f"    (the notebook opens that report: which metric, where in the call tree, on which locations)")
    return "\n".join(out)
