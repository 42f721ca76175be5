"""Parameters (PARAMETER_INT64 / PARAMETER_STRING events) in ``cubescale trace-profile``'s
.cubex as Score-P 8.4's profile writes them: a region's call path split into call paths of the
same region with Cube call-path parameters (``<parameter partype parkey parvalue/>``), read
back by cubescale and by pycubexr, and the same file from ``mpirun -n 2`` as from one process
(docs/trace.md, "Parameters")."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import cubescale
from cubescale import testing
from cubescale.cli import main as cli
from cubescale.mpirun import local_environment

# Every rank records its program (one root call path, which pycubexr needs) and main from 2 to
# 98 ns; in main, ranks 0 and 2 set size=0 and then mode=fast, rank 1 calls MPI_Init and then
# sets size=1, rank 3 calls MPI_Init and sets none; then each calls MPI_Barrier. main's one
# visit per rank is its parameters', so main stays on rank 3 only: rank 1's MPI_Init below it,
# called before the parameter, goes with it (Score-P drops it so).
MAIN = ("main", 2, 98, [], 0)
INIT = ("MPI_Init", 3, 4, [], 0)
BARRIER = ("MPI_Barrier", 10, 20, [], 0)
RANKS = [[MAIN, ("parameter size=0", 5, 5, [], 0), ("parameter mode=fast", 6, 6, [], 0), BARRIER],
         [MAIN, INIT, ("parameter size=1", 5, 5, [], 0), BARRIER],
         [MAIN, ("parameter size=0", 5, 5, [], 0), ("parameter mode=fast", 6, 6, [], 0), BARRIER],
         [MAIN, INIT, BARRIER]]
SIZE_0_FAST = [{"partype": "numeric", "parkey": "size", "parvalue": "0"},
               {"partype": "string", "parkey": "mode", "parvalue": "fast"}]
SIZE_1 = [{"partype": "numeric", "parkey": "size", "parvalue": "1"}]


@pytest.fixture
def profile(tmp_path):
    testing.write_mpi_trace(tmp_path, "params", RANKS, end=100)
    out = tmp_path / "profile.cubex"
    assert cli(["trace-profile", str(tmp_path / "params.otf2"), "-o", str(out)]) == 0
    return out


def _paths(report) -> dict[tuple, int]:
    """Call path -> row, each call path as ((region, parameters as (key, value) pairs), ...)."""
    keys: list[tuple] = []
    for c in report.cnodes:
        own = (c.region.name, tuple((p["parkey"], p["parvalue"]) for p in report.cnode_parameters(c.index)))
        keys.append((keys[c.parent] if c.parent is not None else ()) + (own,))
    return {k: i for i, k in enumerate(keys)}


def test_parameters_are_cube_call_path_parameters(profile):
    report = cubescale.open(profile)
    paths = _paths(report)
    root = ("params", ())
    main, fast, one = (root, ("main", ())), (root, ("main", (("size", "0"), ("mode", "fast")))), \
        (root, ("main", (("size", "1"),)))
    barrier, init = ("MPI_Barrier", ()), ("MPI_Init", ())
    assert set(paths) == {(root,), main, main + (init,), main + (barrier,), fast, fast + (barrier,), one,
                          one + (barrier,)}
    assert report.cnode_parameters(paths[fast]) == SIZE_0_FAST
    assert report.cnode_parameters(paths[one]) == SIZE_1
    assert report.cnode_parameters(paths[main]) == []
    visits = report.values("visits", inclusive=None)
    assert visits[paths[main]].tolist() == [0, 0, 0, 1]
    assert visits[paths[fast]].tolist() == [1, 0, 1, 0]
    assert visits[paths[one]].tolist() == [0, 1, 0, 0]
    assert visits[paths[fast + (barrier,)]].tolist() == [1, 0, 1, 0]
    assert visits[paths[main + (init,)]].tolist() == [0, 0, 0, 1]
    # Each split call path holds its rank's whole visit of main (from main's Enter, 2, to 98 ns).
    time = report.values("time", inclusive=True)
    assert np.allclose(time[paths[fast]], [96e-9, 0, 96e-9, 0])
    # No region per parameter value (Score-P 6's form).
    assert not any("=" in r.name for r in report.regions)


def test_pycubexr_reads_the_parameters(profile):
    pycubexr = pytest.importorskip("pycubexr")
    with pycubexr.CubexParser(str(profile)) as parsed:
        found = {(parsed.get_region(c).name, tuple(sorted(c.parameters.items()))): c for c in parsed.all_cnodes()}
        assert ("main", (("mode", "fast"), ("size", 0))) in found
        assert ("main", ()) in found
        visits = parsed.get_metric_values(parsed.get_metric_by_name("visits"))
        assert list(visits.cnode_values(found[("main", (("size", 1),))])) == [0, 1, 0, 0]


def _on_two_ranks(*arguments: str) -> None:
    pytest.importorskip("mpi4py")
    if shutil.which("mpirun") is None:
        pytest.skip("no mpirun")
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    command = ["timeout", "-k", "5", "120", "mpirun", "-n", "2", *passed, sys.executable, "-m", "cubescale", *arguments]
    done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=135)
    assert done.returncode == 0, done.stderr[-2000:]


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_mpi_ranks_write_the_same_file(profile, tmp_path):
    _on_two_ranks("trace-profile", str(tmp_path / "params.otf2"), "-o", str(tmp_path / "two.cubex"))
    assert _digest(tmp_path / "two.cubex") == _digest(profile)


def test_analysis_keeps_its_values_in_place_on_two_ranks(profile, tmp_path):
    # Rank 0's main is Score-P's main[size=0,mode=fast]; its time on the critical path stays at
    # main's call path (kept, with zeros where Score-P drops it), whichever rank reads rank 0.
    assert cli(["analyze", str(tmp_path / "params.otf2"), "-o", str(tmp_path / "one.cubex")]) == 0
    _on_two_ranks("analyze", str(tmp_path / "params.otf2"), "-o", str(tmp_path / "two.cubex"))
    one, two = cubescale.open(tmp_path / "one.cubex"), cubescale.open(tmp_path / "two.cubex")
    assert [(c.region.name, c.parent, one.cnode_parameters(c.index)) for c in one.cnodes] == \
        [(c.region.name, c.parent, two.cnode_parameters(c.index)) for c in two.cnodes]
    assert [m.name for m in one.metrics] == [m.name for m in two.metrics]
    # Also the impact metrics, which the ranks match by call path: regions' names from the root
    # and, since call paths split by parameters share those, the parameters.
    compared = [m.name for m in one.metrics if not m.derived]
    assert {"critical_path", "critical_path_activities", "critical_imbalance_impact"} <= set(compared)
    for name in compared:
        assert np.array_equal(one.values(name, inclusive=None), two.values(name, inclusive=None)), name
