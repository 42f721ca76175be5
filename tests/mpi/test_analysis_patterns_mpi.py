"""`cubescale analyze` on a real trace of an mpi4py program (`cubescale run --trace` under
mpirun -n 2, tests/mpi/app_measure_trace.py): its MPI_Iallreduce completed in MPI_Wait gets
its Wait at N x N time there, equal to a computation from the event DataFrame; clock offsets
applied, the time correction leaves no violation; parents keep storing their children."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from launch import HERE

import cubescale
import cubescale.trace
from cubescale import analysis
from cubescale.mpirun import local_environment


@pytest.fixture(scope="module")
def anchor(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("patterns")
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    command = ["timeout", "-k", "5", "120", "mpirun", "-n", "2", *passed, sys.executable, "-m", "cubescale", "run",
               "-o", str(tmp / "run.cubex"), "--quiet", "--trace", "--trace-dir", str(tmp / "trace"),
               str(HERE / "app_measure_trace.py")]
    done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=150)
    assert done.returncode == 0, done.stderr[-3000:]
    return str(tmp / "trace" / "traces.otf2")


def nonblocking_wait_reference(path):
    """Per location: (start of its MPI_Iallreduce, enter and leave of the MPI_Wait completing it)."""
    t = cubescale.trace.open(path)
    events = t.events()
    out = {}
    for loc, df in events.groupby("Location", sort=True):
        stack, start, completing = [], 0, -1  # completing: depth of the call that completes it
        for kind, region, ticks in zip(df["Event Type"].astype(str), df["Region"], df["Ticks"]):
            if kind == "ENTER":
                stack.append((int(ticks), t.regions["name"][region]))
            elif kind == "LEAVE":
                enter, name = stack.pop()
                if len(stack) == completing:
                    assert name == "MPI_Wait"
                    out[loc] = (start, enter, int(ticks))
                    completing = -1
            elif kind == "NON_BLOCKING_COLLECTIVE_REQUEST":
                start = stack[-1][0]
            elif kind == "NON_BLOCKING_COLLECTIVE_COMPLETE":
                completing = len(stack) - 1
    return t, out


def test_iallreduce_waits_in_its_mpi_wait(anchor):
    t, ref = nonblocking_wait_reference(anchor)
    assert len(ref) == 2
    latest = max(start for start, _, _ in ref.values())
    report = cubescale.analyze(anchor)
    wait = report.values("mpi_wait_nxn", inclusive=False)
    columns = t.location_indices()
    seconds = 1.0 / t.clock[0]
    for loc, (_start, enter, leave) in ref.items():
        col = columns.index(loc)
        rows = [c for c in range(report.shape[0]) if report.cnodes[c].region.name == "MPI_Wait"]
        want = max(0, min(latest, leave) - enter) * seconds
        assert sum(wait[c, col] for c in rows) == pytest.approx(want, rel=1e-12, abs=1e-15)
    for m in report.metrics:  # parents store their children, the moved MPI_Wait time included
        if m.parent is not None and report.metrics[m.parent].name != "time":
            parent = report.values(report.metrics[m.parent].name, inclusive=False)
            children = sum(report.values(report.metrics[c].name, inclusive=False) for c in report.metrics[m.parent].children)
            assert (parent - children >= -1e-12).all(), m.name


def test_time_correction_of_a_measured_trace(anchor):
    measured = cubescale.analyze(anchor)
    corrected = cubescale.analyze(anchor, time_correct=True)
    assert sum(analysis.clock_violations(corrected).values()) == 0
    s = analysis.statistics(measured)
    assert sum(analysis.clock_violations(measured).values()) == s.p2p_violations + s.collective_violations
    if s.p2p_violations + s.collective_violations == 0:
        assert np.array_equal(measured.values("mpi_latesender"), corrected.values("mpi_latesender"))
