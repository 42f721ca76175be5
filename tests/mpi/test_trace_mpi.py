"""Trace -> profile under mpirun -n 1, 2, 3, 4: the same .cubex bytes for every number of
ranks on every shared trace, the same bytes as one process without MPI, and a broken event
file in one rank's share fails every rank without leaving a file."""

from __future__ import annotations

import functools
import hashlib
import os
import sys

import pytest
from launch import mpirun

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from otf2_oracle import anchor_ids, anchors  # noqa: E402

import cubescale.trace as trace  # noqa: E402

SIZES = [1, 2, 3, 4]


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("trace"))


@functools.cache
def results(size: int, out_dir: str) -> dict:
    return {r["trace"]: r for r in mpirun(size, "worker_trace.py", out_dir, timeout=300)}


@pytest.mark.parametrize("name", anchor_ids())
def test_same_bytes_for_every_number_of_ranks(name, out_dir):
    digests = {size: results(size, out_dir)[name]["sha256"] for size in SIZES}
    assert len(set(digests.values())) == 1, digests


@pytest.mark.parametrize("anchor", anchors(), ids=anchor_ids())
def test_same_bytes_as_one_process_without_mpi(anchor, out_dir, tmp_path):
    out = tmp_path / "serial.cubex"
    report = trace.profile(anchor, out)
    parallel = results(2, out_dir)[anchor.parent.name]
    assert tuple(parallel["shape"]) == report.shape
    assert hashlib.sha256(out.read_bytes()).hexdigest() == parallel["sha256"]


@pytest.mark.parametrize("size", [2, 3])
def test_broken_share_fails_every_rank(size, out_dir):
    r = results(size, out_dir)["broken"]
    assert len(r["raised"]) == size and all(r["raised"]), r
    assert any("traces/3.evt" in msg for msg in r["raised"])
    assert r["left"] == []
