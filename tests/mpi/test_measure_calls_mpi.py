"""Every kind of mpi4py call under `cubescale run` (mpirun -n 2, 3): point-to-point with
buffers, typed buffers and pickled objects, non-blocking calls completed by Wait / Waitall,
collectives with and without counts. The bytes of each call equal its message sizes (a
receive buffer larger than the message counts the message), non-blocking receives count at
the completing wait, and regions carry Score-P's names and roles."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from launch import HERE

import cubescale
from cubescale.mpirun import local_environment
from cubescale.parallel._mpi import mpi


@pytest.fixture(scope="module", params=[2, 3])
def measured(request, tmp_path_factory):
    ranks = request.param
    out = str(tmp_path_factory.mktemp("calls") / f"calls{ranks}.cubex")
    env = local_environment()
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    command = ["timeout", "-k", "5", "120", "mpirun", "-n", str(ranks), *passed, sys.executable, "-m", "cubescale",
               "run", "-o", out, "--quiet", str(HERE / "app_measure_calls.py")]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-3000:]
    return ranks, cubescale.open(out)


def _call(report, function: str, call: str) -> tuple[list[int], list[int], list[int]]:
    """(visits, bytes sent, bytes received) per rank of `call` below the program's `function`."""
    rows = [c.index for c in report.cnodes if c.region.name == call and c.parent is not None
            and report.cnodes[c.parent].region.name == function]
    assert rows, (function, call)
    masters = sorted((loc.process_rank, loc.index) for loc in report.locations if loc.name == "Master thread")
    columns = [index for _, index in masters]
    return tuple(report.values(m, inclusive=False)[rows][:, columns].sum(axis=0).astype(int).tolist()
                 for m in ("visits", "bytes_sent", "bytes_received"))


def _pickled(obj) -> int:
    return len(mpi().pickle.dumps(obj))


def test_point_to_point_bytes_are_the_messages(measured):
    ranks, r = measured
    assert _call(r, "blocking", "MPI_Send") == ([1] * ranks, [800] * ranks, [0] * ranks)
    assert _call(r, "blocking", "MPI_Recv") == ([1] * ranks, [0] * ranks, [800] * ranks)  # of an 8000-byte buffer
    assert _call(r, "typed", "MPI_Sendrecv") == ([1] * ranks, [40] * ranks, [40] * ranks)  # 10 of 50 MPI.INT
    sent = [_pickled({"rank": k, "data": list(range(k + 5))}) for k in range(ranks)]
    assert _call(r, "objects", "MPI_Send")[1] == sent
    assert _call(r, "objects", "MPI_Recv")[2] == [sent[(k - 1) % ranks] for k in range(ranks)]


def test_non_blocking_receives_count_at_their_completion(measured):
    ranks, r = measured
    assert _call(r, "nonblocking", "MPI_Isend")[1] == [256] * ranks
    assert _call(r, "nonblocking", "MPI_Irecv") == ([1] * ranks, [0] * ranks, [0] * ranks)
    assert _call(r, "nonblocking", "MPI_Waitall") == ([1] * ranks, [0] * ranks, [256] * ranks)
    sent = [_pickled("x" * (100 + k)) for k in range(ranks)]
    assert _call(r, "nonblocking_objects", "MPI_Isend")[1] == sent
    visits, _, received = _call(r, "nonblocking_objects", "MPI_Wait")
    assert visits == [2] * ranks  # the send's wait and the receive's
    assert received == [sent[(k - 1) % ranks] for k in range(ranks)]


def test_collectives_count_what_each_rank_gives_and_gets(measured):
    ranks, r = measured
    # Score-P's rules (docs/measure.md): every rank's block counts, the rank's own included
    assert _call(r, "collectives", "MPI_Allreduce")[1:] == ([128 * ranks] * ranks, [128 * ranks] * ranks)
    assert _call(r, "collectives", "MPI_Bcast")[1:] == ([32 * ranks] + [0] * (ranks - 1), [32] * ranks)
    total = 8 * sum(k + 1 for k in range(ranks))
    assert _call(r, "collectives", "MPI_Allgatherv")[1:] == ([8 * (k + 1) * ranks for k in range(ranks)],
                                                            [total] * ranks)
    assert _call(r, "collectives", "MPI_Barrier")[1:] == ([0] * ranks, [0] * ranks)
    assert _call(r, "collectives", "MPI_Iallreduce")[1:] == ([64 * ranks] * ranks, [64 * ranks] * ranks)  # as blocking
    assert _call(r, "collectives", "MPI_Iallgatherv")[1:] == _call(r, "collectives", "MPI_Allgatherv")[1:]


def test_derived_communicators_rooted_calls_and_completions(measured):
    ranks, r = measured
    assert _call(r, "derived", "MPI_Cart_create")[0] == [1] * ranks
    assert _call(r, "derived", "MPI_Allreduce")[1:] == ([16 * ranks] * ranks, [16 * ranks] * ranks)  # on the Cartcomm
    assert _call(r, "derived", "MPI_Comm_split")[0] == [1] * ranks
    assert _call(r, "derived", "MPI_Barrier")[0] == [1] * ranks  # on the split communicator
    assert _call(r, "rooted", "MPI_Scatter")[1:] == ([32 * ranks] + [0] * (ranks - 1), [32] * ranks)
    assert _call(r, "rooted", "MPI_Reduce")[1:] == ([24] * ranks, [24 * ranks] + [0] * (ranks - 1))
    gathered = [_pickled(k) for k in range(ranks)]
    assert _call(r, "rooted", "MPI_Gather")[1:] == (gathered, [sum(gathered)] + [0] * (ranks - 1))
    assert _call(r, "completions", "MPI_Waitany")[2] == [24] * ranks
    visits, _, received = _call(r, "completions", "MPI_Testall")
    assert min(visits) >= 1 and received == [16] * ranks  # counted once, by the test that completed it


def test_regions_have_score_p_names_and_roles(measured):
    _, r = measured
    roles = {reg.name: (reg.paradigm, reg.role) for reg in r.regions if reg.name.startswith("MPI_")}
    assert roles["MPI_Finalize"] == ("mpi", "function")  # called by the program, deferred
    assert roles["MPI_Send"] == roles["MPI_Waitall"] == ("mpi", "point2point")
    assert roles["MPI_Allreduce"] == ("mpi", "all2all") and roles["MPI_Bcast"] == ("mpi", "one2all")
    assert roles["MPI_Barrier"] == ("mpi", "barrier")
    assert {reg.module for reg in r.regions if reg.paradigm == "mpi"} == {"MPI"}  # Score-P's source file
    # the wrappers' own Python code is not in the report
    package = os.path.dirname(cubescale.__file__)
    assert not [reg.name for reg in r.regions if reg.module.startswith(package)]
    assert np.all(r.values("visits", inclusive=False) >= 0)


def test_a_program_raising_on_every_rank_still_leaves_its_report(tmp_path):
    app = tmp_path / "failing.py"
    app.write_text("from mpi4py import MPI\n\ndef step():\n    return MPI.COMM_WORLD.allreduce(1)\n\n"
                   "for _ in range(3):\n    step()\nraise ValueError('every rank fails')\n")
    out = str(tmp_path / "failing.cubex")
    env = local_environment()
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    command = ["timeout", "-k", "5", "120", "mpirun", "-n", "2", *passed, sys.executable, "-m", "cubescale",
               "run", "-o", out, "--quiet", str(app)]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150)
    assert done.returncode != 0 and "ValueError: every rank fails" in done.stderr
    r = cubescale.open(out)
    assert _call(r, "step", "MPI_Allreduce")[0] == [3, 3]
