"""Late Receiver, clock-condition checks, ``--time-correct`` and the trace.stat statistics of
``cubescale.analyze``: exact times on synthetic traces with stated timings (written with
libotf2's writer by ``cubescale.testing.write_mpi_trace``), the shared traces."""

from __future__ import annotations

import re
from collections import defaultdict, deque
from itertools import count

import numpy as np
import pytest
from analysis_cases import (
    CLOCKS,
    FAR,
    FAR_LATE_RECEIVER,
    ISCAN_ORDER,
    ISCAN_ORDER_EXPECTED,
    LATE_RECEIVER,
    LATE_RECEIVER_COUNTS,
    MOVED_COMPLETION,
    MOVED_POSTING,
    NONBLOCKING,
    NONBLOCKING_CLOCKS,
    NONBLOCKING_CLOCKS_EXPECTED,
    NONBLOCKING_SELF,
    NONBLOCKING_SOLO,
    TIED_INSTANCES,
)
from otf2_oracle import SHARED_OTF2

import cubescale
from cubescale import analysis, testing
from cubescale.cli import main
from cubescale.trace import open as open_trace

NS = 1e-9


def write(tmp_path, ranks, name="mpi", end=3000):
    testing.write_mpi_trace(tmp_path, name, ranks, end)
    return str(tmp_path / f"{name}.otf2")


def by_call(report, metric):
    """{(column, region of the call path): exclusive value} of the non-zero entries."""
    values = report.values(metric, inclusive=False)
    return {(int(loc), report.cnodes[c].region.name): float(values[c, loc]) for c, loc in zip(*np.nonzero(values))}


def test_late_receiver_times_are_exact(tmp_path):
    report = cubescale.analyze(write(tmp_path, LATE_RECEIVER))
    assert by_call(report, "mpi_latereceiver") == pytest.approx(
        {(0, "MPI_Ssend"): 300 * NS, (0, "MPI_Wait"): 200 * NS, (0, "MPI_Waitall"): 300 * NS}, rel=1e-15)
    # no receive here waits for its send
    assert by_call(report, "mpi_latesender") == {}
    m = report.metric("mpi_latereceiver")
    assert (m.display_name, report.metrics[m.parent].name, m.unit, m.kind) == (
        "Late Receiver", "mpi_point2point", "sec", "EXCLUSIVE")
    # Scalasca's order below mpi_point2point: Late Sender (and its children), then Late Receiver
    p2p = report.metrics[m.parent]
    assert [report.metrics[c].name for c in p2p.children] == ["mpi_latesender", "mpi_latereceiver"]
    # mpi_point2point stores its children too
    parent = report.values("mpi_point2point", inclusive=False)
    assert (parent - report.values("mpi_latereceiver", inclusive=False) >= -1e-15).all()


@pytest.mark.parametrize("time_correct", [False, True])
def test_late_receiver_far_from_its_records_is_the_same(tmp_path, time_correct):
    # analysis_cases.FAR_LATE_RECEIVER: MPI_Isend completions and an MPI_Irecv posting more than
    # 2^32 ticks from their records' enters, where the extras are kept as 32-bit distances
    # (late_receiver.hpp's NearTimes): kept whole beside, they give LATE_RECEIVER's times and
    # counts (the replay at 1-4 ranks gives this report's bytes: tests/mpi/test_analysis_mpi.py).
    near = cubescale.analyze(write(tmp_path, LATE_RECEIVER, "near"), time_correct=time_correct)
    far = cubescale.analyze(write(tmp_path, FAR_LATE_RECEIVER, "far", end=3 * FAR + 3000), time_correct=time_correct)
    assert by_call(far, "mpi_latereceiver") == pytest.approx(
        {(0, "MPI_Ssend"): 300 * NS, (0, "MPI_Wait"): 200 * NS, (0, "MPI_Waitall"): 300 * NS}, rel=1e-15)
    for metric in ["mpi_latereceiver", *LATE_RECEIVER_COUNTS, "mpi_latesender", "syncs_send"]:
        assert by_call(far, metric) == by_call(near, metric), metric


def test_late_receiver_extras_move_with_the_time_correction(tmp_path):
    # analysis_cases.MOVED_COMPLETION / MOVED_POSTING: the correction moves the MPI_Wait that
    # completes a non-blocking message, and with it what Late Receiver reads beside the record
    # (kept as a distance from the record's enter): the completion's enter moves, the posting
    # (before the violation) stays.
    path = write(tmp_path, MOVED_COMPLETION, "completion", end=1200)
    measured = cubescale.analyze(path)
    assert by_call(measured, "mpi_latereceiver") == pytest.approx({(0, "MPI_Wait"): 200 * NS})
    corrected = cubescale.analyze(path, time_correct=True)
    assert analysis.statistics(corrected).time_corrected
    assert by_call(corrected, "mpi_latereceiver") == {}
    path = write(tmp_path, MOVED_POSTING, "posting", end=1000)
    for time_correct in (False, True):
        report = cubescale.analyze(path, time_correct=time_correct)
        assert analysis.statistics(report).p2p_violations == 1
        assert by_call(report, "mpi_latereceiver") == {}


def test_most_severe_instances_in_the_reports_order_among_equals(tmp_path):
    # analysis_cases.TIED_INSTANCES: 500 ns of Late Sender on MPI_Wait (rank 1) and on MPI_Recv
    # (rank 2), both first entered at 100 ns: among equal times the report's call-path order
    # (MPI_Recv's row first), as the replay over ranks merges them (tests/mpi/test_analysis_mpi.py)
    report = cubescale.analyze(write(tmp_path, TIED_INSTANCES, end=1000))
    rows = [report.cnodes[c].region.name for c in range(report.shape[0])]
    assert rows.index("MPI_Recv") < rows.index("MPI_Wait")
    top = analysis.statistics(report).patterns["mpi_latesender"].top
    assert [(round(i.time / NS), i.call_path) for i in top] == [(500, "main/MPI_Recv"), (500, "main/MPI_Wait")]


def test_waitall_that_waited_as_late_sender_is_no_late_receiver(tmp_path):
    # rank 0's Waitall completes an MPI_Isend whose receive is posted 300 ns after it was
    # entered, but also waits 100 ns for a late sender: scout counts it as Late Sender only.
    ranks = [[("MPI_Isend", 100, 110, [1], 0), ("MPI_Waitall", 200, 900, [1], 0)],
             [("MPI_Send", 300, 310, [0], 0), ("MPI_Recv", 500, 600, [0], 0)]]
    report = cubescale.analyze(write(tmp_path, ranks, end=1000))
    assert by_call(report, "mpi_latesender") == pytest.approx({(0, "MPI_Waitall"): 100 * NS})
    assert by_call(report, "mpi_latereceiver") == {}


def test_clock_violations_are_counted_per_process(tmp_path):
    report = cubescale.analyze(write(tmp_path, CLOCKS, end=500))
    assert by_call(report, "clock_violations") == {(1, "MPI_Recv"): 1, (0, "MPI_Barrier"): 1}
    assert analysis.clock_violations(report) == {"MPI Rank 0": 1, "MPI Rank 1": 1}
    s = analysis.statistics(report)
    assert (s.p2p_violations, s.collective_violations, s.time_corrected) == (1, 1, False)
    m = report.metric("clock_violations")
    assert (m.parent, m.unit, m.dtype) == (None, "occ", "UINT64")
    # measured times: the receive waits 40 ns for a send that starts "after" it completed
    assert by_call(report, "mpi_latesender") == pytest.approx({(1, "MPI_Recv"): 40 * NS})
    assert by_call(report, "mpi_barrier_wait") == pytest.approx({(0, "MPI_Barrier"): 100 * NS})


def test_time_correct_removes_violations_and_late_sender_is_the_hand_computation(tmp_path):
    path = write(tmp_path, CLOCKS, end=500)
    measured = cubescale.analyze(path)
    report = cubescale.analyze(path, time_correct=True)
    assert analysis.clock_violations(report) == {"MPI Rank 0": 0, "MPI Rank 1": 0}
    s = analysis.statistics(report)
    assert (s.p2p_violations, s.collective_violations, s.time_corrected, s.corrected_jumps) == (1, 1, True, 2)
    # Forward: rank 1's receive moves from 90 to its send at 100 (+10 ns, and so does all of
    # rank 1 after it: barrier 430..440); rank 0 then leaves the barrier at rank 1's corrected
    # enter, 430 (+30). The receive's call keeps its enter (50): nothing earlier on rank 1.
    # Late Sender: min(send enter 100, recv leave 100) - 50 = 50 ns.
    assert by_call(report, "mpi_latesender") == pytest.approx({(1, "MPI_Recv"): 50 * NS}, rel=1e-15)
    # Wait at Barrier: rank 0 min(latest enter 430, leave 430) - 300; completion: rank 1 440 - 430
    assert by_call(report, "mpi_barrier_wait") == pytest.approx({(0, "MPI_Barrier"): 130 * NS}, rel=1e-15)
    assert by_call(report, "mpi_barrier_completion") == pytest.approx({(1, "MPI_Barrier"): 10 * NS}, rel=1e-15)
    # the call-path profile keeps the measured times
    assert np.array_equal(report.values("time"), measured.values("time"))


def _ns(report, pattern):
    values = report.values(pattern, inclusive=False)
    return {f"{int(loc)}:{report.cnodes[c].region.name}": float(values[c, loc]) / NS for c, loc in zip(*np.nonzero(values))}


def test_nonblocking_collectives_clock_violations_are_counted_and_corrected(tmp_path):
    # analysis_cases.NONBLOCKING_CLOCKS: two completions left before the start they wait for
    path = write(tmp_path, NONBLOCKING_CLOCKS, end=1000)
    measured = cubescale.analyze(path)
    assert by_call(measured, "clock_violations") == {(0, "MPI_Wait"): 2}
    s = analysis.statistics(measured)
    assert (s.p2p_violations, s.collective_violations) == (0, 2)
    corrected = cubescale.analyze(path, time_correct=True)
    assert by_call(corrected, "clock_violations") == {}
    s = analysis.statistics(corrected)
    assert (s.p2p_violations, s.collective_violations, s.corrected_jumps) == (0, 2, 2)
    for pattern, (before, after) in NONBLOCKING_CLOCKS_EXPECTED.items():
        assert _ns(measured, pattern) == pytest.approx(before, rel=1e-12), pattern
        assert _ns(corrected, pattern) == pytest.approx(after, rel=1e-12), pattern
    # with a latency the leaves jump 10 ns further: the N x N wait grows by the ramp's share
    latency = cubescale.analyze(path, time_correct=True, min_latency=10 * NS)
    assert sum(analysis.clock_violations(latency).values()) == 0
    assert _ns(latency, "mpi_wait_nxn") == pytest.approx({"0:MPI_Wait": 300 - (150 + 110 * 50 / 100)}, rel=1e-12)


def test_nonblocking_completion_by_test_is_checked_too(tmp_path):
    # NONBLOCKING: rank 0's MPI_Test completes (at 2030) an MPI_Iallreduce rank 1 starts at 2100:
    # it waits for nothing (a test does not block) but cannot have completed before that start
    path = write(tmp_path, NONBLOCKING)
    report = cubescale.analyze(path)
    assert by_call(report, "clock_violations") == {(0, "MPI_Test"): 1}
    corrected = cubescale.analyze(path, time_correct=True)
    assert by_call(corrected, "clock_violations") == {}
    # the other instances are unchanged by the correction (it moves only rank 0's last events)
    for pattern in ("mpi_wait_nxn", "mpi_barrier_wait", "mpi_latebroadcast", "mpi_earlyreduce"):
        assert _ns(corrected, pattern) == pytest.approx(_ns(report, pattern), rel=1e-12), pattern


def test_backward_amortization_spreads_a_jump_since_the_last_send(tmp_path):
    # rank 1 sends at 10 ns, then receives at 90 ns what rank 0 sends at 100 ns: the +10 ns jump
    # is spread over 10..90, so the receive's enter (50) moves by 10 * (50 - 10) / (90 - 10) = 5.
    ranks = [[("MPI_Recv", 0, 30, [1], 0), ("MPI_Send", 100, 110, [1], 0)],
             [("MPI_Send", 10, 20, [0], 0), ("MPI_Recv", 50, 90, [0], 0)]]
    report = cubescale.analyze(write(tmp_path, ranks, end=200), time_correct=True)
    assert by_call(report, "mpi_latesender") == pytest.approx(
        {(0, "MPI_Recv"): 10 * NS, (1, "MPI_Recv"): (100 - 55) * NS}, rel=1e-15)
    assert sum(analysis.clock_violations(report).values()) == 0


def test_min_latency_makes_close_receives_violations(tmp_path):
    ranks = [[("MPI_Send", 100, 110, [1], 0)], [("MPI_Recv", 50, 105, [0], 0)]]
    path = write(tmp_path, ranks, end=200)
    assert sum(analysis.clock_violations(cubescale.analyze(path)).values()) == 0
    assert analysis.clock_violations(cubescale.analyze(path, min_latency=10 * NS)) == {"MPI Rank 0": 0, "MPI Rank 1": 1}
    corrected = cubescale.analyze(path, time_correct=True, min_latency=10 * NS)
    assert sum(analysis.clock_violations(corrected).values()) == 0
    # the receive completes at send + latency = 110: Late Sender min(100, 110) - 50
    assert by_call(corrected, "mpi_latesender") == pytest.approx({(1, "MPI_Recv"): 50 * NS}, rel=1e-15)


def test_cycle_fails_cleanly(tmp_path):
    # each rank receives first what the other sends after its receive: no order of events works
    ranks = [[("MPI_Recv", 0, 50, [1], 0), ("MPI_Send", 60, 70, [1], 0)],
             [("MPI_Recv", 0, 50, [0], 0), ("MPI_Send", 60, 70, [0], 0)]]
    path = write(tmp_path, ranks, end=100)
    assert sum(analysis.clock_violations(cubescale.analyze(path)).values()) == 2
    with pytest.raises(cubescale.FormatError, match="cannot be corrected"):
        cubescale.analyze(path, time_correct=True)
    assert main(["analyze", path, "-o", str(tmp_path / "a.cubex"), "--time-correct"]) == 2
    assert not (tmp_path / "a.cubex").exists()


def test_trace_stat_lists_the_most_severe_instances(tmp_path):
    report = cubescale.analyze(write(tmp_path, LATE_RECEIVER))
    s = analysis.statistics(report).patterns["mpi_latereceiver"]
    assert (s.count, s.sum, s.min, s.max) == pytest.approx((3, 800 * NS, 200 * NS, 300 * NS), rel=1e-12)
    assert s.mean == pytest.approx(800 / 3 * NS)
    assert s.variance == pytest.approx(((300 - 800 / 3) ** 2 * 2 + (200 - 800 / 3) ** 2) / 3 * NS * NS, rel=1e-6)
    # one per call path, largest first (ties in call-path order); enter and leave of the MPI call
    top = [(round(i.time / NS), i.call_path, i.process, round(i.enter / NS), round(i.leave / NS)) for i in s.top]
    assert top == [(300, "main/MPI_Ssend", "MPI Rank 0", 100, 500),
                   (300, "main/MPI_Waitall", "MPI Rank 0", 2100, 2600),
                   (200, "main/MPI_Wait", "MPI Rank 0", 1100, 1500)]
    text = analysis.trace_stat(report)
    assert re.search(r"mpi_latereceiver +3 +8e-07 +2\.67e-07 +3e-07", text), text
    assert "  - 3e-07 s  MPI Rank 0  main/MPI_Ssend  enter 0.000000100 s  leave 0.000000500 s" in text
    # a report read back from its file has no instance statistics
    out = tmp_path / "a.cubex"
    cubescale.analyze(write(tmp_path, LATE_RECEIVER, name="again"), out)
    assert analysis.statistics(cubescale.open(out)) is None and analysis.trace_stat(cubescale.open(out)) == ""


def test_cli_summary_has_violations_and_instances(tmp_path, capsys):
    path = write(tmp_path, CLOCKS, end=500)
    assert main(["analyze", path, "-o", str(tmp_path / "a.cubex")]) == 0
    text = capsys.readouterr().out
    assert "clock condition violations: 2 (MPI Rank 0: 1, MPI Rank 1: 1)" in text, text
    assert "most severe instances" in text and "  - 4e-08 s  MPI Rank 1  main/MPI_Recv" in text, text
    assert main(["analyze", path, "-o", str(tmp_path / "b.cubex"), "--time-correct"]) == 0
    text = capsys.readouterr().out
    assert ("clock condition violations: 0; as recorded 1 point to point, 1 collective, removed by the time "
            "correction (2 events moved forward)") in text, text
    assert "  - 5e-08 s  MPI Rank 1  main/MPI_Recv" in text, text


@pytest.mark.parametrize("name", ["late-sender-barrier", "ping-pong", "bcast-scorep8", "jacobi-hybrid"])
def test_shared_traces_are_consistent_after_time_correction(name):
    anchor = next(iter(sorted((SHARED_OTF2 / name).glob("*.otf2"))))
    measured = cubescale.analyze(anchor)
    corrected = cubescale.analyze(anchor, time_correct=True)
    before = analysis.statistics(measured)
    assert sum(analysis.clock_violations(measured).values()) == before.p2p_violations + before.collective_violations
    assert sum(analysis.clock_violations(corrected).values()) == 0
    # without violations nothing moves: the same pattern times
    if before.p2p_violations + before.collective_violations == 0:
        for p in analysis.patterns(measured):
            assert np.array_equal(measured.values(p.name), corrected.values(p.name)), p.name



def test_nonblocking_collectives_wait_in_their_completion(tmp_path):
    report = cubescale.analyze(write(tmp_path, NONBLOCKING))
    # min(latest start, leave) - enter of the MPI_Wait (N x N, barrier, root of N-to-1);
    # min(root's start, leave) - enter for the non-root of 1-to-N; nothing in MPI_Test
    assert by_call(report, "mpi_wait_nxn") == pytest.approx({(0, "MPI_Wait"): 200 * NS}, rel=1e-15)
    assert by_call(report, "mpi_barrier_wait") == pytest.approx({(0, "MPI_Wait"): 100 * NS}, rel=1e-15)
    assert by_call(report, "mpi_latebroadcast") == pytest.approx({(0, "MPI_Wait"): 80 * NS}, rel=1e-15)
    assert by_call(report, "mpi_earlyreduce") == pytest.approx({(0, "MPI_Wait"): 80 * NS}, rel=1e-15)
    # the completion calls' time is collective time (Ibarrier: synchronization), not point to point
    assert by_call(report, "mpi_collective") == pytest.approx(
        {(0, "MPI_Wait"): 760 * NS, (0, "MPI_Test"): 10 * NS, (1, "MPI_Wait"): 110 * NS}, rel=1e-12)
    assert by_call(report, "mpi_sync_collective") == pytest.approx(
        {(0, "MPI_Wait"): 200 * NS, (1, "MPI_Wait"): 10 * NS}, rel=1e-12)
    for m in report.metrics:  # parents store their children
        if m.parent is not None and report.metrics[m.parent].name != "time" and m.name != "clock_violations":
            parent = report.values(report.metrics[m.parent].name, inclusive=False)
            children = sum(report.values(report.metrics[c].name, inclusive=False)
                           for c in report.metrics[m.parent].children)
            assert (parent - children >= -1e-15).all(), m.name
    top = analysis.statistics(report).patterns["mpi_wait_nxn"].top[0]
    assert (top.call_path, round(top.enter / NS), round(top.leave / NS)) == ("main/MPI_Wait", 500, 900)


def test_nonblocking_scan_members_are_in_communicator_rank_order(tmp_path):
    # analysis_cases.ISCAN_ORDER: on a communicator ranking the processes in reverse, "the starts
    # ranked up to mine" in its rank order (location order gave rank 2's wait to process 2)
    report = cubescale.analyze(write(tmp_path, ISCAN_ORDER))
    want = {(int(k.split(":")[0]), k.split(":")[1]): ns * NS for k, ns in ISCAN_ORDER_EXPECTED["mpi_earlyscan"].items()}
    assert by_call(report, "mpi_earlyscan") == pytest.approx(want, rel=1e-15)


def test_nonblocking_collectives_on_mpi_comm_self_wait_for_nobody(tmp_path):
    # Every process's MPI_COMM_SELF is one definition; its operations are each process's own
    # (tag 1). Taken as one instance, rank 0's Iallreduce "waited" 10 ns for rank 1's start and
    # its MPI_Wait, left before that start, counted as a clock violation. A third rank starts
    # two, which must not be "missing" on the others.
    ranks = NONBLOCKING_SELF
    for correct in (False, True):
        report = cubescale.analyze(write(tmp_path, ranks, name=f"self{int(correct)}", end=1000), time_correct=correct)
        assert not by_call(report, "mpi_wait_nxn")
        assert by_call(report, "mpi_barrier_wait") == pytest.approx({(0, "MPI_Barrier"): 50 * NS, (2, "MPI_Barrier"): 30 * NS})
        stats = analysis.statistics(report)
        assert (stats.collective_violations, stats.corrected_jumps) == (0, 0)


def test_nonblocking_collectives_on_a_communicator_of_one_process_wait_for_nobody(tmp_path):
    # analysis_cases.NONBLOCKING_SOLO: one process, so MPI_COMM_WORLD has one member. Its
    # MPI_Iallreduce's MPI_Wait leaves 30 ns after the start and its MPI_Allreduce 10 ns after
    # its enter: with a latency of 100 ns neither is a clock condition (clc: a size-1
    # communicator's collective is an internal event; the non-blocking one counted a violation
    # and jumped 80 ns until 2026-11-26).
    for correct in (False, True):
        report = cubescale.analyze(write(tmp_path, NONBLOCKING_SOLO, name=f"solo{int(correct)}", end=1000),
                                   time_correct=correct, min_latency=100e-9)
        stats = analysis.statistics(report)
        assert (stats.collective_violations, stats.corrected_jumps) == (0, 0)
        assert sum(analysis.clock_violations(report).values()) == 0
    # two processes on it: each a violation, and a jump of 70 ns (to the start at 100 plus 100 ns)
    two = [NONBLOCKING_SOLO[0][:2], NONBLOCKING_SOLO[0][:2]]
    stats = analysis.statistics(cubescale.analyze(write(tmp_path, two, name="two", end=1000), time_correct=True,
                                                  min_latency=100e-9))
    assert (stats.collective_violations, stats.corrected_jumps) == (2, 2)


def test_nonblocking_collective_missing_on_a_member_fails(tmp_path):
    ranks = [NONBLOCKING[0][:2], NONBLOCKING[1][:2] + [("MPI_Iallreduce", 900, 910, [], 0), ("MPI_Wait", 920, 930, [], 0)]]
    with pytest.raises(cubescale.FormatError, match="no counterpart"):
        cubescale.analyze(write(tmp_path, ranks, end=1000))



def point_to_point_reference(path):
    """Per location index: Late Receiver ticks (scout's definition) and point-to-point clock
    violations, computed here directly from the event DataFrame."""
    trace = open_trace(path)
    groups, comms, locs = trace.table("groups"), trace.table("communicators"), trace.locations
    world = next(list(g.members) for g in groups.itertuples() if g.type == "comm_locations" and g.paradigm == "mpi")
    index_of_id = {int(i): k for k, i in enumerate(locs["id"])}
    world = [index_of_id[int(i)] for i in world]

    def rank_location(comm, rank, me):
        group = groups.iloc[int(comms["group"][comm])]
        return me if group.type == "comm_self" else world[int(list(group.members)[rank])]

    events, calls = trace.events(), count()
    # only MPI calls and their message events matter (an MPI event's innermost call is its MPI call)
    mpi_region = np.array([str(n).startswith("MPI_") for n in trace.regions["name"]] + [False])
    kinds = events["Event Type"].astype(str)
    events = events[~kinds.isin(["ENTER", "LEAVE"]) | mpi_region[events["Region"].to_numpy()]]
    queues, all_sends, receives = defaultdict(deque), [], []
    for loc, df in events.groupby("Location", sort=True):
        stack, isends, irecvs = [], {}, {}  # frames: [enter, region name, records left at its leave, call]
        for kind, region, partner, comm, tag, request, ticks in zip(
                df["Event Type"].astype(str), df["Region"], df["Partner"], df["Communicator"], df["Tag"],
                df["Request"], df["Ticks"]):
            ticks, here = int(ticks), stack[-1] if stack else None
            if kind == "ENTER":
                stack.append([ticks, trace.regions["name"][region], [], next(calls)])
            elif kind == "LEAVE":
                for record in stack.pop()[2]:
                    record["leave"] = ticks
            elif kind in ("MPI_SEND", "MPI_ISEND"):
                s = {"loc": loc, "time": ticks, "call_enter": here[0], "region": None}
                queues[(loc, rank_location(comm, partner, loc), comm, tag)].append(s)
                all_sends.append(s)
                if kind == "MPI_ISEND":
                    isends[request] = s
                else:  # completed by the call it is in
                    s.update(enter=here[0], region=here[1], call=here[3])
                    here[2].append(s)
            elif kind == "MPI_ISEND_COMPLETE" and request in isends:
                s = isends.pop(request)
                s.update(enter=here[0], region=here[1], call=here[3])
                here[2].append(s)
            elif kind == "MPI_IRECV_REQUEST":
                irecvs[request] = here[0]
            elif kind in ("MPI_RECV", "MPI_IRECV"):
                r = {"loc": loc, "time": ticks, "enter": here[0], "region": here[1], "call": here[3],
                     "posted": here[0] if kind == "MPI_RECV" else irecvs.pop(request, here[0]),
                     "key": (rank_location(comm, partner, loc), loc, comm, tag)}
                here[2].append(r)
                receives.append(r)
    violations = defaultdict(int)
    late_sender_calls = set()  # Waitall/Waitsome calls that waited as Late Sender
    for r in receives:
        s = queues[r["key"]].popleft()
        s["posted"] = r["posted"]
        violations[r["loc"]] += r["time"] < s["time"]
        if r["region"] in ("MPI_Waitall", "MPI_Waitsome") and min(s["call_enter"], r["leave"]) > r["enter"]:
            late_sender_calls.add(r["call"])
    late = defaultdict(int)
    largest = {}  # Waitall/Waitsome call -> (location, its largest wait)
    for s in all_sends:
        if "posted" not in s or s["region"] is None:
            continue
        idle = s["posted"] - s["enter"] if s["enter"] < s["posted"] < s["leave"] else 0
        if s["region"] in ("MPI_Send", "MPI_Ssend", "MPI_Wait", "MPI_Waitany"):
            late[s["loc"]] += idle
        elif s["region"] in ("MPI_Waitall", "MPI_Waitsome") and s["call"] not in late_sender_calls:
            largest[s["call"]] = (s["loc"], max(idle, largest.get(s["call"], (0, 0))[1]))
    for loc, idle in largest.values():
        late[loc] += idle
    return trace, late, violations


@pytest.mark.parametrize("name", ["late-sender-barrier", "ping-pong", "bcast-scorep8", "jacobi-hybrid"])
def test_shared_traces_late_receiver_and_violations_match_the_reference(name):
    path = str(next(iter(sorted((SHARED_OTF2 / name).glob("*.otf2")))))
    trace, late, violations = point_to_point_reference(path)
    report = cubescale.analyze(path)
    columns = trace.location_indices()
    seconds = 1.0 / trace.clock[0]
    want = np.array([late[c] * seconds for c in columns])
    got = (report.values("mpi_latereceiver", inclusive=False).sum(axis=0)
           if "mpi_latereceiver" in [m.name for m in report.metrics] else np.zeros(len(columns)))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert analysis.statistics(report).p2p_violations == sum(violations.values())
