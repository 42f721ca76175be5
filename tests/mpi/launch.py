"""Start an MPI worker script under mpirun with a timeout, on this machine's settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cubescale.mpirun import local_environment

HERE = Path(__file__).resolve().parent



def mpirun(ranks: int, script: str, *args: str, timeout: int = 120) -> list[dict]:
    """Run ``script`` (a file next to this one) on ``ranks`` ranks; returns the JSON lines
    that rank 0 printed. Only CUBESCALE_DEV_BUILD / PYTHONPATH that are set are passed on,
    so an installed package works as well as a development build."""
    env = local_environment()
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    command = ["timeout", "-k", "5", str(timeout), "mpirun", "-n", str(ranks), *passed,
               sys.executable, str(HERE / script), *args]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout + 15)
    if done.returncode != 0:
        raise AssertionError(f"mpirun -n {ranks} {script} failed ({done.returncode}):\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def run_worker(main) -> None:
    """Runs ``main(argv)`` as an mpirun worker script: its return value is the exit status, and
    an exception on one rank aborts the whole job (the others must not wait for it forever)."""
    from mpi4py import MPI

    try:
        sys.exit(main(sys.argv[1:]))
    except Exception:  # noqa: BLE001 - printed, then every rank ends
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
