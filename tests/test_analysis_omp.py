"""OpenMP wait states of ``cubescale.analyze`` (Scalasca's omp_ibarrier_wait,
omp_ebarrier_wait, omp_lock_contention_critical, omp_lock_contention_api, omp_management,
omp_fork): exact values on a
synthetic OpenMP trace with stated timings, jacobi-hybrid (Score-P, MPI + OpenMP) against a
reference computed here from the event DataFrame, and Scalasca's metric tree."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from analysis_cases import OMP_CLOCKS, OMP_CLOCKS_EXPECTED, OMP_CLOCKS_VIOLATIONS, OMP_TEAMS, OMP_TEAMS_EXPECTED
from analysis_cases import OMP_REGIONS as REGIONS
from scout_tree import SCOUT_26_TREE

import cubescale
from cubescale import testing, trace

NS = 1e-9
waitstates = importlib.import_module("test_analysis_waitstates")
IBARRIER, EBARRIER = "!$omp implicit barrier @synthetic.c:2", "!$omp barrier @synthetic.c:3"
CRITICAL = "!$omp critical @synthetic.c:4"

EXPECTED = {
    "omp_ibarrier_wait": {(0, IBARRIER): 150, (1, IBARRIER): 50},
    "omp_ebarrier_wait": {(0, EBARRIER): 50, (2, EBARRIER): 30},
    "omp_lock_contention_critical": {(1, CRITICAL): 20},
    "omp_lock_contention_api": {(0, "omp_set_lock"): 5},
}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    d = tmp_path_factory.mktemp("omp")
    testing.write_omp_trace(d, "omp", REGIONS, threads=3, end=1000)
    return cubescale.analyze(d / "omp.otf2")


@pytest.mark.parametrize("pattern", sorted(EXPECTED))
def test_synthetic_omp_patterns_are_exact(synthetic, pattern):
    got = waitstates.by_call(synthetic, pattern)
    assert got.keys() == EXPECTED[pattern].keys()
    for key, ns in EXPECTED[pattern].items():
        assert got[key] == pytest.approx(ns * NS, rel=1e-12), key


def test_omp_tree_is_scalascas(synthetic):
    names = [m.name for m in synthetic.metrics]
    tree = ["execution", "omp_time", "omp_management", "omp_fork", "omp_synchronization", "omp_barrier", "omp_ebarrier", "omp_ebarrier_wait",
            "omp_ibarrier", "omp_ibarrier_wait", "omp_critical", "omp_lock_contention_critical", "omp_lock_api",
            "omp_lock_contention_api"]
    start = names.index("execution")
    assert names[start:start + len(tree)] == tree  # preorder, right below time
    # Scalasca 2.6's names ("OpenMP", both contentions "Lock Contention"; before 2026-11-28 the
    # older scalasca.spec's "OMP" and scout's raw pattern names)
    for name in tree:
        m = synthetic.metric(name)
        display, parent, unit = SCOUT_26_TREE[name]
        assert (m.display_name, synthetic.metrics[m.parent].name, m.unit) == (display, parent, unit), name
        assert (m.kind, m.dtype) == ("EXCLUSIVE", "DOUBLE")
    # a parent stores its children; execution is all of time here (where the profile's exclusive
    # time of a worker thread is negative, on its master's call paths above the parallel region,
    # execution has none)
    for name in tree[1:]:
        m = synthetic.metric(name)
        parent = synthetic.values(synthetic.metrics[m.parent].name, inclusive=False)
        assert (parent - synthetic.values(name, inclusive=False) >= -1e-15).all(), name
    # (time less the idle threads: Scalasca 2.6's execution, test_idle_threads_as_scalasca_adds_them)
    assert np.allclose(synthetic.values("execution", inclusive=False),
                       (synthetic.values("time", inclusive=False)
                        - synthetic.values("omp_idle_threads", inclusive=False)).clip(min=0))


def test_idle_threads_as_scalasca_adds_them(tmp_path):
    # analysis_cases.OMP_TEAMS, 3 threads. `scalasca -examine` (cube_remap2 -s) adds the idle
    # threads and counts them in time: outside parallel regions each worker idles for the
    # master's time (main: 1000 ns less the master's 400 + 270 ns in its two regions = 330), in
    # a region for what its time falls short of the master's (670 ns; thread 1 in 320 + 260 =
    # 580, thread 2 in 310 + 245 = 555: 90 and 115 ns of limited parallelism). Until 2026-11-28
    # there were none and time was execution.
    testing.write_omp_trace(tmp_path, "teams", OMP_TEAMS, threads=3, end=1000)
    report = cubescale.analyze(tmp_path / "teams.otf2")
    region = "!$omp parallel @synthetic.c:1"
    assert waitstates.by_call(report, "omp_idle_threads") == pytest.approx(
        {(1, "main"): 330 * NS, (2, "main"): 330 * NS, (1, region): 90 * NS, (2, region): 115 * NS}, rel=1e-12)
    assert waitstates.by_call(report, "omp_limited_parallelism") == pytest.approx(
        {(1, region): 90 * NS, (2, region): 115 * NS}, rel=1e-12)
    time, idle = report.values("time", inclusive=False), report.values("omp_idle_threads", inclusive=False)
    assert np.allclose(report.values("execution", inclusive=False), time - idle, atol=1e-18)
    assert report.values("time")[0] == pytest.approx([1000 * NS] * 3, rel=1e-12)  # every thread: the whole run
    for name in ("omp_idle_threads", "omp_limited_parallelism"):
        m = report.metric(name)
        display, parent, unit = SCOUT_26_TREE[name]
        assert (m.display_name, report.metrics[m.parent].name, m.unit, m.kind) == (display, parent, unit, "EXCLUSIVE")
    # scout's own metrics take the time before (the critical path covers the run once)
    assert report.values("critical_path", inclusive=False).sum() == pytest.approx(1000 * NS, rel=1e-12)
    # without OpenMP none (an MPI trace), and none beside POSIX threads (square leaves them out)
    assert "omp_idle_threads" not in [m.name for m in cubescale.analyze(waitstates._shared_anchor("ping-pong")).metrics]


def test_pthread_lock_contention_sits_in_scalascas_tree(tmp_path):
    """scout's POSIX threads lock contention (the OpenMP lock tracking on locks of paradigm
    PTHREAD) below scout.spec's POSIX threads tree, beside omp_time; OpenMP and POSIX threads
    locks of one id are different locks."""
    regions = [{"fork": 100, "join": 900, "threads": [
        [("mutex", 105, 140, 110, 3), ("lock", 150, 200, 170, 3)],
        [("lock", 120, 170, 150, 3), ("condwait", 200, 400, 250, 3)],
        [("mutex", 130, 250, 140, 3)]]}]
    testing.write_omp_trace(tmp_path, "p", regions, threads=3, end=1000)
    report = cubescale.analyze(tmp_path / "p.otf2")
    names = [m.name for m in report.metrics]
    tree = ["pthread_time", "pthread_synchronization", "pthread_lock_api", "pthread_lock_contention_mutex_lock",
            "pthread_conditional", "pthread_lock_contention_conditional"]
    start = names.index("pthread_time")
    assert names[start:start + len(tree)] == tree
    assert "omp_idle_threads" not in names  # as Scalasca's square: no idle threads beside POSIX threads
    parents = {n: report.metrics[report.metric(n).parent].name for n in tree}
    assert parents == {"pthread_time": "execution", "pthread_synchronization": "pthread_time",
                       "pthread_lock_api": "pthread_synchronization",
                       "pthread_lock_contention_mutex_lock": "pthread_lock_api",
                       "pthread_conditional": "pthread_synchronization",
                       "pthread_lock_contention_conditional": "pthread_conditional"}
    # mutex 3: thread 2 waits 130 -> 140 for thread 0, thread 1's condition wait 200 -> 250 for
    # thread 2; OpenMP lock 3 (another lock): thread 0 waits 150 -> 170 for thread 1
    assert waitstates.by_call(report, "pthread_lock_contention_mutex_lock") == pytest.approx(
        {(2, "pthread_mutex_lock"): 10 * NS}, rel=1e-12)
    assert waitstates.by_call(report, "pthread_lock_contention_conditional") == pytest.approx(
        {(1, "pthread_cond_wait"): 50 * NS}, rel=1e-12)
    assert waitstates.by_call(report, "omp_lock_contention_api") == pytest.approx(
        {(0, "omp_set_lock"): 20 * NS}, rel=1e-12)
    # the region metrics are the time of those calls: mutex lock and unlock calls, the condition wait
    own = report.values("time", inclusive=False)
    mutex = [c.index for c in report.cnodes if c.region.name.startswith("pthread_mutex")]
    assert report.values("pthread_lock_api", inclusive=False).sum() == pytest.approx(own[mutex].sum(), rel=1e-12)


def test_thread_management_is_exact(tmp_path):
    """scout's omp_management and omp_fork: per thread its time from the fork to entering the
    parallel region (omp_fork) plus from leaving it to the join, on the parallel region."""
    testing.write_omp_trace(tmp_path, "teams", OMP_TEAMS, threads=3, end=1000)
    report = cubescale.analyze(tmp_path / "teams.otf2")
    for pattern, expected in OMP_TEAMS_EXPECTED.items():
        got = waitstates.by_call(report, pattern)
        assert got == pytest.approx({(t, "!$omp parallel @synthetic.c:1"): ns * NS for t, ns in expected.items()},
                                    rel=1e-12), pattern


def test_thread_management_needs_fork_events(jacobi):
    """jacobi-hybrid (OPARI2: fork, team begin, parallel region, team end, join) has them; the
    fork part is never more than the management."""
    report, _ = jacobi
    fork, management = report.values("omp_fork", inclusive=False), report.values("omp_management", inclusive=False)
    assert fork.sum() > 0 and (management >= fork - 1e-15).all()


@pytest.fixture(scope="module")
def jacobi():
    path = waitstates._shared_anchor("jacobi-hybrid")
    return cubescale.analyze(path), trace.Trace(path).events()


def _enclosing_enter(df):
    """Per event the time of the last Enter before it on its location (the region around it)."""
    return df["Timestamp (ns)"].where(df["Event Type"] == "ENTER").groupby(df["Location"]).ffill()


def _barrier_waits(df: pd.DataFrame) -> pd.DataFrame:
    """Per implicit barrier visit (its Leave's row) its wait: until the team's last thread entered
    the same barrier (the k-th of the team instance on every thread)."""
    df = df.assign(enter=_enclosing_enter(df))
    kind = df["Event Type"]
    team = (kind == "THREAD_TEAM_BEGIN").groupby(df["Location"]).cumsum()
    barrier = df["Name"].str.startswith("!$omp implicit barrier") & (kind == "LEAVE")
    b = df[barrier].assign(team=team[barrier])
    b = b.assign(k=b.groupby(["Location", "team"]).cumcount())
    latest = b.groupby(["Process", "team", "k"])["enter"].transform("max")
    return b.assign(wait=(np.minimum(latest, b["Timestamp (ns)"]) - b["enter"]).clip(lower=0) * NS)


def test_jacobi_barrier_waits_equal_the_event_dataframe(jacobi):
    report, df = jacobi
    reference = _barrier_waits(df).groupby("Location")["wait"].sum()
    ours = pd.Series(report.values("omp_ibarrier_wait", inclusive=False).sum(axis=0),
                     index=[loc.index for loc in report.locations])
    assert ours.reindex(reference.index).values == pytest.approx(reference.values, rel=1e-9, abs=1e-12)
    # plausible: every thread of a team waits somewhere, never longer than it spent in barriers
    in_barriers = report.values("omp_ibarrier", inclusive=False).sum(axis=0)
    assert (ours.values <= in_barriers + 1e-12).all()
    assert (ours.reindex(reference.index) > 0).all()


def test_jacobi_barrier_instances_in_trace_stat_equal_the_event_dataframe(jacobi):
    # scout's trace.stat counts the OpenMP barrier waits too (Statistics.pattern): the instances
    # with a wait, their sum and largest, and the largest per call path with its barrier's times.
    report, df = jacobi
    waits = _barrier_waits(df)["wait"]
    s = cubescale.analysis.statistics(report).patterns["omp_ibarrier_wait"]
    assert s.count == (waits > 0).sum()
    assert s.sum == pytest.approx(waits.sum(), rel=1e-9)
    assert s.max == pytest.approx(waits.max(), rel=1e-12)
    # a barrier is listed whole, as scout reduces it over the team: the sum of its threads' waits
    assert s.top[0].time >= s.max and all("implicit barrier" in i.call_path for i in s.top)
    assert s.top[0].time <= s.sum
    assert "omp_management" not in cubescale.analysis.statistics(report).patterns  # as scout: not counted
    stat = cubescale.analysis.trace_stat(report)
    # the thread that waited beside its process; a lock's wait ends at its acquisition
    assert f"  - {s.top[0].time:.4g} s  {s.top[0].process}, {s.top[0].location}  " in stat
    critical = stat[stat.index("omp_lock_contention_critical"):]
    assert " acquire " in critical and " leave " not in critical
    mpi = stat[stat.index("mpi_latesender"):].splitlines()[1]
    assert "  MPI Rank 1, Master thread  main/jacobi/MPI_Sendrecv  " in mpi  # a hybrid process: its thread too


def test_a_thread_latency_of_its_own_leaves_the_messages_checks_alone():
    # clc's shared-memory latency: the threads' checks at 0 find nothing on jacobi-hybrid, the
    # messages' and collectives' at 1 µs what they find without it; with the correction the
    # OpenMP events then move no further than their producers.
    path = waitstates._shared_anchor("jacobi-hybrid")
    both = cubescale.analysis.statistics(cubescale.analyze(path, min_latency=1e-6))
    apart = cubescale.analysis.statistics(cubescale.analyze(path, min_latency=1e-6, min_thread_latency=0.0))
    assert (apart.p2p_violations, apart.collective_violations) == (both.p2p_violations, both.collective_violations)
    assert both.omp_violations > 0 == apart.omp_violations
    same = cubescale.analyze(path, time_correct=True, min_latency=1e-5, min_thread_latency=1e-5)
    default = cubescale.analyze(path, time_correct=True, min_latency=1e-5)
    assert np.array_equal(same.values("omp_management"), default.values("omp_management"))  # None: min_latency's
    less = cubescale.analyze(path, time_correct=True, min_latency=1e-5, min_thread_latency=0.0)
    assert less.values("omp_management").sum() < default.values("omp_management").sum()
    with pytest.raises(ValueError, match="min_thread_latency -1"):
        cubescale.analyze(path, min_thread_latency=-1.0)


def test_cli_takes_a_thread_latency(tmp_path, capsys):
    from cubescale.cli import main

    path = str(waitstates._shared_anchor("jacobi-hybrid"))
    assert main(["analyze", path, "-o", str(tmp_path / "a.cubex"), "--min-latency", "1e-6"]) == 0
    assert "; 0 point to point, 0 collective, 1,853 OpenMP" in capsys.readouterr().out
    assert main(["analyze", path, "-o", str(tmp_path / "b.cubex"), "--min-latency", "1e-6",
                 "--min-thread-latency", "0"]) == 0
    assert "clock condition violations: 0\n" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:  # argparse's own error, before any reading
        main(["analyze", path, "-o", str(tmp_path / "c.cubex"), "--min-thread-latency", "-1"])
    assert e.value.code == 2 and "seconds: a number of at least 0, not '-1'" in capsys.readouterr().err


def test_openmp_violations_are_named_in_the_clock_line():
    # With a message latency of 1 µs every violation on jacobi-hybrid is an OpenMP one: the line
    # says so instead of counting them as if they were the messages'.
    report = cubescale.analyze(waitstates._shared_anchor("jacobi-hybrid"), min_latency=1e-6)
    s = cubescale.analysis.statistics(report)
    assert s.p2p_violations == s.collective_violations == 0 < s.omp_violations
    line = next(li for li in cubescale.analysis.summary(report).splitlines() if li.startswith("clock condition"))
    assert line.endswith(f"; 0 point to point, 0 collective, {s.omp_violations:,} OpenMP"), line


def test_synthetic_omp_instances_in_trace_stat_add_up_to_the_metrics(synthetic):
    s = cubescale.analysis.statistics(synthetic).patterns
    assert sorted(s) == sorted(EXPECTED)  # not omp_management and omp_fork (zero here anyway)
    for pattern, cells in EXPECTED.items():
        assert s[pattern].sum == pytest.approx(sum(cells.values()) * NS, rel=1e-12), pattern
        assert len(s[pattern].top) == len({region for _, region in cells})  # one per call path
    # Each thread's wait counts, but a barrier is listed whole, as scout's trace.stat reduces it
    # over the team: the sum of the threads' waits, the earliest enter and the latest leave, on
    # the thread that waited longest (until 2026-11-28: the one thread's own wait and visit).
    assert (s["omp_ibarrier_wait"].count, s["omp_ebarrier_wait"].count) == (2, 2)
    for pattern, (ns, enter, leave) in {"omp_ibarrier_wait": (200, 200, 400),
                                        "omp_ebarrier_wait": (80, 700, 800)}.items():
        (top,) = s[pattern].top
        assert (round(top.time / NS), round(top.enter / NS), round(top.leave / NS)) == (ns, enter, leave), pattern
        assert top.location == synthetic.locations[0].name, pattern  # the master waited longest


def test_jacobi_critical_contention_equals_the_event_dataframe(jacobi):
    report, df = jacobi
    df = df.assign(enter=_enclosing_enter(df))
    acquire = df[df["Event Type"] == "THREAD_ACQUIRE_LOCK"]
    release = df[df["Event Type"] == "THREAD_RELEASE_LOCK"]
    assert len(acquire) == 8000 and len(release) == 8000
    key = ["Process", "Request", "Tag"]  # process, lock id, acquisition order
    locks = acquire.merge(release[key + ["Timestamp (ns)"]], on=key, suffixes=("", "_release"))
    locks = locks.sort_values(key)
    previous = locks.groupby(["Process", "Request"])["Timestamp (ns)_release"].shift()
    until = np.minimum(previous, locks["Timestamp (ns)"])
    locks = locks.assign(wait=(until - locks["enter"]).clip(lower=0).fillna(0) * NS)
    reference = locks.groupby("Location")["wait"].sum()
    ours = pd.Series(report.values("omp_lock_contention_critical", inclusive=False).sum(axis=0),
                     index=[loc.index for loc in report.locations])
    assert ours.reindex(reference.index).values == pytest.approx(reference.values, rel=1e-9, abs=1e-12)
    assert ours.sum() > 0
    assert "omp_lock_contention_api" not in [m.name for m in report.metrics]  # no lock API calls in jacobi


def test_omp_patterns_are_in_the_summary(synthetic):
    names = [p.name for p in cubescale.analysis.patterns(synthetic)]
    # omp_management and omp_fork are present (the trace has forks) but zero: every thread
    # begins at the fork and ends at the join
    assert names == ["omp_management", "omp_fork", "omp_ebarrier_wait", "omp_ibarrier_wait",
                     "omp_lock_contention_critical", "omp_lock_contention_api"]


def _by_path(report, metric):
    values = report.values(metric, inclusive=False)
    return {f"{int(loc)}:{report.cnodes[c].region.name}": float(values[c, loc]) for c, loc in zip(*np.nonzero(values))}


def test_openmp_clock_violations_are_counted_and_corrected(tmp_path):
    # analysis_cases.OMP_CLOCKS: a worker's team begin before the fork, its barrier left before
    # the master entered, its team end after the join (scalasca's clc: THREAD_FORK ->
    # THREAD_TEAM_BEGIN, THREAD_TEAM_END -> THREAD_JOIN, barrier enters -> leaves)
    testing.write_omp_trace(tmp_path, "clocks", OMP_CLOCKS, threads=2, end=1000)
    path = tmp_path / "clocks.otf2"
    measured = cubescale.analyze(path)
    assert _by_path(measured, "clock_violations") == OMP_CLOCKS_VIOLATIONS
    s = cubescale.analysis.statistics(measured)
    assert (s.p2p_violations, s.collective_violations, s.omp_violations) == (0, 0, 3)
    corrected = cubescale.analyze(path, time_correct=True)
    assert _by_path(corrected, "clock_violations") == {}
    s = cubescale.analysis.statistics(corrected)
    assert (s.omp_violations, s.corrected_jumps) == (3, 3)
    before, after = OMP_CLOCKS_EXPECTED
    assert _by_path(measured, "omp_ibarrier_wait") == pytest.approx({k: v * NS for k, v in before.items()}, rel=1e-12)
    assert _by_path(corrected, "omp_ibarrier_wait") == pytest.approx({k: v * NS for k, v in after.items()}, rel=1e-12)
    # a latency of 10 ns (as clc, the master's own team begin too): both begins wait for fork + 10
    # (thread 1 +30, the master +10: its barrier enter 210), thread 1 enters at 180 and leaves at
    # 210 + 10: it waits min(210, 220) - 180
    late = cubescale.analyze(path, time_correct=True, min_latency=10 * NS)
    assert sum(cubescale.analysis.clock_violations(late).values()) == 0
    assert _by_path(late, "omp_ibarrier_wait") == pytest.approx({"1:" + IBARRIER: 30 * NS}, rel=1e-12)


def test_openmp_team_without_violations_is_unchanged_by_the_correction(synthetic, tmp_path):
    testing.write_omp_trace(tmp_path, "omp", REGIONS, threads=3, end=1000)
    corrected = cubescale.analyze(tmp_path / "omp.otf2", time_correct=True)
    assert cubescale.analysis.statistics(corrected).corrected_jumps == 0
    for pattern in EXPECTED:
        assert np.array_equal(corrected.values(pattern), synthetic.values(pattern)), pattern
    assert not synthetic.values("clock_violations").any()


def test_jacobi_openmp_clock_violations_equal_the_event_dataframe(jacobi):
    """With a latency of 1 us (jacobi-hybrid has none at 0): per thread the team begins before
    the master's fork + latency, the master's joins before the team's last team end + latency,
    the barriers left before the team's last enter + latency, computed here from the events."""
    _, df = jacobi
    latency = 1000  # ns
    path = waitstates._shared_anchor("jacobi-hybrid")
    report = cubescale.analyze(path, min_latency=latency * NS)
    kind, loc = df["Event Type"], df["Location"]
    team = (kind == "THREAD_TEAM_BEGIN").groupby(loc).cumsum()  # the team instance on its location
    df = df.assign(team=team, enter=_enclosing_enter(df))
    forks = df[kind == "THREAD_FORK"]
    forks = forks.assign(team=forks.groupby("Location").cumcount() + 1)
    fork = forks.set_index(["Process", "team"])["Timestamp (ns)"]
    begins = df[kind == "THREAD_TEAM_BEGIN"]
    late_begin = begins["Timestamp (ns)"] < begins.set_index(["Process", "team"]).index.map(fork) + latency
    ends = df[kind == "THREAD_TEAM_END"]
    last_end = ends.groupby(["Process", "team"])["Timestamp (ns)"].max()
    joins = df[kind == "THREAD_JOIN"]
    joins = joins.assign(team=joins.groupby("Location").cumcount() + 1)
    early_join = joins["Timestamp (ns)"] < joins.set_index(["Process", "team"]).index.map(last_end) + latency
    barrier = (df["Name"].str.startswith("!$omp implicit barrier") | df["Name"].str.startswith("!$omp barrier")) & (
        kind == "LEAVE")
    b = df[barrier]
    b = b.assign(k=b.groupby(["Location", "team"]).cumcount())
    early_leave = b["Timestamp (ns)"] < b.groupby(["Process", "team", "k"])["enter"].transform("max") + latency
    reference = (late_begin.groupby(begins["Location"]).sum().add(early_join.groupby(joins["Location"]).sum(), fill_value=0)
                 .add(early_leave.groupby(b["Location"]).sum(), fill_value=0))
    ours = pd.Series(report.values("clock_violations", inclusive=False).sum(axis=0),
                     index=[loc.index for loc in report.locations])
    assert reference.sum() > 0
    assert ours.reindex(reference.index).values == pytest.approx(reference.values)
    assert ours.sum() == reference.sum() == cubescale.analysis.statistics(report).omp_violations


def test_cli_summary_has_the_openmp_violations(tmp_path, capsys):
    from cubescale.cli import main

    testing.write_omp_trace(tmp_path, "clocks", OMP_CLOCKS, threads=2, end=1000)
    path = str(tmp_path / "clocks.otf2")
    assert main(["analyze", path, "-o", str(tmp_path / "a.cubex")]) == 0
    assert "clock condition violations: 3 (Process: 3)" in capsys.readouterr().out
    assert main(["analyze", path, "-o", str(tmp_path / "b.cubex"), "--time-correct"]) == 0
    assert ("clock condition violations: 0; as recorded 0 point to point, 0 collective, 3 OpenMP, removed by the "
            "time correction (3 events moved forward)") in capsys.readouterr().out
