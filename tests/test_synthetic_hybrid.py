"""Synthetic hybrid (MPI + OpenMP) traces (cubescale.testing.write_hybrid_trace): the analysis of
one finds the OpenMP barrier waits of both processes and the MPI Late Sender built into it, and
the writer puts a master's MPI calls inside a parallel region where they fit between its calls
(MPI_THREAD_FUNNELED code) and refuses the others before it writes anything."""

from __future__ import annotations

import pytest
from test_analysis_waitstates import by_call

import cubescale
from cubescale import testing

NS = 1e-9
IBARRIER, EBARRIER = "!$omp implicit barrier @synthetic.c:2", "!$omp barrier @synthetic.c:3"

# 2 ranks x 3 threads. Rank 0: its worker 2 enters the implicit barrier at 450 (the master waits
# from 150, worker 1 from 200), then the master sends to rank 1 at 600. Rank 1 waits in MPI_Recv
# from 100 (a Late Sender of 500 ns), then runs a region whose explicit barrier worker 1 enters
# last (at 760: the master waits 50 ns, worker 2 40 ns) and an implicit barrier all enter at 810.
RANKS = [
    {"mpi": [("MPI_Init", 0, 50, [], 0), ("MPI_Send", 600, 610, [1], 0), ("MPI_Finalize", 900, 950, [], 0)],
     "regions": [{"fork": 100, "join": 520, "threads": [[("ibarrier", 150, 500)], [("ibarrier", 200, 500)],
                                                         [("ibarrier", 450, 500)]]}]},
    {"mpi": [("MPI_Init", 0, 50, [], 0), ("MPI_Recv", 100, 620, [0], 0), ("MPI_Finalize", 900, 950, [], 0)],
     "regions": [{"fork": 700, "join": 850, "threads": [[("barrier", 710, 800), ("ibarrier", 810, 840)],
                                                         [("barrier", 760, 800), ("ibarrier", 810, 840)],
                                                         [("barrier", 720, 800), ("ibarrier", 810, 840)]]}]},
]
# (location, region of the call path): ns; rank p's thread t is location p * 3 + t
EXPECTED = {
    "omp_ibarrier_wait": {(0, IBARRIER): 300, (1, IBARRIER): 250},
    "omp_ebarrier_wait": {(3, EBARRIER): 50, (5, EBARRIER): 40},
    "mpi_latesender": {(3, "MPI_Recv"): 500},
}


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory):
    d = tmp_path_factory.mktemp("hybrid")
    events = testing.write_hybrid_trace(d, "hybrid", RANKS, threads=3, end=1000)
    return d / "hybrid.otf2", events, cubescale.analyze(d / "hybrid.otf2", d / "hybrid.cubex")


def test_the_trace_has_a_process_of_three_threads_per_rank(hybrid):
    path, events, _ = hybrid
    assert testing.read_with_empty_callbacks(path) == events
    report = cubescale.open(path.with_suffix(".cubex"))
    assert [loc.process_rank for loc in report.locations] == [0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("pattern", sorted(EXPECTED))
def test_the_analysis_finds_the_waits_built_in(hybrid, pattern):
    got = by_call(hybrid[2], pattern)
    assert got.keys() == EXPECTED[pattern].keys()
    for key, ns in EXPECTED[pattern].items():
        assert got[key] == pytest.approx(ns * NS, rel=1e-12), key


def test_mpi_calls_of_the_master_inside_a_parallel_region(tmp_path):
    """MPI_THREAD_FUNNELED code: the master's MPI_Recv between its calls in the region, below the
    parallel region in the call tree, waiting for rank 1's send; the workers wait for the master
    at the implicit barrier it enters after the receive."""
    ranks = [{"mpi": [("MPI_Recv", 150, 500, [1], 0)],
              "regions": [{"fork": 100, "join": 600, "threads": [[("ibarrier", 520, 580)], [("ibarrier", 200, 580)]]}]},
             {"mpi": [("MPI_Send", 480, 490, [0], 0)], "regions": []}]
    testing.write_hybrid_trace(tmp_path, "funneled", ranks, threads=2, end=1000)
    report = cubescale.analyze(tmp_path / "funneled.otf2", tmp_path / "funneled.cubex")
    recv = [c for c in report.cnodes if c.region.name == "MPI_Recv"]
    assert [report.cnodes[int(report.cnode_parents[c.id])].region.name for c in recv] == ["!$omp parallel @synthetic.c:1"]
    assert by_call(report, "mpi_latesender") == pytest.approx({(0, "MPI_Recv"): 330 * NS})
    assert by_call(report, "omp_ibarrier_wait") == pytest.approx({(1, IBARRIER): 320 * NS})
    # overlapping one of the master's calls in the region: refused
    ranks[0]["mpi"] = [("MPI_Recv", 150, 530, [1], 0)]
    with pytest.raises(ValueError, match=r"MPI_Recv \[150, 530\] overlaps the parallel region \[100, 600\] or one of"):
        testing.write_hybrid_trace(tmp_path, "bad", ranks, threads=2, end=1000)


def test_mpi_calls_across_a_parallel_region_are_refused(tmp_path):
    ranks = [dict(RANKS[0], mpi=[("MPI_Init", 0, 50, [], 0), ("MPI_Send", 500, 610, [1], 0)]), RANKS[1]]
    with pytest.raises(ValueError, match=r"rank 0: MPI_Send \[500, 610\] overlaps the parallel region \[100, 520\]"):
        testing.write_hybrid_trace(tmp_path, "bad", ranks, threads=3, end=1000)
    with pytest.raises(ValueError, match="a team needs 1 to 2 threads"):
        testing.write_hybrid_trace(tmp_path, "bad", RANKS, threads=2, end=1000)
    assert not (tmp_path / "bad.otf2").exists()


def test_writer_refuses_what_would_break_a_location_s_time_order(tmp_path):
    """Found by review: main's own leave inside a region, a master's team begin before its fork
    and a thread's team begin before its previous team's end are refused before anything is
    written; a misspelt key of a rank is not ignored."""
    region = {"fork": 100, "join": 300, "threads": [[("ibarrier", 200, 250)], [("ibarrier", 240, 250)]]}
    with pytest.raises(ValueError, match=r"outside main \[150, 160\] overlaps the parallel region"):
        testing.write_hybrid_trace(tmp_path, "bad", [{"mpi": [("outside main", 150, 160, [], 0)], "regions": [region]}],
                                   threads=2, end=400)
    with pytest.raises(ValueError, match="the master's team begin before the fork"):
        testing.write_hybrid_trace(tmp_path, "bad", [{"mpi": [], "regions": [dict(region, begin=[90, 100])]}],
                                   threads=2, end=400)
    later = {"fork": 300, "join": 380, "begin": [300, 290], "threads": [[("ibarrier", 310, 320)], [("ibarrier", 310, 320)]]}
    with pytest.raises(ValueError, match="a thread's team begin before its previous team's end"):
        testing.write_hybrid_trace(tmp_path, "bad", [{"mpi": [], "regions": [region, later]}], threads=2, end=400)
    with pytest.raises(ValueError, match="a hybrid rank is a dict of 'mpi'"):
        testing.write_hybrid_trace(tmp_path, "bad", [{"mpi": [], "region": [region]}], threads=2, end=400)
    assert not list(tmp_path.iterdir())
