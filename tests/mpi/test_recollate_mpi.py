"""cubescale.parallel.recollate under mpirun -n 1, 2, 3, 4, 8: real Score-P / Scalasca /
CubeLib reports (8 to 128 processes) collated again with each rank holding a block of their
processes give the same file byte for byte for every number of ranks, every value equal to the
source's, the source's machine, writer buffers within the budget; a truncated report raises on
every rank and leaves no file."""

from __future__ import annotations

import functools

import pytest
from launch import mpirun

SIZES = [1, 2, 3, 4, 8]
REPORTS = ["bt-mz.B.8x4.cubex", "l2dcm.p128.cubex", "cubelib_example.p64.cubex", "all_dtypes.cubex"]


@functools.cache
def results(size: int, data: str, tmp: str) -> dict:
    return {r["report"]: r for r in mpirun(size, "worker_recollate.py", data, tmp, *REPORTS, timeout=300)}


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("recollate"))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("report", REPORTS)
def test_every_value_and_the_machine_are_the_sources(size, report, shared_data, out_dir):
    r = results(size, str(shared_data), out_dir)[report]
    assert r["mismatches"] == 0
    assert r["same_machine"]
    assert r["writer_buffer_bytes"] <= 4096
    assert len(r["shares"]) == size


@pytest.mark.parametrize("report", REPORTS)
def test_every_number_of_ranks_writes_the_same_bytes(report, shared_data, out_dir):
    digests = {size: results(size, str(shared_data), out_dir)[report]["sha256"] for size in SIZES}
    assert len(set(digests.values())) == 1, digests
    # more than one rank really held processes
    assert sum(1 for n in results(8, str(shared_data), out_dir)[report]["shares"] if n) > 1


@pytest.mark.parametrize("size", [1, 3, 8])
def test_a_truncated_report_raises_on_every_rank_and_leaves_no_file(size, shared_data, out_dir):
    r = results(size, str(shared_data), out_dir)["broken"]
    assert len(r["raised"]) == size and all(r["raised"]), r["raised"]
    assert r["left"] == []
