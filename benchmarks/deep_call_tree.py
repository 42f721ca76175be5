"""Commands on a report with a deep call tree, this installation against another one
(``--baseline``: its interpreter, or ``PYTHONPATH=DIR`` for a package directory), side by side
in one run (a reviewer's case: printing ten rows built every call path's full string, and
score and the viewer's flat view walked every call path up one level per pass).

    python benchmarks/deep_call_tree.py [--cnodes 20000] [--depth 2000] [--locations 16]
                                        [--baseline OTHER_PYTHON | --baseline-path DIR]

The report (written once by this installation): ``--cnodes`` call paths as chains of
``--depth`` calls of one recursive region (each call also calling a leaf), over
``--locations`` threads, ``time`` and ``visits`` random. Each measurement is a fresh process;
its wall time and peak resident memory (``VmHWM``) are printed per command.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

# Runs one command quietly and prints its peak resident memory (KiB) on stderr.
RUN = """
import contextlib, os, sys
what, path = sys.argv[1], sys.argv[2]
with open(os.devnull, "w") as out, contextlib.redirect_stdout(out):
    if what == "flat view":
        import cubescale
        from cubescale.viewer.model import Explorer
        Explorer(cubescale.open(path)).flat_profile({"metric": "1", "limit": "10"})
    else:
        from cubescale.cli import main
        args = {"top": ["top", path, "-m", "time"], "score": ["score", path],
                "dump --cnode": ["dump", path, "-m", "time", "--cnode", "5"]}[what]
        status = main(args)
        if status:
            sys.exit(status)
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")), file=sys.stderr)
"""

COMMANDS = ("top", "dump --cnode", "score", "flat view")


def write_report(path: str, cnodes: int, depth: int, locations: int) -> None:
    """Chains of ``depth`` calls of a recursive region ``solve``, each call with a leaf
    ``kernel``, until ``cnodes`` call paths; a new chain starts below the root each time."""
    import numpy as np

    import cubescale
    from cubescale.systree import SystemTree

    b = cubescale.ReportBuilder(SystemTree.from_shape(f"node:1 process:{locations} thread:1"))
    b.add_metric("time", unit="sec")
    b.add_metric("visits", unit="occ", dtype="UINT64")
    main = b.add_region("main")
    solve = b.add_region("void solver::solve<double>(const Grid&, int)")
    kernel = b.add_region("void solver::kernel<double>(Cell*, std::size_t)")
    root = b.add_cnode(main)
    made, parent, level = 1, root, 0
    while made < cnodes:
        if level == depth:
            parent, level = root, 0
        parent = b.add_cnode(solve, parent=parent)
        made += 1
        if made < cnodes:
            b.add_cnode(kernel, parent=parent)
            made += 1
        level += 1
    r = b.build()
    rng = np.random.default_rng(0)
    r.set_values("time", rng.random(r.shape))
    r.set_values("visits", rng.integers(1, 100, r.shape).astype(np.uint64))
    cubescale.write(r, path)


def measure(python: str, path: str, what: str, env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([python, "-c", RUN, what, path], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=3600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stderr[-2000:]}")
    return wall, int(done.stderr.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cnodes", type=int, default=20000)
    p.add_argument("--depth", type=int, default=2000)
    p.add_argument("--locations", type=int, default=16)
    p.add_argument("--baseline", help="another installation's python")
    p.add_argument("--baseline-path", help="another package directory (put first on PYTHONPATH)")
    args = p.parse_args()
    ours = dict(os.environ)
    runs = [("this", sys.executable, ours)]
    if args.baseline:
        runs.append(("baseline", args.baseline, ours))
    if args.baseline_path:
        runs.append(("baseline", sys.executable, {**ours, "PYTHONPATH": args.baseline_path}))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "deep.cubex")
        write_report(path, args.cnodes, args.depth, args.locations)
        print(f"report: {args.cnodes:,} call paths, chains {args.depth} deep, {args.locations} locations, "
              f"{os.path.getsize(path) / 2**20:.1f} MiB")
        print("| command | installation | wall s | peak MiB |")
        print("|---|---|---:|---:|")
        for what in COMMANDS:
            for name, python, env in runs:
                wall, peak = measure(python, path, what, env)
                print(f"| {what} | {name} | {wall:.2f} | {peak / 1024:.0f} |", flush=True)


if __name__ == "__main__":
    main()
