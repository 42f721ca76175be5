"""What the wait-state benchmarks that compare two installations on a generated ring share:
their arguments (``--iterations``, ``--processes``, ``--rounds``, ``--baseline``) and the
alternating rounds, this installation's interpreter then the baseline's on the same trace, so
that both see the same load, and the measurement by another interpreter (imported by
``waitstate_pass.py``, ``waitstate_replay_steps.py`` and ``waitstate_thread_steps.py``, which
run from this folder).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def add_ring_arguments(parser: argparse.ArgumentParser, iterations: int, rounds: int) -> None:
    """The ring's size, the rounds and the baseline interpreter."""
    parser.add_argument("--iterations", type=int, default=iterations)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--baseline", help="interpreter of another cubescale installation to run side by side")


def alternating_rounds(args: argparse.Namespace, measure: Callable[[str, str], T]) -> tuple[int, dict[str, list[T]]]:
    """Writes the ring (``args.processes`` processes, ``args.iterations`` iterations: send,
    receive and allreduce each) into a temporary folder, then ``args.rounds`` times
    ``measure(interpreter, anchor)`` with this interpreter and, if given, ``args.baseline``;
    the folder goes afterwards. Returns the ring's events and each side's results by round."""
    from cubescale import testing

    folder = tempfile.mkdtemp()
    try:
        events = testing.write_ring_trace(folder, "ring", processes=args.processes, iterations=args.iterations,
                                          counters=False)
        path = os.path.join(folder, "ring.otf2")
        runs: dict[str, list[T]] = {"this": [], "baseline": []}
        for _ in range(args.rounds):
            runs["this"].append(measure(sys.executable, path))
            if args.baseline:
                runs["baseline"].append(measure(args.baseline, path))
    finally:
        shutil.rmtree(folder)
    return events, runs


def measured_by(python: str, script: str, *arguments: str) -> dict:
    """``python script --measure ARGUMENTS`` (another installation's interpreter running the
    benchmark's own measurement) and the JSON object of its last line; OpenBLAS on one thread
    (its idle threads spin on the other core)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([python, os.path.abspath(script), "--measure", *arguments], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{python} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])
