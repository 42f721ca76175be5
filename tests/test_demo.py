"""`cubescale demo` end to end: it runs the bundled solver under mpirun (4 ranks on this
machine, oversubscribed), writes the report, and the report shows the injected imbalance: the
last rank has the most update work, and in every process "worker 3" (half the rows) works
longest. The summary names both, and the machine in both forms.

The ranks' imbalance is checked on 2 ranks, one per core: the report holds wall-clock time (as
Score-P's), and with 4 ranks on 2 cores the scheduler decides how long a rank's sweep takes (the
last rank's share of the update time ran 1.0-1.9x the first's over a dozen runs here, against
1.3-1.7x on 2 ranks)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import cubescale


def _demo(out, *options: str):
    done = subprocess.run([sys.executable, "-m", "cubescale", "demo", "-o", str(out), "--iterations", "40", *options],
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-3000:]
    return cubescale.open(out), done.stdout


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return _demo(tmp_path_factory.mktemp("demo") / "demo.cubex")


def _work(report, name="update_chunk"):
    time = report.values("time", inclusive=False)
    rows = [c.index for c in report.cnodes if c.region.name == name]
    return time[rows].sum(axis=0)


def test_the_report_has_every_rank_and_thread(demo):
    report, _ = demo
    assert sorted({loc.process_rank for loc in report.locations}) == [0, 1, 2, 3]
    names = {loc.name for loc in report.locations}
    assert {"Master thread", "worker 0", "worker 1", "worker 2", "worker 3"} <= names
    assert len(report.cnodes) > 5 and report.cnodes[0].parent is None
    assert sum(1 for c in report.cnodes if c.parent is None) == 1  # one root, as Score-P's


def test_the_injected_imbalance_is_on_the_right_threads(demo):
    report, _ = demo
    work = _work(report)
    for g in range(4):
        threads = {loc.name: work[loc.index] for loc in report.locations if loc.process_rank == g}
        assert threads["worker 3"] > 1.5 * max(threads["worker 0"], threads["worker 1"]), (g, threads)


def test_the_injected_imbalance_is_on_the_last_rank_when_each_rank_has_a_core(tmp_path):
    report, _ = _demo(tmp_path / "two.cubex", "--ranks", "2")
    work = _work(report)
    per_rank = {g: work[[loc.index for loc in report.locations if loc.process_rank == g]].sum() for g in range(2)}
    assert per_rank[1] > 1.1 * per_rank[0], per_rank  # 60 % more rows


def test_the_summary_tells_where_the_time_goes(demo):
    _, out = demo
    assert "Where the time goes" in out and "update_chunk" in out
    # call paths as top, stat, dump and analyze print them (" > " between regions until 2026-11-28)
    paths = [line for line in out.splitlines() if "update_chunk" in line and "%" in line]
    assert paths and all("/update_chunk" in line and " > " not in line for line in paths), paths
    assert "the most work: MPI Rank" in out
    assert "worker 3" in out
    assert "machine ×1 > node ×1 > process ×4 > thread ×5" in out
    assert "explore_demo.ipynb" in out
    shares = [float(line.split("%")[0].split()[-1]) for line in out.splitlines() if "worker" in line and "%" in line]
    assert len(shares) == 4 and np.argmax(shares) == 3


def test_without_mpirun_the_demo_measures_one_process_and_says_so(tmp_path):
    out = tmp_path / "one.cubex"
    env = dict(os.environ, CUBESCALE_MPIRUN="")  # as if there were no mpirun
    done = subprocess.run([sys.executable, "-m", "cubescale", "demo", "-o", str(out), "--iterations", "10"],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mpirun not found; measuring one process" in done.stdout
    report = cubescale.open(out)
    assert {loc.process_rank for loc in report.locations} == {0}
    assert "worker 3" in {loc.name for loc in report.locations}


def test_a_failing_program_is_still_written_then_its_error_raised(tmp_path):
    app = tmp_path / "fails.py"
    app.write_text("def step(i):\n    if i == 3:\n        raise RuntimeError('boom at 3')\n"
                   "for i in range(5):\n    step(i)\n")
    out = tmp_path / "fails.cubex"
    done = subprocess.run([sys.executable, "-m", "cubescale", "run", "-o", str(out), "--quiet", str(app)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "boom at 3" in done.stderr
    report = cubescale.open(out)
    step = [c.index for c in report.cnodes if c.region.name == "step"]
    assert int(report.values("visits", inclusive=False)[step].sum()) == 4  # steps 0..3 ran


def test_the_filter_leaves_the_solver_and_its_waits(demo):
    report, _ = demo
    parents = {report.cnodes[c.parent].region.name for c in report.cnodes
               if c.region.name == "update_chunk" and c.parent is not None}
    assert parents == {"Team._work"}  # each worker below its thread function
    files = {r.module for r in report.regions if r.module}
    stdlib = [f for f in files if "/lib/python3" in f and "-packages/" not in f and not f.endswith("threading.py")]
    assert stdlib == [] and not [f for f in files if f.startswith("<frozen")]
    assert "Barrier.wait" in {r.name for r in report.regions}


def test_where_mpirun_is_missing_the_demo_touches_no_mpi(tmp_path):
    out = tmp_path / "one.cubex"
    env = dict(os.environ, PATH=str(tmp_path))  # no mpirun, and no orted for a singleton MPI either
    done = subprocess.run([sys.executable, "-m", "cubescale", "demo", "-o", str(out), "--iterations", "10"],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mpirun not found; measuring one process without MPI" in done.stdout
    report = cubescale.open(out)
    assert {loc.process_rank for loc in report.locations} == {0}
    assert sorted(loc.name for loc in report.locations) == ["Master thread", "worker 0", "worker 1", "worker 2",
                                                             "worker 3"]
    assert "Where the time goes" in done.stdout
