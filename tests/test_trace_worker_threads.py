"""Worker threads in trace-derived profiles: Score-P grafts a worker's call paths below its
master's parallel region, and a worker's inclusive time at the call paths above (which it
never visits) is what it did below them, its exclusive time there zero. Before, those call
paths had no time on workers, so inclusive `time` was smaller than its children's and the
analysis' `omp_time` (OpenMP regions' exclusive time) exceeded `time` on jacobi-hybrid. Their
min_time and max_time are their children's shortest and longest visit (as in Score-P's own
bt-mz.B.8x4.cubex). A thread that no fork places goes below <program>/THREADS."""

from __future__ import annotations

import numpy as np
import pytest
from test_trace_tasks import by_path

import cubescale
from cubescale import testing, trace

TRACES = ["openmp-nested", "jacobi-hybrid"]


def anchor(shared_data, name):
    return str(next((shared_data / "otf2" / name).glob("*.otf2")))


@pytest.mark.parametrize("name", TRACES)
def test_inclusive_time_holds_its_children(shared_data, name):
    r = cubescale.trace.profile(anchor(shared_data, name))
    incl, excl = r.values("time", inclusive=None), r.values("time", inclusive=False)
    visits = r.values("visits", inclusive=None)
    scale = float(incl.max())
    assert excl.min() >= -1e-12 * scale  # never less than its children (rounding aside)
    parents = np.asarray(r.cnode_parents)
    grafted = 0
    for c in range(len(parents)):
        children = np.flatnonzero(parents == c)
        unvisited = visits[c] == 0
        if not children.size or not unvisited.any():
            continue
        below = incl[children][:, unvisited].sum(axis=0)
        assert np.allclose(incl[c, unvisited], below, rtol=1e-12, atol=1e-12 * scale)
        grafted += int((below > 0).sum())
    assert grafted > 0  # the traces have worker threads below a parallel region


@pytest.mark.parametrize("name", TRACES)
def test_analysis_metric_children_within_parents(shared_data, tmp_path, name):
    r = cubescale.analyze(anchor(shared_data, name), tmp_path / "scout.cubex")
    totals = r.metric_totals()
    names = [m.name for m in r.metrics]
    time = names.index("time")
    for i, m in enumerate(r.metrics):
        parent = r.metrics[m.parent] if m.parent is not None else None
        if parent is None or m.unit != parent.unit:
            continue
        # stored values include the children's (CubeLib's rule): a child never exceeds its parent
        assert totals[i] <= totals[names.index(parent.name)] * (1 + 1e-12) + 1e-12, (m.name, parent.name)
    if "omp_time" in names:
        assert totals[names.index("omp_time")] <= totals[time]


def unvisited_min_max(report):
    """Per unvisited (call path, location) cell with time: (its min_time, max_time) and the
    minimum / maximum of its children's that hold time or visits."""
    visits = report.values("visits", inclusive=False)
    time = report.values("time", inclusive=True)
    low, high = report.values("min_time", inclusive=None), report.values("max_time", inclusive=None)
    parents = np.asarray(report.cnode_parents)
    cells = []
    for c in range(len(parents)):
        children = np.flatnonzero(parents == c)
        for loc in np.flatnonzero((visits[c] == 0) & (time[c] > 0)):
            live = [k for k in children if time[k, loc] > 0 or visits[k, loc] > 0]
            if live:
                cells.append(((low[c, loc], high[c, loc]),
                              (min(low[k, loc] for k in live), max(high[k, loc] for k in live))))
    return cells


def test_score_p_gives_an_unvisited_call_path_its_childrens_shortest_and_longest_visit(shared_data):
    cells = unvisited_min_max(cubescale.open(shared_data / "cubex" / "bt-mz.B.8x4.cubex"))
    assert len(cells) == 600  # every worker's call paths above its parallel regions
    assert all(np.allclose(got, want, rtol=0, atol=1e-15) for got, want in cells)


@pytest.mark.parametrize("name", TRACES)
def test_trace_profiles_do_the_same(shared_data, name):
    cells = unvisited_min_max(cubescale.trace.profile(anchor(shared_data, name)))
    assert cells  # (before: 0 seconds at each)
    assert all(np.allclose(got, want, rtol=0, atol=1e-15) and got[0] > 0 for got, want in cells)


@pytest.mark.parametrize("program", [True, False])
def test_a_thread_no_fork_places_goes_below_threads(tmp_path, program):
    # The worker's team begins at 50, before the master's fork at 100 (as a POSIX thread, which
    # no fork places): Score-P 7 and later move such a thread's roots below <program>/THREADS;
    # without a program region it stays a root.
    regions = [{"fork": 100, "join": 1000, "begin": [100, 50],
                "threads": [[("ibarrier", 200, 400)], [("ibarrier", 200, 400)]]}]
    testing.write_omp_trace(tmp_path, "early", regions, threads=2, end=1100, main=(0, 1100) if program else None)
    report = trace.profile(tmp_path / "early.otf2")
    worker = by_path(report, 1)
    parallel = "!$omp parallel @synthetic.c:1"
    if program:
        assert worker[f"early/THREADS/{parallel}"] == (1, 950)
        assert worker["early/THREADS"] == (0, 950)
        assert worker["early"] == (0, 950)
        assert [(r.paradigm, r.role) for r in report.regions if r.name == "THREADS"] == [("pthread", "artificial")]
    else:
        assert worker[parallel] == (1, 950)
        assert "THREADS" not in [r.name for r in report.regions]
    assert by_path(report, 0)["early/main" if program else "main"][0] == 1
