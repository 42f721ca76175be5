"""`cubescale run --trace` under mpirun -n 2 and 4: one OTF2 archive with every rank's
locations, exactly the program's messages (blocking, pickled and non-blocking with their
request ids) and collectives (root, bytes, the communicators they ran on), clock offsets
of every rank, otf2-print validates it, the trace-derived profile has the recorded profile's
call tree and visits, ranks that raise leave a whole archive, and a rank that aborts leaves
none."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys

import pytest
from call_path_totals import visits_and_time
from launch import HERE

import cubescale
import cubescale.trace
from cubescale.mpirun import local_environment


def _run(ranks: int, tmp, *args: str) -> tuple[subprocess.CompletedProcess, str, str]:
    env = local_environment()
    passed = [a for k in ("CUBESCALE_DEV_BUILD", "PYTHONPATH") if k in os.environ for a in ("-x", k)]
    out, trace = str(tmp / "run.cubex"), str(tmp / "run-trace")
    command = ["timeout", "-k", "5", "120", "mpirun", "-n", str(ranks), *passed, sys.executable, "-m", "cubescale",
               "run", "-o", out, "--quiet", "--trace", "--trace-dir", trace, str(HERE / "app_measure_trace.py"),
               *args]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150)
    return done, out, os.path.join(trace, "traces.otf2")


@pytest.fixture(scope="module", params=[2, 4])
def traced(request, tmp_path_factory):
    done, out, anchor = _run(request.param, tmp_path_factory.mktemp("trace"))
    assert done.returncode == 0, done.stderr[-3000:]
    return request.param, out, anchor


def _masters(t) -> list[int]:
    """Each rank's main thread's location index, in rank order."""
    locations = t.locations
    return [i for i, name in enumerate(locations["name"]) if name == "Master thread"]


def test_exactly_the_programs_messages(traced):
    ranks, _, anchor = traced
    t = cubescale.trace.open(anchor)
    masters = _masters(t)
    assert len(masters) == ranks
    e = t.events(types=["MPI_SEND", "MPI_RECV", "MPI_ISEND", "MPI_IRECV"])
    rank_of = {loc: r for r, loc in enumerate(masters)}
    pickled = len(pickle.dumps({"a": 1}, protocol=pickle.HIGHEST_PROTOCOL))
    sends = sorted((rank_of[loc], p, tag, b) for loc, kind, p, tag, b in
                   zip(e["Location"], e["Event Type"], e["Partner"], e["Tag"], e["Bytes"]) if kind in ("MPI_SEND", "MPI_ISEND"))
    receives = sorted((p, rank_of[loc], tag, b) for loc, kind, p, tag, b in
                      zip(e["Location"], e["Event Type"], e["Partner"], e["Tag"], e["Bytes"]) if kind in ("MPI_RECV", "MPI_IRECV"))
    expected = sorted([(r, (r + 1) % ranks, 3, 8000) for r in range(ranks)] +
                      [(r, (r + 1) % ranks, 5, 400) for r in range(ranks)] + [(0, ranks - 1, 9, pickled)])
    assert sends == expected
    assert receives == expected  # every send has its receive


def test_nonblocking_requests_complete(traced):
    ranks, _, anchor = traced
    t = cubescale.trace.open(anchor)
    e = t.events(types=["MPI_ISEND", "MPI_ISEND_COMPLETE", "MPI_IRECV_REQUEST", "MPI_IRECV"])
    for loc in _masters(t):
        mine = e[e["Location"] == loc]
        kinds = dict(zip(mine["Event Type"], mine["Request"]))
        assert len(mine) == 4
        assert kinds["MPI_ISEND"] == kinds["MPI_ISEND_COMPLETE"]
        assert kinds["MPI_IRECV_REQUEST"] == kinds["MPI_IRECV"]
        assert kinds["MPI_ISEND"] != kinds["MPI_IRECV"]


def test_collectives_with_roots_bytes_and_communicators(traced):
    ranks, _, anchor = traced
    t = cubescale.trace.open(anchor)
    e = t.events(types=["MPI_COLLECTIVE_END"])
    begins = t.events(types=["MPI_COLLECTIVE_BEGIN"])
    halves = {}
    for r, loc in enumerate(_masters(t)):
        mine = e[e["Location"] == loc]
        assert len(mine) == 5 and int((begins["Location"] == loc).sum()) == 5
        bcast, allreduce, barrier, half, last = (row for _, row in mine.iterrows())
        assert bcast["Partner"] == 1  # the root
        # Score-P's rules (docs/measure.md): the root sends to every rank, itself included
        assert (bcast["Bytes"], bcast["Bytes Received"]) == ((80 * ranks, 80) if r == 1 else (0, 80))
        assert (allreduce["Bytes"], allreduce["Bytes Received"]) == (32 * ranks, 32 * ranks)
        assert bcast["Communicator"] == allreduce["Communicator"] == barrier["Communicator"] == last["Communicator"]
        assert half["Communicator"] != bcast["Communicator"]
        halves.setdefault(r % 2, set()).add(half["Communicator"])
    assert all(len(c) == 1 for c in halves.values())  # one communicator per half
    assert len(set.union(*halves.values())) == len(halves)


def test_nonblocking_collective_is_a_request_completed_in_wait(traced):
    ranks, _, anchor = traced
    t = cubescale.trace.open(anchor)
    counts = t.event_counts()
    for loc in _masters(t):
        assert counts.loc[loc, "NON_BLOCKING_COLLECTIVE_REQUEST"] == 1
        assert counts.loc[loc, "NON_BLOCKING_COLLECTIVE_COMPLETE"] == 1
    if shutil.which("otf2-print") is None:
        pytest.skip("otf2-print (otf2-tools) is not installed")
    done = subprocess.run(["otf2-print", "-L", "0", anchor], capture_output=True, text=True, timeout=60)
    request = [line for line in done.stdout.splitlines() if line.startswith("NON_BLOCKING_COLLECTIVE_REQUEST")]
    complete = [line for line in done.stdout.splitlines() if line.startswith("NON_BLOCKING_COLLECTIVE_COMPLETE")]
    assert len(request) == len(complete) == 1
    assert "Operation: ALLREDUCE" in complete[0]
    assert f"Sent: {16 * ranks}," in complete[0] and f"Received: {16 * ranks}" in complete[0]
    assert request[0].split("Request: ")[1] == complete[0].split("Request: ")[1]


def test_every_rank_has_clock_offsets_and_otf2_print_validates(traced):
    ranks, _, anchor = traced
    if shutil.which("otf2-print") is None:
        pytest.skip("otf2-print (otf2-tools) is not installed")
    done = subprocess.run(["otf2-print", "--silent", "-Werror", anchor], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    done = subprocess.run(["otf2-print", "-C", "-L", "65536", anchor], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.count("CLOCK_OFFSET") == 2  # rank 1's main thread: at start and at end


def test_trace_profile_has_the_recorded_tree_visits_and_times(traced):
    ranks, out, anchor = traced
    recorded, derived = visits_and_time(cubescale.open(out)), visits_and_time(cubescale.trace.profile(anchor))
    assert {k: v for k, (v, _) in recorded.items()} == {k: v for k, (v, _) in derived.items()}
    for path, (_, time) in recorded.items():  # clock offsets interpolate: a few ticks at most
        assert derived[path][1] == pytest.approx(time, rel=0.01, abs=1e-6), path


def test_ranks_that_raise_leave_a_whole_archive(tmp_path):
    done, _, anchor = _run(2, tmp_path, "raise")
    assert done.returncode != 0
    assert "rank 0 failed" in done.stderr or "rank 1 failed" in done.stderr
    t = cubescale.trace.open(anchor)
    assert len(_masters(t)) == 2
    enters, leaves = t.events(types=["ENTER"]), t.events(types=["LEAVE"])
    assert len(enters) == len(leaves)


def test_a_rank_that_aborts_leaves_no_archive(tmp_path):
    done, _, anchor = _run(2, tmp_path, "abort")
    assert done.returncode != 0
    assert not os.path.exists(os.path.dirname(anchor))  # none, never a corrupt one
    # ... only the unfinished folder, with both ranks' writer records: once the job is gone,
    # `cubescale clean` recognizes it as stale and removes it.
    partial = os.path.dirname(anchor) + ".partial"
    assert sorted(f for f in os.listdir(partial) if f.startswith("writer.")) == ["writer.0", "writer.1"]
    from cubescale.files import stale_partial_traces

    assert [t.target for t in stale_partial_traces(tmp_path)] == ["run-trace"]
    clean = subprocess.run([sys.executable, "-m", "cubescale", "clean", str(tmp_path)], capture_output=True,
                           text=True, timeout=60)
    assert clean.returncode == 0 and "unfinished trace run-trace" in clean.stdout, clean.stdout + clean.stderr
    assert not os.path.exists(partial)
