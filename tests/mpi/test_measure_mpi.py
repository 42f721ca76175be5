"""`cubescale run` under mpirun -n 2 and 4: one report with every rank's call tree, MPI
calls as MPI regions with the bytes of their messages, and pycubexr reads it."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from launch import HERE

import cubescale
from cubescale.mpirun import local_environment


def _run(ranks: int, out: str) -> None:
    env = local_environment()
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    command = ["timeout", "-k", "5", "120", "mpirun", "-n", str(ranks), *passed, sys.executable, "-m", "cubescale",
               "run", "-o", out, "--quiet", str(HERE / "app_measure.py")]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module", params=[2, 4])
def measured(request, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("measure") / f"run{request.param}.cubex")
    _run(request.param, out)
    return request.param, out


def _rows(report, name):
    return [c.index for c in report.cnodes if c.region.name == name]


def test_every_rank_and_its_mpi_calls_are_in_one_report(measured):
    ranks, out = measured
    r = cubescale.open(out)
    assert sorted({loc.process_rank for loc in r.locations}) == list(range(ranks))
    masters = [loc.index for loc in r.locations if loc.name == "Master thread"]
    assert len(masters) == ranks
    visits = r.values("visits", inclusive=False)
    for name, calls in (("MPI_Sendrecv", 3), ("MPI_Allreduce", 1), ("ring", 3), ("imbalanced", 1)):
        rows = _rows(r, name)
        assert rows, name
        assert np.array_equal(visits[rows][:, masters].sum(axis=0), np.full(ranks, calls)), name
    assert {c.region.paradigm for c in r.cnodes if c.region.name.startswith("MPI_")} == {"mpi"}


def test_bytes_equal_the_message_sizes(measured):
    ranks, out = measured
    r = cubescale.open(out)
    sent, received = r.values("bytes_sent", inclusive=False), r.values("bytes_received", inclusive=False)
    masters = [loc.index for loc in r.locations if loc.name == "Master thread"]
    rows = _rows(r, "MPI_Sendrecv")
    assert np.array_equal(sent[rows][:, masters].sum(axis=0), np.full(ranks, 3 * 8000))
    assert np.array_equal(received[rows][:, masters].sum(axis=0), np.full(ranks, 3 * 8000))
    by_rank = {r.locations[m].process_rank: m for m in masters}
    send, recv = _rows(r, "MPI_Send"), _rows(r, "MPI_Recv")
    assert int(sent[send][:, by_rank[0]].sum()) == 1000
    assert int(received[recv][:, by_rank[ranks - 1]].sum()) == 1000


def test_the_imbalance_is_on_the_right_ranks(measured):
    ranks, out = measured
    r = cubescale.open(out)
    time = r.values("time", inclusive=True)
    rows = _rows(r, "imbalanced")
    per_rank = {r.locations[m].process_rank: float(time[rows][:, m].sum())
                for m in [loc.index for loc in r.locations if loc.name == "Master thread"]}
    assert per_rank[ranks - 1] > per_rank[0]


def test_pycubexr_reads_the_report(measured):
    pycubexr = pytest.importorskip("pycubexr")
    _, out = measured
    with pycubexr.CubexParser(out) as parsed:
        assert [m.name for m in parsed.get_metrics()][:2] == ["visits", "time"]
