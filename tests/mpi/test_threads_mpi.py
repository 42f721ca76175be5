"""write_report(threads=...) under mpirun: each rank holds one process of a real Score-P
report (bt-mz 2 x 4 and 8 x 4 threads), aggregates its threads before collation, and the
collated report equals the report aggregated in one process, value for value."""

from __future__ import annotations

import functools

import pytest
from launch import mpirun

from cubescale.threads import STRATEGIES

CASES = [("bt-mz.p2x4.bad_checksums.cubex", 2), ("bt-mz.B.8x4.cubex", 8)]


@functools.cache
def results(report: str, ranks: int, data: str, tmp: str) -> dict:
    lines = mpirun(ranks, "worker_threads.py", f"{data}/cubex/{report}", tmp, *STRATEGIES, timeout=300)
    return {r["strategy"]: r for r in lines}


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("threads"))


@pytest.mark.parametrize("report,ranks", CASES)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_collated_aggregation_equals_the_aggregated_report(report, ranks, strategy, shared_data, out_dir):
    r = results(report, ranks, str(shared_data), out_dir)[strategy]
    assert r["mismatches"] == 0
    assert r["ranks_match"]  # each location group's <rank> is the MPI rank that held it
    assert r["locations"] < r["threads"] or strategy in ("key", "value")
