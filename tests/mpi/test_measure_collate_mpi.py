"""`cubescale collate` under mpirun -n 3: the one-process reports that the recorder's C API
writes (``cubescale_write``, here through its binding) for each rank of a C/C++ program are
unified into one report: every rank's call paths (a region only one rank visited included),
threads and values as written, processes in rank order whatever the file names' order; a
count of reports that differs from the ranks is an error on every rank."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from launch import MPI_ENV

import cubescale
from cubescale import measure
from cubescale._core import measure as _measure

RANKS = 3


def _write_rank(folder, rank: int) -> str:
    measure.start()
    with measure.region("main"):
        for _ in range(rank + 1):
            with measure.region("solve"):
                measure.add_bytes(sent=10 * (rank + 1))
        if rank == RANKS - 1:
            with measure.region("only on the last rank"):
                pass
    measure.stop()
    path = os.path.join(folder, f"run.{rank}.cubex")
    _measure.write_process_report(path, host="node1", process=f"MPI Rank {rank}")
    return path


def _collate(folder, files, ranks, name="all.cubex"):
    env = dict(os.environ, **MPI_ENV)
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    out = os.path.join(folder, name)
    command = ["timeout", "-k", "5", "120", "mpirun", "-n", str(ranks), *passed, sys.executable, "-m", "cubescale",
               "collate", *files, "-o", out, "--quiet"]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150)
    return done, out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("collate_measure"))
    return folder, [_write_rank(folder, r) for r in range(RANKS)]


def test_every_ranks_report_is_in_the_collated_one(files):
    folder, paths = files
    done, out = _collate(folder, list(reversed(paths)), RANKS)  # any order of the names
    assert done.returncode == 0, done.stderr[-3000:]
    r = cubescale.open(out)
    assert [loc.process for loc in r.locations] == [f"MPI Rank {k}" for k in range(RANKS)]
    assert [loc.process_rank for loc in r.locations] == list(range(RANKS))
    visits = r.values("visits", inclusive=False)
    sent = r.values("bytes_sent", inclusive=False)
    solve = [c.index for c in r.cnodes if c.region.name == "solve"]
    assert visits[solve].sum(axis=0).tolist() == [k + 1 for k in range(RANKS)]
    assert sent[solve].sum(axis=0).tolist() == [10 * (k + 1) ** 2 for k in range(RANKS)]
    only = [c.index for c in r.cnodes if c.region.name == "only on the last rank"]
    assert visits[only].sum(axis=0).tolist() == [0] * (RANKS - 1) + [1]
    assert np.all(r.values("time", inclusive=True) >= 0)


def test_one_rank_per_report(files):
    folder, paths = files
    done, out = _collate(folder, paths[:2], RANKS, name="never.cubex")
    assert done.returncode != 0
    assert "2 reports need one rank each (mpirun -n 2); this run has 3" in done.stderr
    assert not os.path.exists(out)
