"""Unification and collation under mpirun -n 1, 2, 3, 4, 8: random per-rank call trees and
thread counts (one rank visits nothing), every data type the writer supports; every value of
the collated report equals its rank's input byte for byte, budgets from 64 bytes (rows in
column pieces) to 1 MiB give the same file byte for byte, pycubexr reads it, and an error on
one rank, before or after values have moved, ends the job on every rank without a file."""

from __future__ import annotations

import functools

import pytest
from launch import mpirun

SIZES = [1, 2, 3, 4, 8]
# 128 bytes cannot be halved for TAU_ATOMIC's 36-byte values (one value needs 108): the
# writer takes one whole-budget block at a time; from 300 on it asks for the next half-budget
# block before writing one. The bytes must be the same either way.
BUDGETS = ["values:128", "values:300", "values:4096", "values:1048576"]
SCENARIOS = [*BUDGETS, "values:300:z", "values:1048576:z", "pycubexr", "fail", "fail_block", "conflict"]
# 8 oversubscribed ranks on 2 cores: the tiny budgets (thousands of collectives) only below.
LARGE = ["values:4096", "values:1048576", "values:1048576:z", "pycubexr", "fail", "fail_block"]


def _scenarios(size: int) -> list[str]:
    return LARGE if size > 4 else SCENARIOS


@functools.cache
def results(size: int, tmp: str) -> dict:
    return {r["scenario"]: r for r in mpirun(size, "worker_collate.py", tmp, "7", *_scenarios(size), timeout=300)}


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("collate"))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("scenario", [*BUDGETS, "values:300:z", "pycubexr"])
def test_every_value_equals_its_ranks_input(size, scenario, out_dir):
    if scenario not in _scenarios(size):
        pytest.skip("tiny budgets run below 8 ranks")
    r = results(size, out_dir)[scenario]
    assert r["mismatches"] == 0
    assert r["locations"] == sum(1 + rank % 3 for rank in range(size))


@pytest.mark.parametrize("size", SIZES)
def test_block_budgets_give_the_same_bytes_and_stay_within_budget(size, out_dir):
    runs = results(size, out_dir)
    budgets = [s for s in BUDGETS if s in runs]
    assert len(budgets) >= 2
    assert len({runs[s]["sha256"] for s in budgets}) == 1
    for s in budgets:
        assert runs[s]["writer_buffer_bytes"] <= runs[s]["block_bytes"], s
    if "values:300:z" in runs:
        assert runs["values:300:z"]["sha256"] == runs["values:1048576:z"]["sha256"]


@pytest.mark.parametrize("size", SIZES)
def test_pycubexr_reads_the_collated_report(size, out_dir):
    r = results(size, out_dir)["pycubexr"]
    assert r["pycubexr_metrics"] == ["time", "visits", "bytes", "min_time", "max_time"]
    assert r["pycubexr_cnodes"] >= 1


@pytest.mark.parametrize("size", [2, 3, 8])
def test_a_failing_rank_ends_the_job_everywhere_without_a_file(size, out_dir):
    r = results(size, out_dir)["fail"]
    assert all("injected failure" in e for e in r["errors"]), r["errors"]
    assert r["left_behind"] == []


@pytest.mark.parametrize("size", [1, 3, 8])
def test_a_rank_failing_after_data_moved_leaves_no_file_and_raises_everywhere(size, out_dir):
    r = results(size, out_dir)["fail_block"]
    assert all("injected failure in a block" in e for e in r["errors"]), r["errors"]
    assert r["left_behind"] == []


@pytest.mark.parametrize("size", [2, 4])
def test_conflicting_metric_definitions_raise_on_every_rank(size, out_dir):
    r = results(size, out_dir)["conflict"]
    assert all("visits is defined differently" in e for e in r["errors"]), r["errors"]
    assert r["left_behind"] == []


def test_the_example_script_writes_one_report_of_all_ranks(tmp_path):
    import numpy as np

    import cubescale

    out = tmp_path / "demo.cubex"
    mpirun(3, "../../examples/collate_demo.py", str(out), timeout=120)
    report = cubescale.open(out)
    assert report.shape == (6, 6)  # 6 call paths, 3 ranks x 2 threads
    assert [loc.process for loc in report.locations] == ["rank 0"] * 2 + ["rank 1"] * 2 + ["rank 2"] * 2
    visits = report.values("visits", inclusive=False)
    compute = [c.index for c in report.cnodes if c.region.name == "compute"][0]
    assert visits[compute].tolist() == [10] * 6
    assert np.all(report.values("time", inclusive=True)[0] > 0)
