"""OpenMP wait states of ``cubescale.analyze`` (Scalasca's omp_ibarrier_wait,
omp_ebarrier_wait, omp_lock_contention_critical, omp_lock_contention_api): exact values on a
synthetic OpenMP trace with stated timings, jacobi-hybrid (Score-P, MPI + OpenMP) against a
reference computed here from the event DataFrame, and Scalasca's metric tree."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from analysis_cases import OMP_REGIONS as REGIONS

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
    spec = waitstates.spec_tree()
    names = [m.name for m in synthetic.metrics]
    tree = ["execution", "omp_time", "omp_synchronization", "omp_barrier", "omp_ebarrier", "omp_ebarrier_wait",
            "omp_ibarrier", "omp_ibarrier_wait", "omp_critical", "omp_lock_contention_critical", "omp_lock_api",
            "omp_lock_contention_api"]
    start = names.index("execution")
    assert names[start:start + len(tree)] == tree  # preorder, right below time
    scouts = {"omp_lock_contention_critical": ("OMP Critical Contention", "omp_critical"),
              "omp_lock_contention_api": ("OMP Lock API Contention", "omp_lock_api")}
    for name in tree:
        m = synthetic.metric(name)
        display, parent = scouts.get(name) or spec[name]
        assert (m.display_name, synthetic.metrics[m.parent].name) == (display, parent), name
        assert (m.unit, m.kind, m.dtype) == ("sec", "EXCLUSIVE", "DOUBLE")
    # a parent stores its children; execution is all of time here (where the profile's exclusive
    # time of a worker thread is negative, on its master's call paths above the parallel region,
    # execution has none)
    for name in tree[1:]:
        m = synthetic.metric(name)
        parent = synthetic.values(synthetic.metrics[m.parent].name, inclusive=False)
        assert (parent - synthetic.values(name, inclusive=False) >= -1e-15).all(), name
    assert np.allclose(synthetic.values("execution", inclusive=False),
                       synthetic.values("time", inclusive=False).clip(min=0))


@pytest.fixture(scope="module")
def jacobi():
    path = waitstates._shared_anchor("jacobi-hybrid")
    return cubescale.analyze(path), trace.Trace(path).events()


def _enclosing_enter(df):
    """Per event the time of the last Enter before it on its location (the region around it)."""
    return df["Timestamp (ns)"].where(df["Event Type"] == "ENTER").groupby(df["Location"]).ffill()


def test_jacobi_barrier_waits_equal_the_event_dataframe(jacobi):
    report, df = jacobi
    df = df.assign(enter=_enclosing_enter(df))
    kind = df["Event Type"]
    team = (kind == "THREAD_TEAM_BEGIN").groupby(df["Location"]).cumsum()
    barrier = df["Name"].str.startswith("!$omp implicit barrier") & (kind == "LEAVE")
    b = df[barrier].assign(team=team[barrier])
    b = b.assign(k=b.groupby(["Location", "team"]).cumcount())
    latest = b.groupby(["Process", "team", "k"])["enter"].transform("max")
    b = b.assign(wait=(np.minimum(latest, b["Timestamp (ns)"]) - b["enter"]).clip(lower=0) * NS)
    reference = b.groupby("Location")["wait"].sum()
    ours = pd.Series(report.values("omp_ibarrier_wait", inclusive=False).sum(axis=0),
                     index=[loc.index for loc in report.locations])
    assert ours.reindex(reference.index).values == pytest.approx(reference.values, rel=1e-9, abs=1e-12)
    # plausible: every thread of a team waits somewhere, never longer than it spent in barriers
    in_barriers = report.values("omp_ibarrier", inclusive=False).sum(axis=0)
    assert (ours.values <= in_barriers + 1e-12).all()
    assert (ours.reindex(reference.index) > 0).all()


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
    assert names == ["omp_ebarrier_wait", "omp_ibarrier_wait", "omp_lock_contention_critical", "omp_lock_contention_api"]
