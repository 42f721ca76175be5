"""`cubescale collate` under mpirun: the one-process reports that the recorder's C API writes
(``cubescale_write``, here through its binding) for each rank of a C/C++ program are unified
into one report: every rank's call paths (a region only one rank visited included), threads
and values as written, processes in rank order whatever the file names' order. Fewer ranks
than reports (mpirun -n 2 and no mpirun at all for 5 reports on two hosts placed round-robin)
give the same values per (process, thread, call path) as one rank per report, processes
grouped by host with their natural position as <rank>; more ranks than reports is an error on
every rank."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import cubescale
from cubescale import measure
from cubescale._core import measure as _measure
from cubescale.mpirun import local_environment

RANKS = 3


def _write_rank(folder, rank: int, host: str = "node1", last: int = RANKS - 1) -> str:
    measure.start()
    with measure.region("main"):
        for _ in range(rank + 1):
            with measure.region("solve"):
                measure.add_bytes(sent=10 * (rank + 1))
        if rank == last:
            with measure.region("only on the last rank"):
                pass
    measure.stop()
    path = os.path.join(folder, f"run.{rank}.cubex")
    _measure.write_process_report(path, host=host, process=f"MPI Rank {rank}")
    return path


def _collate(folder, files, ranks, name="all.cubex"):
    """``ranks=None``: without mpirun."""
    env = local_environment()
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    out = os.path.join(folder, name)
    launcher = ["mpirun", "-n", str(ranks), *passed] if ranks is not None else []
    command = ["timeout", "-k", "5", "120", *launcher, sys.executable, "-m", "cubescale",
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


def test_at_most_one_rank_per_report(files):
    folder, paths = files
    done, out = _collate(folder, paths[:2], RANKS, name="never.cubex")
    assert done.returncode != 0
    assert "2 reports need at most 2 ranks; this run has 3" in done.stderr
    assert not os.path.exists(out)


SPREAD = 5


@pytest.fixture(scope="module")
def spread(tmp_path_factory):
    """Five processes on two hosts, placed round-robin (rank r on node r % 2)."""
    folder = str(tmp_path_factory.mktemp("collate_spread"))
    return folder, [_write_rank(folder, r, host=f"node{r % 2}", last=3) for r in range(SPREAD)]


def _by_keys(report) -> dict:
    """Every value by (metric, call path of region names, process, location name)."""
    paths = []
    for c in report.cnodes:
        paths.append((paths[c.parent] if c.parent is not None else ()) + (c.region.name,))
    out = {}
    for m in report.metrics:
        values = np.asarray(report.values(m, inclusive=False))
        for c, path in enumerate(paths):
            for loc in report.locations:
                out[(m.name, path, loc.process, loc.name)] = values[c, loc.index].item()
    return out


@pytest.mark.parametrize("ranks", [2, None])
def test_fewer_ranks_than_reports_give_the_same_report(spread, ranks):
    folder, paths = spread
    done, one_each = _collate(folder, paths, SPREAD, name="one_each.cubex")
    assert done.returncode == 0, done.stderr[-3000:]
    done, fewer = _collate(folder, list(reversed(paths)), ranks, name=f"fewer.{ranks}.cubex")
    assert done.returncode == 0, done.stderr[-3000:]
    a, b = cubescale.open(one_each), cubescale.open(fewer)
    assert a.shape == b.shape
    assert _by_keys(a) == _by_keys(b)
    # processes grouped by host (first seen: node0), natural position as <rank>
    assert [loc.process for loc in b.locations] == [f"MPI Rank {r}" for r in (0, 2, 4, 1, 3)]
    assert [loc.process_rank for loc in b.locations] == [0, 2, 4, 1, 3]
    hosts = [b.system.name(b.system.parent(b.system.parent(int(e)))) for e in b._core.location_elements()]
    assert hosts == ["node0"] * 3 + ["node1"] * 2
    root = next(iter(a.system.preorder()))  # one machine name whichever way the ranks collated
    assert a.system.name(root) == b.system.name(root) == "machine 0"


def test_a_report_given_twice_is_refused(files):
    # It was collated as two processes of the run ("MPI Rank 0" twice, totals doubled).
    folder, paths = files
    again = os.path.join(folder, ".", os.path.basename(paths[0]))
    done, out = _collate(folder, [paths[0], paths[1], again], None, name="twice.cubex")
    assert done.returncode == 2, done.stderr[-3000:]
    assert "is given twice (the same file as" in done.stderr and "Traceback" not in done.stderr
    assert not os.path.exists(out)
