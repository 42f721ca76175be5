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
import os
import shutil
import subprocess
import sys
import time

import numpy as np

from .. import report as cube
from ..mpirun import local_environment
from ..systree import SystemTree


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
        epilog="examples:\n  cubescale demo\n  cubescale demo --ranks 8 -o big.cubex",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", default="demo.cubex", help="report to write (default demo.cubex)")
    p.add_argument("--ranks", type=int, default=4, help="MPI ranks (default 4; oversubscribed where needed)")
    p.add_argument("--iterations", type=int, default=60, help="solver iterations (default 60)")
    p.set_defaults(run=run_demo)


def _stencil() -> tuple[str, str]:
    from .. import demo

    here = os.path.dirname(os.path.abspath(demo.__file__))
    return os.path.join(here, "stencil.py"), os.path.join(here, "demo.filt")


def mpi_command(mpirun: str, ranks: int, output: str, iterations: int = 60) -> list[str]:
    """The mpirun command line of the demo (environment: :func:`cubescale.mpirun.local_environment`)."""
    app, filt = _stencil()
    passed = [a for k in ("PYTHONPATH", "CUBESCALE_DEV_BUILD") if k in os.environ for a in ("-x", k)]
    return [mpirun, "-n", str(ranks), *passed, sys.executable, "-m", "cubescale", "run", "-o", output,
            "--filter", filt, "--quiet", app, "--iterations", str(iterations)]


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
    if mpirun:
        print(f"cubescale demo: measuring {args.ranks} MPI ranks x 4 threads of the stencil solver "
              f"(mpirun, {os.cpu_count()} cores here)...", flush=True)
        try:
            done = subprocess.run(mpi_command(mpirun, args.ranks, args.output, args.iterations), env=local_environment(),
                                  stdin=subprocess.DEVNULL, timeout=600)
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
        status = _run_command(["run", "-o", args.output, "--filter", filt, "--quiet", app, "--iterations",
                               str(args.iterations), "--serial"])
        if status:
            return status
    report = cube.open(args.output)
    print(f"cubescale demo: measured and wrote {args.output} in {time.perf_counter() - start:.1f} s\n")
    print(summary(report, args.output))
    return 0


def _path(report, cnode: int) -> str:
    names = []
    c: int | None = cnode
    while c is not None:
        names.append(report.cnodes[c].region.name)
        c = report.cnodes[c].parent
    return " > ".join(reversed(names))


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
