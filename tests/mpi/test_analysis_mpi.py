"""Wait-state analysis as a parallel replay under mpirun -n 1, 2, 3, 4: synthetic traces give
their stated pattern times on every number of ranks, every trace (synthetic: Late Sender chain,
every collective class, Late Receiver, clock violations, non-blocking collectives, OpenMP
imbalance; the shared MPI traces) gives the same .cubex bytes for every number of ranks and the
same bytes as one process without MPI (every metric: patterns, Late Receiver, clock violations,
OpenMP, critical path, counts), and inconsistent or truncated traces raise FormatError on every
rank without a file (the command line under mpirun: one line, no traceback, no file)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import subprocess
import sys

import pytest
from launch import mpirun

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from analysis_cases import (  # noqa: E402
    BROKEN,
    CHAIN_EXPECTED,
    INTERCOMM,
    INTERCOMM_EXPECTED,
    ISCAN_ORDER_EXPECTED,
    NO_VIOLATION,
    OMP,
    SCAN_ORDER_EXPECTED,
    SCAN_ORDER_PATH,
    SHAPES,
    SHARED_MPI,
    SYNCPOINT_EXPECTED,
    THREAD_LATENCY,
    TIME_CORRECT,
    TIME_CORRECT_LATENCY,
    shared_anchors,
)
from no_pandas import NO_PANDAS  # noqa: E402

import cubescale  # noqa: E402
from cubescale import analysis  # noqa: E402
from cubescale.mpirun import local_environment  # noqa: E402

SIZES = [1, 2, 3, 4]
NS = 1e-9


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    return str(tmp_path_factory.mktemp("traces")), str(tmp_path_factory.mktemp("reports"))


@functools.cache
def results(size: int, traces: str, reports: str) -> dict:
    return {r["trace"]: r for r in mpirun(size, "worker_analysis.py", traces, reports, timeout=300)}


@pytest.mark.parametrize("size", SIZES)
def test_chain_pattern_times_are_exact(size, dirs):
    values = results(size, *dirs)["chain"]["values"]
    for pattern, expected in CHAIN_EXPECTED.items():
        assert values[pattern] == pytest.approx({k: ns * NS for k, ns in expected.items()}, rel=1e-15), pattern


@pytest.mark.parametrize("size", SIZES)
def test_synchronization_points_are_scouts_on_every_number_of_ranks(size, dirs):
    # the homes of the instances decide them as one process does (analysis_cases.SYNCPOINT)
    values = results(size, *dirs)["syncpoint"]["values"]
    for pattern, expected in SYNCPOINT_EXPECTED.items():
        assert values.get(pattern, {}) == pytest.approx({k: ns * NS for k, ns in expected.items()}, rel=1e-15), pattern


@pytest.mark.parametrize("size", SIZES)
def test_scan_members_are_in_communicator_rank_order_on_every_number_of_ranks(size, dirs):
    # analysis_cases.SCAN_ORDER: the homes hand collective_sync the members of the scan on the
    # reversed communicator in its rank order (patterns, clock check, critical path)
    _, reports = dirs
    result = results(size, *dirs)["scan-order"]
    assert result["values"]["mpi_earlyscan"] == pytest.approx(
        {k: ns * NS for k, ns in SCAN_ORDER_EXPECTED["mpi_earlyscan"].items()}, rel=1e-15)
    report = cubescale.open(os.path.join(reports, f"scan-order.n{size}.cubex"))
    assert not report.values("clock_violations", inclusive=False).any()
    path = report.values("critical_path", inclusive=False)
    got = {f"{int(loc)}:{report.cnodes[c].region.name}": float(path[c, loc]) for c, loc in zip(*path.nonzero())}
    assert got == pytest.approx({k: ns * NS for k, ns in SCAN_ORDER_PATH.items()}, rel=1e-12)
    # the non-blocking scan (ISCAN_ORDER): the homes' verdicts take the same order
    assert results(size, *dirs)["iscan-order"]["values"]["mpi_earlyscan"] == pytest.approx(
        {k: ns * NS for k, ns in ISCAN_ORDER_EXPECTED["mpi_earlyscan"].items()}, rel=1e-15)


NAMES = [*SHAPES, *OMP, *INTERCOMM, *SHARED_MPI]


@pytest.mark.parametrize("size", SIZES)
def test_inter_communicator_messages_find_their_peers_on_every_number_of_ranks(size, dirs):
    values = results(size, *dirs)["intercomm"]["values"]
    for pattern, expected in INTERCOMM_EXPECTED.items():
        assert values[pattern] == pytest.approx({k: ns * NS for k, ns in expected.items()}, rel=1e-12), pattern
    assert "mpi_barrier_wait" not in values  # the barrier on the inter-communicator has no pattern


@pytest.mark.parametrize("name", NAMES)
def test_same_bytes_for_every_number_of_ranks(name, dirs):
    digests = {size: results(size, *dirs)[name]["sha256"] for size in SIZES}
    assert len(set(digests.values())) == 1, digests


def _digest(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.mark.parametrize("name", NAMES)
def test_same_bytes_as_one_process_without_mpi(name, dirs, tmp_path):
    """Every metric of the one-process analysis (record patterns, Late Receiver, non-blocking
    collectives, clock violations, OpenMP patterns, critical path, counts), byte for byte."""
    traces, _ = dirs
    results(1, *dirs)  # writes the synthetic traces
    anchor = dict(shared_anchors()).get(name) or os.path.join(traces, "n1", f"{name}.otf2")
    cubescale.analyze(anchor, tmp_path / "serial.cubex")
    serial = _digest(tmp_path / "serial.cubex")
    assert {size: results(size, *dirs)[name]["sha256"] for size in SIZES} == dict.fromkeys(SIZES, serial)


@pytest.mark.parametrize("name", TIME_CORRECT)
def test_time_correct_gives_the_bytes_of_one_process(name, dirs, tmp_path):
    """--time-correct in rounds over the ranks moves the events as the one-process correction."""
    traces, _ = dirs
    results(1, *dirs)
    anchor = dict(shared_anchors()).get(name) or os.path.join(traces, "n1", f"{name}.otf2")
    cubescale.analyze(anchor, tmp_path / "serial.cubex", time_correct=True)
    serial = _digest(tmp_path / "serial.cubex")
    assert {size: results(size, *dirs)[f"{name}+time-correct"]["sha256"] for size in SIZES} == dict.fromkeys(SIZES, serial)
    if name in ("clocks", "nonblocking-clocks"):  # the correction moved events, the same ones on every number of ranks
        assert {results(size, *dirs)[f"{name}+time-correct"]["correction"]["jumps"] for size in SIZES} == {2}


@pytest.mark.parametrize("name", NAMES)
def test_threads_on_each_rank_give_the_same_bytes(name, dirs):
    """Each rank reading its share on 3 threads (its processes cut into parts read at once, the
    parts' records, call paths and observers joined after): the report of one thread, at 1 and 2
    ranks, with and without the time correction."""
    traces, _ = dirs
    results(1, *dirs)  # writes the synthetic traces
    anchor = dict(shared_anchors()).get(name) or os.path.join(traces, "n1", f"{name}.otf2")
    processes = cubescale.trace.open(anchor).locations["group"].nunique()
    for size in (1, 2):
        got = results(size, *dirs)
        if size == 1:  # a thread per part, whole processes each (about equal in events): read at once
            parts = got[f"{name}+threads"]["threads"]
            assert 1 < parts <= min(3, processes) if processes > 1 else parts == 1
        assert got[f"{name}+threads"]["sha256"] == got[name]["sha256"], size
        if name in TIME_CORRECT:
            assert got[f"{name}+threads+time-correct"]["sha256"] == got[f"{name}+time-correct"]["sha256"], size


@pytest.mark.parametrize("time_correct", [False, True])
def test_replay_on_a_serial_communicator_gives_the_bytes_of_one_process(time_correct, dirs, tmp_path):
    """The replay's API without MPI (``analyze_trace(SerialComm(), ...)``, every exchange on one
    rank): the one-process report, byte for byte, with and without the correction's rounds."""
    from cubescale.parallel.analysis import analyze_trace
    from cubescale.parallel.serial import SerialComm
    traces, _ = dirs
    results(1, *dirs)
    for name in TIME_CORRECT if time_correct else NAMES:
        anchor = dict(shared_anchors()).get(name) or os.path.join(traces, "n1", f"{name}.otf2")
        cubescale.analyze(anchor, tmp_path / "one.cubex", time_correct=time_correct)
        analyze_trace(SerialComm(), anchor, tmp_path / "serial.cubex", time_correct=time_correct)
        assert _digest(tmp_path / "serial.cubex") == _digest(tmp_path / "one.cubex"), name


def test_replay_threads_default_and_checks(tmp_path):
    """A rank alone reads on the cores it may run on (rank_threads); a thread count that is no
    whole number of at least 1 is refused before any reading, by the replay and by analyze."""
    from cubescale.parallel.analysis import analyze_trace, rank_threads
    from cubescale.parallel.serial import SerialComm
    assert rank_threads(SerialComm()) == analysis.available_cores()
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="threads"):
            analyze_trace(SerialComm(), cubescale.examples.trace_path(), tmp_path / "x.cubex", threads=bad)
    assert not os.listdir(tmp_path)
    example = cubescale.examples.trace_path()  # 4 processes
    assert analyze_trace(SerialComm(), example, tmp_path / "one.cubex", threads=1)["threads"] == 1
    assert analyze_trace(SerialComm(), example, tmp_path / "two.cubex", threads=2)["threads"] == 2
    assert analyze_trace(SerialComm(), example, tmp_path / "many.cubex", threads=9)["threads"] == 4  # one per process
    assert _digest(tmp_path / "two.cubex") == _digest(tmp_path / "one.cubex") == _digest(tmp_path / "many.cubex")


@pytest.mark.parametrize("name", TIME_CORRECT_LATENCY)
def test_time_correct_with_a_latency_gives_the_bytes_of_one_process(name, dirs, tmp_path):
    """With a minimum latency the correction moves events of every kind on jacobi-hybrid
    (collectives and OpenMP teams) and of the synthetic non-blocking and OpenMP cases."""
    traces, _ = dirs
    results(1, *dirs)
    anchor = dict(shared_anchors()).get(name) or os.path.join(traces, "n1", f"{name}.otf2")
    latency = TIME_CORRECT_LATENCY[name]
    report = cubescale.analyze(anchor, tmp_path / "serial.cubex", time_correct=True, min_latency=latency)
    serial = _digest(tmp_path / "serial.cubex")
    assert {size: results(size, *dirs)[f"{name}+latency"]["sha256"] for size in SIZES} == dict.fromkeys(SIZES, serial)
    jumps = {results(size, *dirs)[f"{name}+latency"]["correction"]["jumps"] for size in SIZES}
    assert jumps == {analysis.statistics(report).corrected_jumps} and (jumps != {0}) == (name not in NO_VIOLATION)


@pytest.mark.parametrize("name", THREAD_LATENCY)
def test_a_thread_latency_of_its_own_gives_the_bytes_of_one_process(name, dirs, tmp_path):
    """min_thread_latency: the OpenMP checks and their correction with a latency other than the
    messages' (clc's shared-memory latency), the same over the ranks as in one process."""
    traces, _ = dirs
    results(1, *dirs)
    anchor = dict(shared_anchors()).get(name) or os.path.join(traces, "n1", f"{name}.otf2")
    latency, thread = THREAD_LATENCY[name]
    cubescale.analyze(anchor, tmp_path / "serial.cubex", time_correct=True, min_latency=latency,
                      min_thread_latency=thread)
    serial = _digest(tmp_path / "serial.cubex")
    assert {size: results(size, *dirs)[f"{name}+thread"]["sha256"] for size in SIZES} == dict.fromkeys(SIZES, serial)
    cubescale.analyze(anchor, tmp_path / "same.cubex", time_correct=True, min_latency=latency)
    assert _digest(tmp_path / "same.cubex") != serial  # the threads' latency changed the correction


@pytest.mark.parametrize("name", TIME_CORRECT_LATENCY)
def test_clock_checks_with_a_latency_give_the_bytes_of_one_process(name, dirs, tmp_path):
    """The violations counted with a minimum latency and no correction (nonblocking-self: the
    MPI_COMM_SELF operations completed within the latency count nothing, as in one process)."""
    traces, _ = dirs
    results(1, *dirs)
    anchor = dict(shared_anchors()).get(name) or os.path.join(traces, "n1", f"{name}.otf2")
    report = cubescale.analyze(anchor, tmp_path / "serial.cubex", min_latency=TIME_CORRECT_LATENCY[name])
    serial = _digest(tmp_path / "serial.cubex")
    assert {size: results(size, *dirs)[f"{name}+checks"]["sha256"] for size in SIZES} == dict.fromkeys(SIZES, serial)
    assert (sum(analysis.clock_violations(report).values()) > 0) == (name not in NO_VIOLATION)


@pytest.mark.parametrize("correct", [False, True])
@pytest.mark.parametrize("name", TIME_CORRECT)
def test_instance_statistics_are_those_of_one_process(name, correct, dirs):
    """trace.stat under mpirun: the ranks' instance statistics merged (counts, sums, extremes, the
    most severe instance per call path) and the violations as recorded equal one process's."""
    traces, _ = dirs
    results(1, *dirs)
    anchor = dict(shared_anchors()).get(name) or os.path.join(traces, "n1", f"{name}.otf2")
    serial = json.loads(json.dumps(dataclasses.asdict(analysis.statistics(cubescale.analyze(anchor, time_correct=correct)))))
    for p in serial["patterns"].values():  # sums of squares add up in another order over ranks
        p["variance"] = pytest.approx(p["variance"], rel=1e-9, abs=1e-30)
    assert serial["patterns"]  # MPI patterns, and the OpenMP barrier waits and lock contention (as scout's)
    if name == "omp-clocks":  # the OpenMP violations as recorded, summed over the ranks
        assert serial["omp_violations"] == 3
    for size in SIZES:
        assert results(size, *dirs)[f"{name}+statistics{int(correct)}"]["statistics"] == serial, size


def test_critical_path_moves_between_ranks(dirs):
    """The backward walk hands the path over between ranks (ping-pong: at every message)."""
    assert results(1, *dirs)["ping-pong"]["hand_offs"] == 1
    assert results(2, *dirs)["ping-pong"]["hand_offs"] > 2
    assert results(2, *dirs)["late-receiver"]["values"]["mpi_latereceiver"]
    assert results(4, *dirs)["nonblocking"]["values"]["mpi_wait_nxn"]


def test_ring_has_every_collective_class(dirs):
    values = results(2, *dirs)["ring"]["values"]
    for pattern in ("mpi_latesender", "mpi_lswo_same", "mpi_earlyscan", "mpi_latebroadcast", "mpi_wait_nxn",
                    "mpi_init_completion", "mpi_finalize_wait"):
        assert values[pattern], pattern


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", [*BROKEN, "truncated", "cycle", *(f"{b}+time-correct" for b in BROKEN)])
def test_inconsistent_trace_fails_on_every_rank(name, size, dirs):
    """The same error on every rank, no file; with --time-correct the same as without (the
    correction waits for no send that does not exist, as in one process)."""
    r = results(size, *dirs)[name]
    plain = name.removesuffix("+time-correct")
    member, message = {"truncated": ("1.evt", ""), "cycle": ("0.evt", "cannot be corrected")}.get(name) or BROKEN[plain][1:]
    assert len(r["raised"]) == size and len(set(r["raised"])) == 1, r
    text = r["raised"][0]
    assert member in text and message in text, text
    if plain in BROKEN and plain != "nonblocking-missing":
        assert re.search(r"at \d+\.\d+ s", text), text
    assert r["left"] == []


def test_cli_under_mpirun_fails_with_one_line_and_no_file(dirs, tmp_path):
    traces, _ = dirs
    results(2, *dirs)  # writes the broken traces
    env = local_environment()
    command = ["timeout", "-k", "5", "120", "mpirun", "-q", "-n", "3", sys.executable, "-m", "cubescale", "analyze",
               os.path.join(traces, "n2", "receive-without-send.otf2"), "-o", str(tmp_path / "scout.cubex")]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150)
    assert done.returncode not in (0, 124, 137), done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cubescale: error: ") and "without a matching send" in lines[0], lines
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_cli_under_mpirun_writes_the_one_process_report_and_summary(dirs, tmp_path):
    traces, _ = dirs
    results(2, *dirs)
    anchor = os.path.join(traces, "n2", "clocks.otf2")
    command = ["timeout", "-k", "5", "120", "mpirun", "-q", "-n", "2", sys.executable, "-m", "cubescale", "analyze",
               anchor, "-o", str(tmp_path / "mpirun.cubex"), "--time-correct"]
    done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=150)
    assert done.returncode == 0, done.stderr
    assert "clock condition violations: 0; as recorded 1 point to point, 1 collective" in done.stdout, done.stdout
    assert "most severe instances (as scout's trace.stat):" in done.stdout
    cubescale.analyze(anchor, tmp_path / "serial.cubex", time_correct=True)
    assert _digest(tmp_path / "mpirun.cubex") == _digest(tmp_path / "serial.cubex")


def test_cli_threads_under_mpirun_read_each_share_on_threads(dirs, tmp_path):
    """``--threads`` under mpirun: every rank reads its share on that many threads; the report
    of one process, and no word that the option is for one process only (it was, before)."""
    traces, _ = dirs
    results(2, *dirs)
    anchor = os.path.join(traces, "n2", "ring.otf2")
    command = ["timeout", "-k", "5", "120", "mpirun", "-q", "-n", "2", sys.executable, "-m", "cubescale", "analyze",
               anchor, "-o", str(tmp_path / "mpirun.cubex"), "--threads", "2"]
    done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=150)
    assert done.returncode == 0, done.stderr
    assert "--threads" not in done.stderr, done.stderr
    cubescale.analyze(anchor, tmp_path / "serial.cubex")
    assert _digest(tmp_path / "mpirun.cubex") == _digest(tmp_path / "serial.cubex")


def test_cli_under_mpirun_needs_no_pandas(dirs, tmp_path):
    """The replay over ranks reads the trace's definitions without DataFrames: pandas blocked
    on every rank, the same report as one process."""
    traces, _ = dirs
    results(2, *dirs)
    anchor = os.path.join(traces, "n2", "clocks.otf2")
    command = ["timeout", "-k", "5", "120", "mpirun", "-q", "-n", "2", sys.executable, "-c", NO_PANDAS, "analyze",
               anchor, "-o", str(tmp_path / "mpirun.cubex")]
    done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=150)
    assert done.returncode == 0 and "pandas" not in done.stderr, done.stderr
    cubescale.analyze(anchor, tmp_path / "serial.cubex")
    assert _digest(tmp_path / "mpirun.cubex") == _digest(tmp_path / "serial.cubex")


def test_cli_root_cause_under_mpirun_is_a_one_line_error(tmp_path):
    """The root-cause analysis runs in one process: under mpirun one line on stderr, exit 2, no file."""
    from cubescale import testing

    testing.write_mpi_trace(tmp_path, "pair", [[("MPI_Send", 50, 60, [1], 0)], [("MPI_Recv", 10, 70, [0], 0)]], end=100)
    command = ["timeout", "-k", "5", "120", "mpirun", "-q", "-n", "2", sys.executable, "-m", "cubescale", "analyze",
               str(tmp_path / "pair.otf2"), "-o", str(tmp_path / "rc.cubex"), "--root-cause"]
    done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=150)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cubescale: error: ") and "one process" in lines[0], lines
    assert not (tmp_path / "rc.cubex").exists()


@pytest.mark.parametrize("size", [2, 3])
def test_a_step_failing_on_one_rank_raises_on_every_rank(size, tmp_path):
    """A step that fails on one rank only (the correction's rounds, the homes' members, packing
    the collectives and the non-blocking ones, the impact metrics, the instance statistics, the
    machine on rank 0; tests/mpi/worker_step_failure.py): every rank raises that rank's error
    within the timeout, none waits for it, no report."""
    results = mpirun(size, "worker_step_failure.py", str(tmp_path), timeout=120)
    assert [r["step"] for r in results] == ["take_members", "correct_round", "take_values", "pack_collectives",
                                            "nonblocking_counts", "pack_nonblocking", "present_complete",
                                            "local_time", "impact_costs", "statistics", "KnownMachine"]
    for r in results:
        assert not r["written"], r["step"]
        expected = ["CollectiveError", f"rank {r['rank']}: MemoryError: injected: no memory for {r['step']}"]
        assert r["raised"] == [expected] * size, r["step"]
