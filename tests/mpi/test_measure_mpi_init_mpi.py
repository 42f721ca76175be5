"""`cubescale run` leaves MPI's start to the program, as Score-P does: a program that sets
mpi4py.rc.initialize = False and calls MPI.Init / Init_thread itself runs under mpirun and
alone, its thread level is its own (rc.thread_level too), and its MPI calls are measured
from its MPI_Init on, in the report and the trace."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from launch import HERE

import cubescale
import cubescale.trace
from cubescale.mpirun import local_environment

LEVELS = {"init_thread": 2, "funneled": 1}  # MPI_THREAD_SERIALIZED, MPI_THREAD_FUNNELED


def _run(tmp, mode: str, ranks: int | None) -> tuple[subprocess.CompletedProcess, str, str]:
    out, trace = str(tmp / f"{mode}{ranks}.cubex"), str(tmp / f"{mode}{ranks}-trace")
    command = [sys.executable, "-m", "cubescale", "run", "-o", out, "--quiet", "--trace", "--trace-dir", trace,
               str(HERE / "app_mpi_init.py"), mode]
    env = os.environ
    if ranks is not None:
        env = local_environment()
        passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
        command = ["mpirun", "-n", str(ranks), *passed, *command]
    done = subprocess.run(["timeout", "-k", "5", "120", *command], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done, out, os.path.join(trace, "traces.otf2")


@pytest.mark.parametrize("mode", ["init_thread", "init", "funneled"])
@pytest.mark.parametrize("ranks", [2, None])
def test_the_program_starts_mpi_and_keeps_its_thread_level(tmp_path, mode, ranks):
    done, out, anchor = _run(tmp_path, mode, ranks)
    size = ranks or 1
    # mpirun forwards each rank's writes as they come: one rank's line may arrive inside another's
    found = sorted(re.findall(r"rank (\d+) level (\d+) total (\d+)", done.stdout))
    assert [rank for rank, _, _ in found] == [str(r) for r in range(size)], done.stdout
    assert all(int(total) == size * (size - 1) // 2 for _, _, total in found)
    if mode in LEVELS:
        assert {int(level) for _, level, _ in found} == {LEVELS[mode]}
    r = cubescale.open(out)
    names = {c.region.name for c in r.cnodes}
    assert "MPI_Allreduce" in names
    if mode != "funneled":  # the program's own MPI_Init is a region, as in Score-P's reports
        assert {"init": "MPI_Init", "init_thread": "MPI_Init_thread"}[mode] in names
    t = cubescale.trace.open(anchor)
    assert sorted(set(t.locations["group"])) == list(range(size))
    assert len(t.events(types=["MPI_COLLECTIVE_END"])) == size
