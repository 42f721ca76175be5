"""What ``cubescale.analyze`` writes beside the wait-state patterns: Scalasca's critical-path
profile (``critical_path``) and counts (``syncs_*``, ``comms_*``, ``bytes_*``,
``mpi_sls_count``, ``mpi_cls_count``, ``mpi_slr_count``, ``mpi_clr_count``): exact values on synthetic traces with stated timings and
payloads, the shared traces against references computed here from the event DataFrame, and
the metric trees against Scalasca 2.6's scout.spec and a real Scalasca report."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from analysis_cases import LATE_RECEIVER, LATE_RECEIVER_COUNTS
from otf2_oracle import SHARED_OTF2
from scout_tree import SCOUT_26_TREE

import cubescale
from cubescale import testing, trace

NS = 1e-9
SHARED_CUBEX = SHARED_OTF2.parent / "cubex"
waitstates = importlib.import_module("test_analysis_waitstates")

# A Late Sender chain 0 -> 1 -> 2 and a barrier that rank 2 enters last, main from 0 to 1000 ns.
# Backward from the end of rank 0 (all end at 1000; the first wins): rank 0 waited in the
# barrier for rank 2 (400 -> 800), so [800, 1000] of rank 0 is on the path, then rank 2 from
# its barrier enter (800) back to the end of its Late Sender wait (500), then rank 1 from its
# send (500) back to the end of its own wait (300), then rank 0 from its send (300) to 0.
CHAIN = [
    [("MPI_Send", 300, 310, [1], 0), ("MPI_Barrier", 400, 900, [], 0)],
    [("MPI_Recv", 100, 320, [0], 0), ("MPI_Send", 500, 510, [2], 0), ("MPI_Barrier", 600, 900, [], 0)],
    [("MPI_Recv", 150, 520, [1], 0), ("MPI_Barrier", 800, 900, [], 0)],
]
CHAIN_PATH = {(0, "main"): 300 + 100, (0, "MPI_Barrier"): 100,
              (1, "MPI_Recv"): 20, (1, "main"): 180,
              (2, "MPI_Recv"): 20, (2, "main"): 280}


def write(tmp_path, ranks, name="mpi", end=1000):
    testing.write_mpi_trace(tmp_path, name, ranks, end)
    return str(tmp_path / f"{name}.otf2")


def by_call(report, metric):
    """{(column, region of the call path): exclusive value} of the non-zero entries."""
    return waitstates.by_call(report, metric)


def test_critical_path_of_a_late_sender_chain_is_exact(tmp_path):
    report = cubescale.analyze(write(tmp_path, CHAIN))
    got = by_call(report, "critical_path")
    assert got.keys() == CHAIN_PATH.keys()
    for key, ns in CHAIN_PATH.items():
        assert got[key] == pytest.approx(ns * NS, rel=1e-12), key
    m = report.metric("critical_path")
    assert (m.parent, m.unit, m.kind, m.dtype, m.display_name) == (None, "sec", "EXCLUSIVE", "DOUBLE", "Critical path")
    # The path covers the run once: its length is the run's wall-clock time.
    assert report.values("critical_path", inclusive=False).sum() == pytest.approx(1000 * NS, rel=1e-12)


def test_critical_path_follows_the_last_process(tmp_path):
    # No waiting at all: the path is the process whose trace ends last, whole (here all end at
    # `end`, so the first); a root that enters a broadcast late moves the path to it.
    quiet = write(tmp_path, [[("MPI_Send", 10, 20, [1], 0)], [("MPI_Recv", 30, 40, [0], 0)]], "quiet", end=100)
    assert by_call(cubescale.analyze(quiet), "critical_path") == pytest.approx(
        {(0, "main"): 90 * NS, (0, "MPI_Send"): 10 * NS})
    late_root = write(tmp_path, [[("MPI_Bcast", 10, 70, [1], 0)], [("MPI_Bcast", 60, 70, [1], 0)]], "bcast", end=100)
    # rank 0 waits 10 -> 60 for the root (rank 1): [60, 100] on rank 0, [0, 60] on rank 1
    assert by_call(cubescale.analyze(late_root), "critical_path") == pytest.approx(
        {(0, "main"): 30 * NS, (0, "MPI_Bcast"): 10 * NS, (1, "main"): 60 * NS})


def test_critical_path_runs_from_the_last_finalize_to_init_and_follows_late_receivers(tmp_path):
    # As scout (CriticalPath.pattern): rank 0 enters MPI_Finalize last (850), so the path starts
    # there; back in time, rank 0's MPI_Ssend waited as a Late Receiver from 200 until rank 1
    # posted its receive (400): [400, 850] of rank 0 is on the path, then rank 1 from its
    # MPI_Recv's enter (400) back to the enter of its MPI_Init (20). The time before MPI_Init
    # and from MPI_Finalize on is not on the path (before issue #26 it was all of rank 0).
    ranks = [[("MPI_Init", 10, 50, [], 0), ("MPI_Ssend", 200, 500, [1], 0), ("MPI_Finalize", 850, 900, [], 0)],
             [("MPI_Init", 20, 50, [], 0), ("MPI_Recv", 400, 510, [0], 0), ("MPI_Finalize", 800, 900, [], 0)]]
    report = cubescale.analyze(write(tmp_path, ranks, "window"))
    assert by_call(report, "mpi_latereceiver") == pytest.approx({(0, "MPI_Ssend"): 200 * NS})
    assert by_call(report, "critical_path") == pytest.approx(
        {(0, "main"): 350 * NS, (0, "MPI_Ssend"): 100 * NS, (1, "MPI_Init"): 30 * NS, (1, "main"): 350 * NS}, rel=1e-12)
    # scout's performance impact (impact.hpp), by hand: the path's time per call path summed over
    # the processes (main 700, MPI_Ssend 100, MPI_Init 30) against each process's own time
    # (exclusive time less its waits: rank 0 main 610, MPI_Init 40, MPI_Ssend 300 - 200,
    # MPI_Finalize 50; rank 1 main 760, MPI_Init 30, MPI_Recv 110, MPI_Finalize 100 - 50)
    # (values below 1e-15 s are rounding noise, as scout's own: 300 ns - 200 ns vs 100 ns in binary)
    impact = {name: {k: v for k, v in by_call(report, name).items() if abs(v) > 1e-15}
              for name in ("critical_path_activities", "non_critical_path_activities", "critical_imbalance_impact",
                           "inter_partition_imbalance")}
    assert impact["critical_path_activities"] == pytest.approx(
        {(0, "main"): 610 * NS, (0, "MPI_Ssend"): 100 * NS, (0, "MPI_Init"): 30 * NS, (1, "main"): 700 * NS,
         (1, "MPI_Init"): 30 * NS}, rel=1e-12)
    assert impact["non_critical_path_activities"] == pytest.approx(
        {(0, "MPI_Init"): 10 * NS, (0, "MPI_Finalize"): 50 * NS, (1, "main"): 60 * NS, (1, "MPI_Recv"): 110 * NS,
         (1, "MPI_Finalize"): 50 * NS}, rel=1e-12)
    # rank 0's excess (main: 700 - 610) carries its aggregate wait (830 - 800 = 30), rank 1's
    # (MPI_Ssend: 100) its -120; main's 30 goes to the path's main on each rank by its share
    assert impact["critical_imbalance_impact"] == pytest.approx({(0, "main"): 15 * NS, (1, "main"): 15 * NS}, rel=1e-9)
    # every call path with path time has own time on rank 0: no headroom, 0 * inf, nothing (as scout)
    assert impact["inter_partition_imbalance"] == {}
    assert report.metrics[report.metric("inter_partition_imbalance").parent].name == "critical_imbalance_impact"


# Payloads: a zero-byte Late Sender (a synchronization), an 8-byte message received early,
# a 100-byte Late Sender, a barrier (no data), a broadcast of 16 bytes from root 0 (the
# synthetic writer records the payload as both sent and received on every member) and a reduce.
COUNTED = [
    [("MPI_Send", 50, 60, [1], 0, 0), ("MPI_Send", 100, 110, [1], 1, 8), ("MPI_Send", 300, 310, [1], 2, 100),
     ("MPI_Barrier", 400, 500, [], 0, 0), ("MPI_Bcast", 600, 610, [0], 0, 16)],
    [("MPI_Recv", 10, 70, [0], 0, 0), ("MPI_Recv", 200, 210, [0], 1, 8), ("MPI_Recv", 250, 320, [0], 2, 100),
     ("MPI_Barrier", 450, 500, [], 0, 0), ("MPI_Bcast", 605, 610, [0], 0, 16)],
]
COUNTS = {
    "syncs_send": {(0, "MPI_Send"): 1}, "syncs_recv": {(1, "MPI_Recv"): 1}, "mpi_sls_count": {(1, "MPI_Recv"): 1},
    "syncs_coll": {(0, "MPI_Barrier"): 1, (1, "MPI_Barrier"): 1},
    "comms_send": {(0, "MPI_Send"): 2}, "comms_recv": {(1, "MPI_Recv"): 2}, "mpi_cls_count": {(1, "MPI_Recv"): 1},
    "comms_cxch": {(0, "MPI_Bcast"): 1, (1, "MPI_Bcast"): 1}, "bytes_sent": {(0, "MPI_Send"): 108},
    "bytes_rcvd": {(1, "MPI_Recv"): 108}, "bytes_cout": {(0, "MPI_Bcast"): 16, (1, "MPI_Bcast"): 16},
    "bytes_cin": {(0, "MPI_Bcast"): 16, (1, "MPI_Bcast"): 16},
}
PARENTS_OF_COUNTS = {"mpi_slswo_count": "mpi_sls_count", "mpi_clswo_count": "mpi_cls_count",
                     "mpi_slr_count": "syncs_send", "mpi_clr_count": "comms_send"}
PARENTS = {"syncs_p2p": ("syncs_send", "syncs_recv"), "syncs": ("syncs_p2p", "syncs_coll"),
           "comms_p2p": ("comms_send", "comms_recv"), "comms_coll": ("comms_cxch", "comms_csrc", "comms_cdst"),
           "comms": ("comms_p2p", "comms_coll"), "bytes_p2p": ("bytes_sent", "bytes_rcvd"),
           "bytes_coll": ("bytes_cout", "bytes_cin"), "bytes": ("bytes_p2p", "bytes_coll")}


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    return cubescale.analyze(write(tmp_path_factory.mktemp("counts"), COUNTED))


@pytest.mark.parametrize("metric", sorted(COUNTS) + ["comms_csrc", "comms_cdst", "mpi_slswo_count", "mpi_clswo_count",
                                                     "mpi_slr_count", "mpi_clr_count"])
def test_counts_are_exact(counted, metric):
    assert by_call(counted, metric) == COUNTS.get(metric, {})


def test_count_parents_store_their_children(counted):
    for parent, children in PARENTS.items():
        assert (counted.values(parent, inclusive=False)
                == sum(counted.values(c, inclusive=False) for c in children)).all(), parent
    # scout's bytes_sent is point-to-point only: the profile's Score-P-style metrics are gone
    names = [m.name for m in counted.metrics]
    assert "bytes_received" not in names and names.count("bytes_sent") == 1


def test_count_trees_are_scalascas(counted):
    for name in [*COUNTS, *PARENTS, *PARENTS_OF_COUNTS, "comms_csrc", "comms_cdst"]:
        m = counted.metric(name)
        display, parent, unit = SCOUT_26_TREE[name]
        assert m.display_name == display, name
        assert (counted.metrics[m.parent].name if m.parent is not None else None) == parent, name
        assert (m.unit, m.kind, m.dtype) == (unit, "EXCLUSIVE", "UINT64")
    # A real remapped Scalasca summary (scalasca -examine of BT-MZ, an older Scalasca: its roots
    # are named "Synchronizations" ..., 2.6's "MPI synchronizations") has the roots and the
    # intermediate levels it shares with scout's tree with the same units and nesting.
    real = cubescale.open(SHARED_CUBEX / "bt-mz.B.8x4.remapped.cubex")

    def parent(report, m):
        return report.metrics[m.parent].name if m.parent is not None else None

    for name in ["syncs", "comms", "bytes", "bytes_p2p", "bytes_coll"]:
        ours, theirs = counted.metric(name), real.metric(name)
        assert (ours.unit, parent(counted, ours)) == (theirs.unit, parent(real, theirs)), name


def test_late_receiver_counts_are_exact(tmp_path):
    # analysis_cases.LATE_RECEIVER: instances on the call completing the send (not on its
    # MPI_Isend), a Waitall's one classified by its largest wait's send (0 bytes, the other 8)
    report = cubescale.analyze(write(tmp_path, LATE_RECEIVER, end=3000))
    for metric, expected in LATE_RECEIVER_COUNTS.items():
        assert by_call(report, metric) == expected, metric
    # one instance per call path where Late Receiver time is
    late = report.values("mpi_latereceiver", inclusive=False)
    instances = report.values("mpi_slr_count", inclusive=False) + report.values("mpi_clr_count", inclusive=False)
    assert ((late > 0) == (instances > 0)).all()
    # the instances are a part of the sends, not added to them (as the Late Sender counts)
    assert by_call(report, "syncs_send") == {(0, "MPI_Ssend"): 1, (0, "MPI_Isend"): 1}


def test_late_receiver_counts_without_waiting_are_zero(counted):
    # no send of COUNTED waits for its receive: the counts are there, zero
    assert by_call(counted, "mpi_latereceiver") == {}
    assert counted.values("mpi_slr_count", inclusive=False).sum() == 0
    assert counted.values("mpi_clr_count", inclusive=False).sum() == 0


def test_wrong_order_late_sender_counts(tmp_path):
    # The wrong-order trace of test_analysis_waitstates: rank 1 has one Late Sender, wrong-order;
    # rank 2 two, the first wrong-order. Every message has 8 bytes: communications.
    report = cubescale.analyze(write(tmp_path, waitstates.WRONG_ORDER))
    assert by_call(report, "mpi_cls_count") == {(1, "MPI_Recv"): 1, (2, "MPI_Recv"): 2}
    assert by_call(report, "mpi_clswo_count") == {(1, "MPI_Recv"): 1, (2, "MPI_Recv"): 1}
    assert by_call(report, "mpi_sls_count") == {} and by_call(report, "mpi_slswo_count") == {}


def _shared(name):
    return waitstates._shared_anchor(name)


@pytest.mark.parametrize("name", ["late-sender-barrier", "ping-pong", "bcast-scorep8", "jacobi-hybrid"])
def test_shared_counts_equal_the_event_dataframe(name):
    path = _shared(name)
    report = cubescale.analyze(path)
    df = trace.Trace(path).events(types=["MPI_SEND", "MPI_ISEND", "MPI_RECV", "MPI_IRECV", "MPI_COLLECTIVE_END"])
    columns = [loc.index for loc in report.locations]
    sends = df[df["Event Type"].isin(["MPI_SEND", "MPI_ISEND"])]
    recvs = df[df["Event Type"].isin(["MPI_RECV", "MPI_IRECV"])]
    coll = df[df["Event Type"] == "MPI_COLLECTIVE_END"]

    def per_location(frame, weights=None):
        out = np.zeros(len(columns))
        for col, loc in enumerate(columns):
            mine = frame[frame["Location"] == loc]
            out[col] = len(mine) if weights is None else mine[weights].sum()
        return out

    def ours(metric):
        return report.values(metric, inclusive=False).sum(axis=0)

    assert ours("syncs_send") == pytest.approx(per_location(sends[sends["Bytes"] == 0]))
    assert ours("comms_send") == pytest.approx(per_location(sends[sends["Bytes"] != 0]))
    assert ours("comms_recv") == pytest.approx(per_location(recvs[recvs["Bytes"] != 0]))
    assert ours("bytes_sent") == pytest.approx(per_location(sends, "Bytes"))
    assert ours("bytes_rcvd") == pytest.approx(per_location(recvs, "Bytes"))
    assert ours("bytes_cout") == pytest.approx(per_location(coll, "Bytes"))
    assert ours("bytes_cin") == pytest.approx(per_location(coll, "Bytes Received"))
    none = (coll["Bytes"] == 0) & (coll["Bytes Received"] == 0)
    assert ours("syncs_coll") == pytest.approx(per_location(coll[none]))
    assert ours("comms_coll") == pytest.approx(per_location(coll[~none]))
    # Late Receiver instances are where Late Receiver time is
    if "mpi_latereceiver" in [m.name for m in report.metrics]:
        lr = report.values("mpi_latereceiver", inclusive=False) > 0
        counted_lr = (report.values("mpi_slr_count", inclusive=False)
                      + report.values("mpi_clr_count", inclusive=False)) > 0
        assert (lr == counted_lr).all()
    # Late Sender instances are where Late Sender time is, wrong-order ones where its wrong-order part is
    if "mpi_latesender_wo" in [m.name for m in report.metrics]:
        wo = report.values("mpi_latesender_wo", inclusive=False) > 0
        counted_wo = (report.values("mpi_slswo_count", inclusive=False)
                      + report.values("mpi_clswo_count", inclusive=False)) > 0
        assert (wo == counted_wo).all()
    if "mpi_latesender" not in [m.name for m in report.metrics]:
        assert ours("mpi_sls_count").sum() + ours("mpi_cls_count").sum() == 0
        return
    late = report.values("mpi_latesender", inclusive=False) > 0
    counted_late = (report.values("mpi_sls_count", inclusive=False) + report.values("mpi_cls_count", inclusive=False)) > 0
    assert (late == counted_late).all()


@pytest.mark.parametrize("name", ["late-sender-barrier", "ping-pong", "bcast-scorep8", "jacobi-hybrid"])
def test_shared_critical_path_spans_the_run(name):
    # The path is continuous: as scout's, from the enter of the MPI_Finalize entered last back to
    # the enter of MPI_Init of the location where it ends (every process of these traces has
    # both; without them: from the last Leave of the MPI process that leaves last back to the
    # first Enter), so its length is that span (a reference from the events), less the time the
    # path spends outside every region (between two top-level regions there is no call path to
    # put it on): exact where no location has such gaps.
    path = _shared(name)
    report = cubescale.analyze(path)
    df = trace.Trace(path).events()
    cp = report.values("critical_path", inclusive=False)
    columns = [loc.index for loc in report.locations]
    on_path = [loc for col, loc in enumerate(columns) if cp[:, col].sum() > 0]
    assert on_path
    mpi = df[df["Event Type"].str.startswith("MPI_")]["Location"].unique()
    regions = df[df["Event Type"].isin(["ENTER", "LEAVE"])]
    enters = regions[regions["Event Type"] == "ENTER"]
    finalize = enters[enters["Name"] == "MPI_Finalize"].groupby("Location")["Timestamp (ns)"].min()
    init = enters[enters["Name"].isin(["MPI_Init", "MPI_Init_thread"])].groupby("Location")["Timestamp (ns)"].min()
    assert set(finalize.index) == set(init.index) == set(mpi)  # the window applies
    depth = np.where(regions["Event Type"] == "ENTER", 1, -1).cumsum()  # locations start and end at depth 0
    outside = regions["Timestamp (ns)"].groupby(regions["Location"]).diff().shift(-1).where(depth == 0)
    gaps = outside.groupby(regions["Location"]).sum().reindex(mpi, fill_value=0).sum()
    total = cp.sum()
    spans = [(finalize.max() - init[loc]) * NS for loc in on_path if loc in init.index]
    assert any(span - gaps * NS - 1e-9 <= total <= span + 1e-9 for span in spans), (total, spans, gaps)
    if gaps == 0:
        assert any(total == pytest.approx(span, rel=1e-9, abs=1e-9) for span in spans)
    assert name != "ping-pong" or gaps == 0
    # never more than the exclusive time of a call path on its location (which the profile has
    # negative for worker threads on their master's call paths above the parallel region), plus
    # on a parallel region the thread's time from the fork to entering it and from leaving it to
    # the join (omp_management), which scout's path counts there
    time = report.values("time", inclusive=False)
    management = report.values("omp_management", inclusive=False) if any(m.name == "omp_management" for m in report.metrics) else 0
    assert (cp <= time.clip(min=0) + management + 1e-12).all()


def _one_process(path, **options):
    """(every metric's values as bytes, stats) of the one-process analysis of ``path``."""
    from cubescale import _core

    t = trace.open(path)
    core, stats = _core.analysis.analyze(t._core, t.location_indices(), **options)
    return [core.values(i).tobytes() for i in range(len(core.metrics))], stats


@pytest.mark.parametrize("case", ["ring", "ring-corrected", "jacobi-hybrid", "jacobi-hybrid-corrected"])
def test_critical_path_without_a_second_read_is_the_same(case, tmp_path):
    # One process puts the path's time on call paths from the time lines of its pass
    # (critical_path.hpp, PathTimeline); a location where an end of the path lies inside a gap
    # between MPI calls (the time correction moves resume points there: the ring's processes
    # start apart, jacobi-hybrid has violations at 10 us) is read a second time. Either way the
    # values equal those of reading every location on the path again, byte for byte.
    if case.startswith("ring"):
        testing.write_ring_trace(tmp_path, "ring", processes=4, iterations=300, counters=False)
        path, options = str(tmp_path / "ring.otf2"), {"time_correct": case.endswith("corrected")}
    else:
        path = str(SHARED_OTF2 / "jacobi-hybrid" / "traces.otf2")
        options = {"time_correct": True, "min_latency": 1e-5} if case.endswith("corrected") else {}
    values, stats = _one_process(path, **options)
    reread, reread_stats = _one_process(path, reread_path=True, **options)
    assert values == reread
    assert reread_stats["critical_path_reread"] > 0
    if case.endswith("corrected"):
        assert 0 < stats["critical_path_reread"] <= reread_stats["critical_path_reread"]
    else:
        assert stats["critical_path_reread"] == 0
    # what the time lines hold: 16 bytes per MPI call (and OpenMP barrier, fork, parallel region's
    # enter and leave: the OpenMP synchronization events count) and 8 per call path with time between two
    communication = stats["messages"] + stats["collectives"] + stats["omp_sync_events"]
    assert 16 * communication <= stats["critical_path_bytes"] <= 100 * communication


def test_a_call_of_days_is_read_again_not_split_without_bound(tmp_path):
    # A time line splits an MPI call at 2^32 ticks; one of 2^52 ns (52 days, or a corrupt
    # time) would be a million pieces (2^60: 4 GiB of them). Beyond 64 pieces the location is
    # read a second time instead, with the same values.
    long = 2**52
    ranks = [[("MPI_Recv", 10, long, [1], 0)], [("MPI_Send", long - 100, long - 90, [0], 0)]]
    testing.write_mpi_trace(tmp_path, "long", ranks, long + 100)
    path = str(tmp_path / "long.otf2")
    values, stats = _one_process(path)
    reread, _ = _one_process(path, reread_path=True)
    assert values == reread
    assert stats["critical_path_reread"] >= 1 and stats["critical_path_bytes"] < 4096
