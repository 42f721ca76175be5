"""Trace -> profile: against Score-P's own profile of the same run (late-sender-barrier and
any shared trace with a profile.cubex beside it), and self-consistency on every shared trace
(visits = Enter events, PAPI deltas, OpenMP threads in their process's call tree)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from otf2_oracle import SHARED_OTF2, anchor_ids, anchors, have_otf2_print, otf2_print_team_enters

import cubescale
from cubescale import testing, trace
from cubescale.trace import open as open_trace

WITH_PROFILE = [a for a in anchors() if (a.parent / "profile.cubex").exists()]


def call_paths(report) -> dict[tuple[str, ...], int]:
    """{region names from the root: cnode index}."""
    out: dict[tuple[str, ...], int] = {}
    parents = report.cnode_parents
    for c in report.cnodes:
        path, x = [], c.index
        while x >= 0:
            path.append(report.cnodes[x].region.name)
            x = int(parents[x])
        out[tuple(reversed(path))] = c.index
    return out


def location_keys(report) -> list[tuple[str, str]]:
    return [(loc.process, loc.name) for loc in report.locations]


def test_late_sender_barrier_has_a_profile():
    assert [a.parent.name for a in WITH_PROFILE] == ["late-sender-barrier"]


@pytest.mark.parametrize("anchor", WITH_PROFILE, ids=[a.parent.name for a in WITH_PROFILE])
def test_same_call_tree_visits_and_times_as_score_p(anchor: Path):
    scorep = cubescale.open(anchor.parent / "profile.cubex")
    ours = trace.profile(anchor)
    a, b = call_paths(scorep), call_paths(ours)
    assert set(a) == set(b)
    assert location_keys(scorep) == location_keys(ours)
    rows_a, rows_b = list(a.values()), [b[k] for k in a]
    visits_a = scorep.values("visits", inclusive=False)[rows_a]
    visits_b = ours.values("visits", inclusive=False)[rows_b]
    assert np.array_equal(visits_a, visits_b)
    for metric in ("time", "min_time", "max_time"):
        x = scorep.values(metric, inclusive=metric == "time")[rows_a]
        y = ours.values(metric, inclusive=metric == "time")[rows_b]
        assert np.allclose(x, y, rtol=1e-3, atol=0), metric
    for metric in ("bytes_sent", "bytes_received"):
        assert np.array_equal(scorep.values(metric, inclusive=False)[rows_a],
                              ours.values(metric, inclusive=False)[rows_b]), metric


def _nodes(report) -> list[tuple[str, str]]:
    tree = report.system
    return [(tree.class_name(e), tree.name(e)) for e in tree.preorder() if tree.kind(e) == tree.kind(0)]


@pytest.mark.parametrize("anchor", WITH_PROFILE, ids=[a.parent.name for a in WITH_PROFILE])
def test_regions_are_named_as_score_p_names_them(anchor: Path):
    # So that Cube's algebra (and ours) matches the two reports' call paths: a region is known by
    # its name, file and lines (Score-P writes -1 for OTF2's "no line").
    from cubescale import algebra

    scorep = cubescale.open(anchor.parent / "profile.cubex")
    ours = trace.profile(anchor)
    key = {r.name: (r.module, r.begin, r.end) for r in ours.regions}
    assert {r.name: (r.module, r.begin, r.end) for r in scorep.regions if r.name in key} == \
        {name: key[name] for name in {r.name for r in scorep.regions} & set(key)}
    # nodes keep the trace's names ("zih"; Score-P's profile says "node zih"): the default matching
    # by layout merges the machines all the same
    assert _nodes(scorep) == [("machine", "machine Linux"), ("node", "node zih")]
    assert _nodes(ours) == [("machine", "Linux"), ("node", "zih")]
    merged = algebra.diff(ours, scorep)
    assert merged.shape == scorep.shape == ours.shape


def test_time_differences_are_the_clock_corrections():
    # What differs from Score-P's numbers: OTF2's reader moves each location's timestamps by
    # the clock offsets Score-P recorded (CLOCK_OFFSET, interpolated linearly in time: rank 0
    # +0/+0 ns, rank 1 +107/+19, rank 2 -54/-55, rank 3 +123/-96), while Score-P's profile
    # measured uncorrected local durations. Rank 0 is identical; the others differ by at most
    # the drift of their offset over the run (88, 1 and 219 ns in 20 s): < 2e-8 relative.
    anchor = SHARED_OTF2 / "late-sender-barrier" / "traces.otf2"
    scorep = cubescale.open(anchor.parent / "profile.cubex")
    ours = trace.profile(anchor)
    a, b = call_paths(scorep), call_paths(ours)
    x = scorep.values("time", inclusive=True)[list(a.values())]
    y = ours.values("time", inclusive=True)[[b[k] for k in a]]
    difference = np.abs(x - y)
    assert np.allclose(x[:, 0], y[:, 0], rtol=1e-14, atol=0)
    drift_ns = np.array([0, 88, 1, 219])
    assert (difference <= (drift_ns + 1.5) * 1e-9).all()
    assert (difference / np.where(x > 0, x, 1)).max() < 2e-8


@pytest.mark.parametrize("anchor", anchors(), ids=anchor_ids())
def test_visits_equal_enter_events(anchor: Path):
    trace = open_trace(anchor)
    report = trace.profile()
    enters = trace.event_counts(all_types=True)["ENTER"]
    # a PROGRAM_BEGIN that names the program's region enters it
    begins = trace.events(types=["PROGRAM_BEGIN"])
    programs = begins[begins["Region"] >= 0].groupby("Location").size()
    order = trace.location_indices()
    visits = report.values("visits", inclusive=False).sum(axis=0)
    assert visits.tolist() == [int(enters[loc]) + int(programs.get(loc, 0)) for loc in order]
    # Inclusive time of the roots of a location never exceeds the trace's length.
    roots = [c.index for c in report.cnodes if c.parent is None]
    if trace.clock[2]:  # OTF2's integrity trace has no clock definition
        assert report.values("time", inclusive=True)[roots].sum(axis=0).max() <= trace.duration * (1 + 1e-9)


def test_papi_counters_are_deltas_of_the_metric_events():
    anchor = SHARED_OTF2 / "ping-pong-papi" / "traces.otf2"
    trace = open_trace(anchor)
    report = trace.profile()
    # Score-P's order: the counters between max_time and the message bytes (its 1.4 to 9 reports)
    assert [m.name for m in report.metrics][3:] == ["max_time", "PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP",
                                                    "bytes_sent", "bytes_received"]
    main = [c.index for c in report.cnodes if c.region.name == "int main(int, char**)"]
    assert len(main) == 1
    events = trace.events(types=["METRIC"])
    for counter in ("PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP"):
        ours = report.values(counter, inclusive=True)[main[0]]
        for loc in range(2):
            values = events[events["Location"] == loc][counter].to_numpy()
            # main is entered after the first metric event and left at the last one
            assert int(ours[loc]) == int(values[-1] - values[0]), counter


@pytest.mark.parametrize("name, program, below", [("ping-pong", "ping-pong.otf2", "int main(int, char**)"),
                                                   ("bcast-scorep8", "bcast", "MPI_Init")])
def test_program_begin_is_the_root_call_path(name, program, below):
    """Score-P 7 and later record PROGRAM_BEGIN/PROGRAM_END: as in Score-P's own profiles and
    Scalasca's reports, the program's region is the root, holding the time outside main."""
    anchor = SHARED_OTF2 / name / "traces.otf2"
    report = trace.profile(anchor)
    roots = [c for c in report.cnodes if c.parent is None]
    assert [r.region.name for r in roots] == [program]
    assert below in [report.cnodes[c].region.name for c in roots[0].children]
    events = open_trace(anchor).events(types=["PROGRAM_BEGIN", "PROGRAM_END"])
    begin = events[events["Event Type"] == "PROGRAM_BEGIN"].groupby("Location")["Ticks"].min()
    end = events[events["Event Type"] == "PROGRAM_END"].groupby("Location")["Ticks"].max()
    resolution = open_trace(anchor).clock[0]
    inclusive = report.values("time", inclusive=True)[roots[0].index]
    assert inclusive == pytest.approx(((end - begin) / resolution).to_numpy(), rel=1e-12)
    if name == "ping-pong":  # what Scalasca's scout shows there (tests/data/scout_reference.json)
        assert report.values("time", inclusive=False)[roots[0].index] == pytest.approx([5.731e-05, 5.774e-05], rel=1e-3)


def test_openmp_threads_hang_below_the_parallel_region():
    anchor = SHARED_OTF2 / "openmp-nested" / "traces.otf2"
    report = trace.profile(anchor)
    roots = [c for c in report.cnodes if c.parent is None]
    assert [r.region.name for r in roots] == ["main"]
    visits = report.values("visits", inclusive=False)
    tasks = [c.index for c in report.cnodes if c.region.name == "!$omp implicit_task"]
    # Every thread ran implicit tasks, each below a parallel region.
    assert (visits[tasks].sum(axis=0) > 0).all()
    for t in tasks:
        assert report.cnodes[report.cnodes[t].parent].region.name.startswith("!$omp parallel")


@pytest.mark.skipif(not have_otf2_print(), reason="otf2-print (otf2-tools) not installed")
def test_ompt_worker_threads_start_in_the_team_their_implicit_task_names():
    """openmp-nested (Score-P's OMPT adapter): two threads of an outer team each fork an inner
    team at the same time. Every implicit task names its team (OMPT_PARALLEL_REGION_ID), so a
    worker goes below the call path where a thread opened that team (its first Enter naming
    it, by otf2-print), not below whichever region was innermost open on an earlier thread
    (which put two members of the outer team into the master's inner team)."""
    anchor = SHARED_OTF2 / "openmp-nested" / "traces.otf2"
    report = trace.profile(anchor)
    ids = list(open_trace(anchor).locations["id"])
    visits = report.values("visits", inclusive=False)

    def path(c) -> tuple[str, ...]:
        names = []
        while c is not None:
            names.append(report.cnodes[c].region.name)
            c = report.cnodes[c].parent
        return tuple(reversed(names))

    visited = {(path(c.index), loc) for c in report.cnodes for loc in np.flatnonzero(visits[c.index])}
    opened: dict[int, tuple[int, str]] = {}  # team -> (location, region) of its first enter
    members: dict[int, set[int]] = {}
    for location, _, region, team in otf2_print_team_enters(anchor):
        opened.setdefault(team, (location, region))
        if region == "!$omp implicit_task":
            members.setdefault(team, set()).add(ids.index(location))
    assert len(opened) == 6 and sorted(len(m) for m in members.values()) == [4, 4, 4, 4, 4, 4]
    for team, (location, region) in opened.items():
        # where the team opened: a call path ending in that region, visited by the thread that opened it
        forks = [p for p, loc in visited if loc == ids.index(location) and p[-1] == region]
        assert len(forks) == 1, (team, forks)
        for member in members[team]:
            assert (forks[0] + ("!$omp implicit_task",), member) in visited, (team, member)


def test_profile_round_trip(tmp_path):
    anchor = SHARED_OTF2 / "jacobi-hybrid" / "traces.otf2"
    report = trace.profile(anchor, tmp_path / "p.cubex")
    again = cubescale.open(tmp_path / "p.cubex")
    assert again.shape == report.shape == (report.shape[0], 10)
    for m in ("visits", "time", "bytes_sent"):
        assert np.array_equal(again.values(m, inclusive=False), report.values(m, inclusive=False))
    assert [loc.type for loc in again.locations].count("gpu") == 2


def test_synthetic_trace_profile(tmp_path):

    written = testing.write_ring_trace(tmp_path, "syn", processes=3, iterations=25)
    assert written == 3 * (25 * 18 + 2)
    t = trace.open(tmp_path / "syn.otf2")
    assert testing.read_with_empty_callbacks(t) == written
    r = t.profile()
    visits = r.values("visits", inclusive=False)
    by_name = {c.region.name: c.index for c in r.cnodes}
    assert visits[by_name["compute"]].tolist() == [25, 25, 25]
    assert r.values("bytes_sent", inclusive=False)[by_name["MPI_Send"]].tolist() == [25 * 1024] * 3
    assert r.values("bytes_sent", inclusive=False)[by_name["MPI_Allreduce"]].tolist() == [25 * 8] * 3
    # The counters grow in every step; main holds all of solve's increments.
    cycles = r.values("PAPI_TOT_CYC", inclusive=True)
    assert (cycles[by_name["solve"]] > cycles[by_name["compute"]]).all()
    assert (cycles[by_name["compute"]] > 0).all()


def test_defects_in_event_streams(tmp_path):

    testing.write_ring_trace(tmp_path, "unclosed", processes=2, iterations=3, defect="unclosed")
    _, stats = trace.open(tmp_path / "unclosed.otf2").local_profile()
    assert stats["unclosed_frames"] == 2  # main on both ranks, closed at the last event
    testing.write_ring_trace(tmp_path, "bad", processes=2, iterations=3, defect="mismatched_leave")
    with pytest.raises(cubescale.FormatError) as e:
        trace.profile(tmp_path / "bad.otf2")
    assert e.value.member == "bad/0.evt" and e.value.offset > 0
    assert 'Leave of "solve" inside "compute"' in str(e.value)
