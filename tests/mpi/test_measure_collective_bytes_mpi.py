"""Collective bytes of `cubescale run --trace` under mpirun -n 4 follow Score-P's rules (its
MPI adapter's collective byte accounting, docs/measure.md): the MpiCollectiveEnd events and
the profile's bytes per rank, each computed here from the rule; and the rule reproduces the
numbers of a Score-P 8.4 trace of a 4096-byte MPI_Bcast on 4 ranks."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest
from launch import HERE

import cubescale
import cubescale.trace
from cubescale.mpirun import local_environment

N, BLOCK = 4, 4096


def scorep_rule(operation: str, me: int, root: int = 0, in_place: bool = False,
                blocks: list[int] | None = None) -> tuple[int, int]:
    """(sent, received) of rank ``me`` as Score-P counts them, written out per collective:
    a rank counts what goes to every rank and what comes from every rank, itself included,
    unless IN_PLACE keeps its own block where it is. ``blocks``: each rank's block (v-forms)."""
    blocks = blocks or [BLOCK] * N
    others = sum(blocks) - blocks[me]
    if operation == "bcast":
        return (N * blocks[root], blocks[root]) if me == root else (0, blocks[root])
    if operation in ("gather", "reduce"):
        if me != root:
            return blocks[me], 0
        return (0, others) if in_place else (blocks[me], sum(blocks))
    if operation == "scatter":
        if me != root:
            return 0, blocks[me]
        return (others, 0) if in_place else (sum(blocks), blocks[me])
    if operation == "allgatherv":
        return N * blocks[me], sum(blocks)
    if operation in ("allreduce", "allgather", "alltoall", "reduce_scatter"):
        return ((N - 1) * blocks[me],) * 2 if in_place else (N * blocks[me], N * blocks[me])
    if operation == "scan":
        return (N - me) * blocks[me], (me + 1) * blocks[me]
    if operation == "exscan":
        return (N - me - 1) * blocks[me], me * blocks[me]
    return 0, 0


def expected(me: int) -> list[tuple[str, int, int]]:
    """The program's collectives in order (app_collective_bytes.py): (operation, sent, received)."""
    v = [BLOCK * (r + 1) for r in range(N)]
    pickled = len(pickle.dumps(b"x" * 1000, protocol=pickle.HIGHEST_PROTOCOL))
    calls = [("BCAST", scorep_rule("bcast", me, root=1)),
             ("REDUCE", scorep_rule("reduce", me)), ("REDUCE", scorep_rule("reduce", me, in_place=me == 0)),
             ("ALLREDUCE", scorep_rule("allreduce", me)), ("ALLREDUCE", scorep_rule("allreduce", me, in_place=True)),
             ("GATHER", scorep_rule("gather", me, root=2)),
             ("SCATTER", scorep_rule("scatter", me)), ("SCATTER", scorep_rule("scatter", me, in_place=me == 0)),
             ("GATHERV", scorep_rule("gather", me, blocks=v)), ("SCATTERV", scorep_rule("scatter", me, blocks=v)),
             ("ALLGATHER", scorep_rule("allgather", me)), ("ALLGATHER", scorep_rule("allgather", me, in_place=True)),
             ("ALLGATHERV", scorep_rule("allgatherv", me, blocks=v)),
             ("ALLTOALL", scorep_rule("alltoall", me)), ("ALLTOALLV", scorep_rule("alltoall", me)),
             ("REDUCE_SCATTER_BLOCK", scorep_rule("reduce_scatter", me)),
             ("REDUCE_SCATTER", scorep_rule("reduce_scatter", me)),
             ("SCAN", scorep_rule("scan", me)), ("EXSCAN", scorep_rule("exscan", me)),
             ("BARRIER", (0, 0)),
             ("BCAST", scorep_rule("bcast", me, blocks=[pickled] * N)), ("BARRIER", (0, 0))]
    return [(operation, sent, received) for operation, (sent, received) in calls]


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bytes")
    env = local_environment()
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    out, trace = str(tmp / "run.cubex"), str(tmp / "run-trace")
    command = ["timeout", "-k", "5", "120", "mpirun", "-n", str(N), *passed, sys.executable, "-m", "cubescale",
               "run", "-o", out, "--quiet", "--trace", "--trace-dir", trace, str(HERE / "app_collective_bytes.py")]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-3000:]
    return out, os.path.join(trace, "traces.otf2")


def _otf2_print(anchor) -> list[str]:
    if shutil.which("otf2-print") is None:
        pytest.skip("otf2-print (otf2-tools) is not installed")
    done = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line for line in done.stdout.splitlines() if line.startswith("MPI_COLLECTIVE_END")]


def _fields(line: str) -> tuple[int, str, int, int]:
    """(location, operation, sent, received) of an otf2-print MPI_COLLECTIVE_END line."""
    location = int(line.split()[1])
    operation = line.split("Operation: ")[1].split(",")[0]
    sent = int(line.split("Sent: ")[1].split(",")[0])
    return location, operation, sent, int(line.split("Received: ")[1].split(",")[0])


def test_collective_ends_follow_scorep_rules(traced):
    _, anchor = traced
    lines = _otf2_print(anchor)
    locations = cubescale.trace.open(anchor).locations  # otf2-print names locations by their OTF2 id
    masters = [int(i) for i, name in zip(locations["id"], locations["name"]) if name == "Master thread"]
    for me, location in enumerate(masters):
        mine = [_fields(line)[1:] for line in lines if _fields(line)[0] == location]
        assert mine == expected(me), me


def test_nonblocking_collective_counts_as_its_blocking_form(traced):
    _, anchor = traced
    e = cubescale.trace.open(anchor).events(types=["NON_BLOCKING_COLLECTIVE_COMPLETE"])
    assert sorted(zip(e["Bytes"], e["Bytes Received"])) == [(N * BLOCK, N * BLOCK)] * N


def test_profile_bytes_are_the_events_bytes(traced):
    out, _ = traced
    r = cubescale.open(out)
    sent, received = r.values("bytes_sent", inclusive=False), r.values("bytes_received", inclusive=False)
    masters = [loc.index for loc in r.locations if loc.name == "Master thread"]
    rows = [c.index for c in r.cnodes if c.region.name.startswith("MPI_")]  # + the Iallreduce's N blocks
    for me, m in enumerate(masters):
        calls = expected(me)
        assert int(sent[rows][:, m].sum()) == sum(s for _, s, _ in calls) + N * BLOCK, me
        assert int(received[rows][:, m].sum()) == sum(r for _, _, r in calls) + N * BLOCK, me


def test_the_rule_matches_scorep_own_bcast(shared_data):
    """Score-P 8.4, 4 ranks, one 4096-byte MPI_Bcast from rank 0: the rule gives its numbers."""
    lines = [_fields(line) for line in _otf2_print(shared_data / "otf2" / "bcast-scorep8" / "traces.otf2")
             if "Operation: BCAST" in line]
    assert sorted((location, sent, received) for location, _, sent, received in lines) == \
        [(me, *scorep_rule("bcast", me, root=0)) for me in range(N)]
    assert np.sum([sent for *_, sent, _ in lines]) == N * BLOCK  # the root's "sent" counts every rank
