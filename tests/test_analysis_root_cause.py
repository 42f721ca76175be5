"""scout's root-cause metrics (``cubescale.analyze(..., root_cause=True)``, ``cubescale analyze
--root-cause``): the worked example of docs/root-cause-design.md (section 7), the option's
faces and a shared trace. scout's own values on the synthetic and shared cases are compared in
test_analysis_scout.py."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from scout_tree import SCOUT_26_TREE

import cubescale
from cubescale import testing
from cubescale.cli import main

SHARED = Path(os.environ.get("CUBESCALE_SHARED_DATA", "/work/shared/data")) / "otf2"

ROOT_CAUSE = ["delay_latesender", "delay_latesender_longterm", "delay_latereceiver", "delay_latereceiver_longterm",
              "delay_barrier", "delay_barrier_longterm", "delay_n2n", "delay_n2n_longterm", "delay_12n",
              "delay_12n_longterm", "delay_n21", "delay_n21_longterm", "mpi_wait_indirect_latesender",
              "mpi_wait_indirect_latereceiver", "mpi_wait_propagating_ls", "mpi_wait_propagating_lr"]
# The same in the order of Scalasca 2.6's tree (preorder), which the report follows.
IN_TREE_ORDER = ["delay_latesender", "delay_latesender_longterm", "delay_latereceiver", "delay_latereceiver_longterm",
                 "delay_barrier", "delay_barrier_longterm", "delay_n21", "delay_n21_longterm", "delay_12n",
                 "delay_12n_longterm", "delay_n2n", "delay_n2n_longterm", "mpi_wait_propagating_ls",
                 "mpi_wait_propagating_lr", "mpi_wait_indirect_latesender", "mpi_wait_indirect_latereceiver"]


def by_call(report: cubescale.Report, metric: str) -> dict[tuple[int, str], float]:
    """{(location, region of the call path): value} of the non-zero exclusive values."""
    values = np.asarray(report.values(metric, inclusive=False), dtype=float)
    return {(int(loc), report.cnodes[c].region.name): float(values[c, loc]) for c, loc in zip(*np.nonzero(values))}


@pytest.fixture(scope="module")
def chain(tmp_path_factory) -> Path:
    """The worked example: rank 0 computes 3 s before sending to rank 1, which waits for it, then
    computes 1 s and sends to rank 2, which waited since 0.5 s (1 s = 1000 ns here; the
    example's ``compute`` is main's own time)."""
    directory = tmp_path_factory.mktemp("rootcause")
    init, finalize = ("MPI_Init", 0, 100, [], 0), ("MPI_Finalize", 4400, 4500, [], 0)
    testing.write_mpi_trace(directory, "chain", [
        [init, ("MPI_Send", 3100, 3200, [1], 0), finalize],
        [init, ("MPI_Recv", 100, 3200, [0], 0), ("MPI_Send", 4200, 4300, [2], 0), finalize],
        [init, ("MPI_Recv", 500, 4300, [1], 0), finalize]], end=4500)
    return directory / "chain.otf2"


def test_worked_example(chain, tmp_path):
    report = cubescale.analyze(chain, tmp_path / "rc.cubex", root_cause=True)
    expected = {
        "delay_latesender": {(0, "main"): 3000e-9, (1, "main"): 600e-9, (1, "MPI_Recv"): 100e-9},
        "delay_latesender_longterm": {(0, "main"): 3000e-9},
        "mpi_wait_indirect_latesender": {(2, "MPI_Recv"): 3000e-9},
        "mpi_wait_propagating_ls": {(1, "MPI_Recv"): 3000e-9},
    }
    for metric in ROOT_CAUSE:
        got = by_call(report, metric)
        assert got == pytest.approx(expected.get(metric, {}), rel=1e-12, abs=1e-18), metric
    # the Late Sender time is explained completely: 6.7 s = 3.7 short-term + 3.0 long-term
    late = report.values("mpi_latesender", inclusive=False).sum()
    delay = sum(report.values(m, inclusive=False).sum() for m in ROOT_CAUSE[:2])
    assert delay == pytest.approx(late, rel=1e-12)
    # the written file has them too, after the other metrics, in Scalasca 2.6's tree (its groups
    # below delay, waitstates_propagating_vs_terminal, waitstates_direct_vs_indirect; roots
    # until 2026-11-28)
    written = cubescale.open(tmp_path / "rc.cubex")
    names = [m.name for m in written.metrics]
    assert names.index("delay") > names.index("performance_impact")
    assert [n for n in names if n in ROOT_CAUSE] == IN_TREE_ORDER
    for name in names[names.index("delay"):]:
        m = written.metric(name)
        display, parent, unit = SCOUT_26_TREE[name]
        assert (m.display_name, written.metrics[m.parent].name if m.parent is not None else None, m.unit) == (
            display, parent, unit), name
    assert by_call(written, "delay_latesender") == pytest.approx(expected["delay_latesender"], rel=1e-12)


def test_off_by_default_and_report_unchanged(chain, tmp_path):
    plain = cubescale.analyze(chain, tmp_path / "plain.cubex")
    assert not {m.name for m in plain.metrics} & set(ROOT_CAUSE)
    with_causes = cubescale.analyze(chain, tmp_path / "rc.cubex", root_cause=True)
    names = [m.name for m in with_causes.metrics]
    assert names[:len(plain.metrics)] == [m.name for m in plain.metrics]
    for m in plain.metrics:  # the other metrics are the same with the option
        assert np.array_equal(plain.values(m.name, inclusive=False), with_causes.values(m.name, inclusive=False)), m.name


def test_not_over_ranks(chain, tmp_path, capsys):
    class TwoRanks:  # what analyze asks of a communicator before it would use it
        size = 2

    with pytest.raises(ValueError, match="one process"):
        cubescale.analyze(chain, tmp_path / "x.cubex", root_cause=True, comm=TwoRanks())
    assert not (tmp_path / "x.cubex").exists()
    assert main(["analyze", str(chain), "-o", str(tmp_path / "y.cubex"), "--root-cause"]) == 0
    out = capsys.readouterr().out  # the summary names who made others wait
    assert "root cause" in out and "delay_latesender" in out and "MPI Rank 0" in out
    assert by_call(cubescale.open(tmp_path / "y.cubex"), "delay_latesender_longterm") == pytest.approx({(0, "main"): 3e-6})


# Traces whose clocks the correction fixes, each beside the same trace written at the corrected
# times (by hand), which the corrected analysis must equal, root causes included:
# * "step": the chain with an early message to rank 2, whose clock runs 10 ns behind: its first
#   receive (a call of no duration at 40) precedes the send at 50, so it and every later event of
#   rank 2 move by 10 ns. The waiting receive's enter (490, moved to 500) is a cut of the time
#   maps: a second read on the recorded times would put 10 ns of MPI_Recv where main belongs.
# * "ramp": rank 1's second receive (event at 90) precedes its send (100): it jumps by 10 and the
#   events since rank 1's previous jump stretch evenly (the backward amortization: 20 -> 21,
#   80 -> 88).
# (Where a producer that stays and a consumer that jumps share one recorded tick, a call of no
# duration, the second read moves both with the consumer: docs/analysis.md, "Root causes".)
CORRECTED = {
    "step": ([[("MPI_Send", 50, 60, [2], 0), ("MPI_Send", 3100, 3200, [1], 0)],
              [("MPI_Recv", 100, 3200, [0], 0), ("MPI_Send", 4200, 4300, [2], 0)],
              [("MPI_Recv", 40, 40, [0], 0), ("MPI_Recv", 490, 4290, [1], 0)]], 4500,
             {2: [("MPI_Recv", 50, 50, [0], 0), ("MPI_Recv", 500, 4300, [1], 0)]}),
    "ramp": ([[("MPI_Send", 30, 50, [2], 1), ("MPI_Send", 100, 110, [1], 0)],
              [("MPI_Recv", 10, 20, [2], 0), ("MPI_Recv", 80, 90, [0], 0)],
              [("MPI_Send", 5, 8, [1], 0), ("MPI_Recv", 60, 70, [0], 1)]], 300,
             {1: [("MPI_Recv", 10, 21, [2], 0), ("MPI_Recv", 88, 100, [0], 0)]}),
}
# The call-path profile keeps the measured times (docs/analysis.md, "--time-correct"): time, the
# metric tree's region metrics that sum it, and what the critical path leaves of it differ.
CORRECTED_METRICS = set(cubescale.analysis.PATTERNS) | set(ROOT_CAUSE) | {
    "visits", "critical_path", "critical_path_activities", "critical_imbalance_impact", "inter_partition_imbalance"}


@pytest.mark.parametrize("case", sorted(CORRECTED))
def test_with_time_correction_on_the_corrected_times(tmp_path, case):
    skewed, end, moved = CORRECTED[case]
    testing.write_mpi_trace(tmp_path, "skewed", skewed, end=end)
    testing.write_mpi_trace(tmp_path, "corrected", [moved.get(r, calls) for r, calls in enumerate(skewed)], end=end)
    corrected = cubescale.analyze(tmp_path / "skewed.otf2", root_cause=True, time_correct=True)
    assert cubescale.analysis.statistics(corrected).corrected_jumps == 1
    expected = cubescale.analyze(tmp_path / "corrected.otf2", root_cause=True)
    assert cubescale.analysis.statistics(expected).p2p_violations == 0
    assert by_call(expected, "delay_latesender")  # the case has root causes
    compared = [m.name for m in expected.metrics if m.name in CORRECTED_METRICS]
    assert len(compared) > 10
    for name in compared:
        assert by_call(corrected, name) == pytest.approx(by_call(expected, name), rel=1e-12), name


def test_root_cause_and_time_correct_on_the_command_line(tmp_path, capsys):
    skewed, end, _ = CORRECTED["step"]
    testing.write_mpi_trace(tmp_path, "skewed", skewed, end=end)
    out = tmp_path / "cli.cubex"
    assert main(["analyze", str(tmp_path / "skewed.otf2"), "-o", str(out), "--root-cause", "--time-correct"]) == 0
    assert "root cause" in capsys.readouterr().out
    direct = cubescale.analyze(tmp_path / "skewed.otf2", root_cause=True, time_correct=True)
    assert by_call(cubescale.open(out), "delay_latesender") == pytest.approx(by_call(direct, "delay_latesender"))
    assert by_call(direct, "delay_latesender")


def test_shared_trace_late_sender_chain_and_barrier(tmp_path):
    """late-sender-barrier (4 ranks): a chain of Late Senders, then an imbalanced barrier. The
    delay costs sit on the processes that made others wait, and every wait is explained at most
    once directly."""
    anchor = SHARED / "late-sender-barrier" / "traces.otf2"
    if not anchor.exists():
        pytest.skip("shared data not found")
    report = cubescale.analyze(anchor, tmp_path / "lsb.cubex", root_cause=True)
    late = report.values("mpi_latesender", inclusive=False)
    short = report.values("delay_latesender", inclusive=False)
    barrier = report.values("mpi_barrier_wait", inclusive=False)
    assert late.sum() > 0 and short.sum() > 0
    # short-term costs explain at most the waits they stand for (sigma <= 1 per wait)
    assert short.sum() <= late.sum() * (1 + 1e-12)
    # indirect and propagating waits are parts of Late Sender waits, per call path and process
    for metric in ("mpi_wait_indirect_latesender", "mpi_wait_propagating_ls"):
        part = report.values(metric, inclusive=False)
        assert np.all(part <= late * (1 + 1e-12) + 1e-15), metric
    # a barrier wait's costs fall on the process that entered last, which itself waited least
    if barrier.sum() > 0:
        delay = report.values("delay_barrier", inclusive=False).sum(axis=0)
        waited = barrier.sum(axis=0)
        assert delay.sum() > 0
        assert waited[int(np.argmax(delay))] == waited.min()
    # the delayers of the Late Senders are senders: processes that were not the last to wait
    senders = short.sum(axis=0)
    assert senders[int(np.argmax(senders))] > 0


def test_openmp_barrier_and_idleness_delay(tmp_path):
    """The design note's hand check on OMP_TEAMS (docs/root-cause-design.md, section 5): threads
    begin their team after the fork; the thread entering each barrier last is charged (fork to
    begin time on the parallel region, the begin's lateness against the team's earliest pruned):
    80 ns on thread 1, 200 on thread 2; the master's 300 ns of serial time kept 2 threads idle."""
    from analysis_cases import OMP_TEAMS

    testing.write_omp_trace(tmp_path, "teams", OMP_TEAMS, 3, 1000)
    report = cubescale.analyze(tmp_path / "teams.otf2", root_cause=True)
    assert by_call(report, "delay_ompbarrier") == pytest.approx(
        {(1, "!$omp parallel @synthetic.c:1"): 80e-9, (2, "!$omp parallel @synthetic.c:1"): 200e-9}, rel=1e-12)
    assert by_call(report, "delay_ompidle") == pytest.approx({(0, "main"): 600e-9}, rel=1e-12)
    # as scout.omp: no MPI root-cause metrics without MPI, the OpenMP ones after the impact metrics
    names = [m.name for m in report.metrics]
    assert names[-6:] == ["delay", "delay_omp", "delay_ompbarrier_aggregate", "delay_ompbarrier",
                          "delay_ompidle_aggregate", "delay_ompidle"]
    assert not set(names) & set(ROOT_CAUSE)


def test_idleness_counts_every_other_thread_of_the_process(tmp_path):
    """A master's serial time keeps every other CPU thread of its process idle, as scout counts
    them (its analysis threads), whatever the size of the teams around: here a team of 2 of 4
    threads, so 3 idle threads over the master's 100 + 100 + 100 ns of serial time in main."""
    regions = [{"fork": 100, "join": 500, "threads": [[("ibarrier", 200, 400)], [("ibarrier", 300, 400)]]},
               {"fork": 600, "join": 900, "threads": [[("ibarrier", 700, 800)], [("ibarrier", 650, 800)],
                                                      [("ibarrier", 690, 800)], [("ibarrier", 680, 800)]]}]
    testing.write_omp_trace(tmp_path, "teams", regions, 4, 1000)
    report = cubescale.analyze(tmp_path / "teams.otf2", root_cause=True)
    assert by_call(report, "delay_ompidle") == pytest.approx({(0, "main"): 3 * 300e-9}, rel=1e-12)


def test_contradicting_times_end_without_a_hang(tmp_path):
    """Each process receives first what the other sends after its receive (analysis_cases.CYCLE):
    the backward pass finds each send waiting for the other's receive, a cycle it breaks (scout's
    replay would deadlock). Both waits are explained by the sender's time before its send."""
    from analysis_cases import CYCLE

    testing.write_mpi_trace(tmp_path, "cycle", CYCLE, end=100)
    report = cubescale.analyze(tmp_path / "cycle.otf2", root_cause=True)
    late = by_call(report, "mpi_latesender")
    assert late == pytest.approx({(0, "MPI_Recv"): 50e-9, (1, "MPI_Recv"): 50e-9})
    delay = by_call(report, "delay_latesender")
    assert delay and all(np.isfinite(v) and v > 0 for v in delay.values())
    assert sum(delay.values()) <= sum(late.values()) * (1 + 1e-12)


def test_report_opens_in_pycubexr(chain, tmp_path):
    """The root-cause metrics read back by another CUBE reader with the values written."""
    pycubexr = pytest.importorskip("pycubexr")
    cubescale.analyze(chain, tmp_path / "rc.cubex", root_cause=True)
    with pycubexr.CubexParser(str(tmp_path / "rc.cubex")) as cube:
        totals = {}
        for name in ("delay_latesender", "delay_latesender_longterm", "mpi_wait_propagating_ls"):
            values = cube.get_metric_values(cube.get_metric_by_name(name))
            totals[name] = sum(sum(values.cnode_values(c)) for c in cube.all_cnodes())
    assert totals == pytest.approx({"delay_latesender": 3700e-9, "delay_latesender_longterm": 3000e-9,
                                    "mpi_wait_propagating_ls": 3000e-9}, rel=1e-12)


def late_collectives(kind: str, iterations: int) -> tuple[list[list[tuple]], int]:
    """Three ranks, a collective per iteration whose delayer never synchronized with every other
    member before (issue #26's former quadratic case, docs/analysis.md "Root causes"):
    ``bcast``: rank 2 waits for the root, rank 1 always enters late (but in the last three
    iterations), the root waits for rank 2's message first; ``reduce``: the root waits for rank 1,
    the last sender, whose points name only the root (rank 2 is the last sender in the last three
    iterations), rank 2 waits for rank 1's message first. Each instance's group start is the trace
    start: its time maps, backward searches and cost additions reach over every earlier point."""
    init = ("MPI_Init", 0, 100, [], 0)
    ranks: list[list[tuple]] = [[init], [init], [init]]
    for i in range(iterations):
        t, j = 1000 + 1000 * i, (i * 7919) % 97  # j: the work before the call varies
        last = i >= iterations - 3
        if kind == "bcast":
            ranks[0] += [("MPI_Recv", t + 10, t + 70, [2], 0), ("MPI_Bcast", t + 300 + j, t + 400 + j, [0], 0)]
            ranks[1] += [("MPI_Bcast", t + 150, t + 400 + j, [0], 0) if last else
                         ("MPI_Bcast", t + 500 + j, t + 600 + j, [0], 0)]
            ranks[2] += [("MPI_Send", t + 50, t + 60, [0], 0), ("MPI_Bcast", t + 100, t + 400 + j, [0], 0)]
        else:
            ranks[0] += [("MPI_Reduce", t + 100, t + 400 + j, [0], 0)]
            ranks[1] += [("MPI_Send", t + 20, t + 30, [2], 0),
                         ("MPI_Reduce", t + 150, t + 200, [0], 0) if last else
                         ("MPI_Reduce", t + 300 + j, t + 350 + j, [0], 0)]
            ranks[2] += [("MPI_Recv", t + 5, t + 40, [1], 0),
                         ("MPI_Reduce", t + 350 + j, t + 380 + j, [0], 0) if last else
                         ("MPI_Reduce", t + 200, t + 250, [0], 0)]
    end = 1000 * (iterations + 2)
    for r in ranks:
        r.append(("MPI_Finalize", end - 100, end - 50, [], 0))
    return ranks, end


# The values of main at d86a956 (its walk over every earlier point, each instance summing the
# time maps from the trace start: cheap at 200 iterations), printed with repr. 200 iterations put
# the group starts further back than the analysis walks (64 points, 256 time-map entries) before
# it asks its indices.
LATE_COLLECTIVES = {
    "bcast": {
        "delay_latesender": {(2, "main"): 8.000000000000001e-06},
        "delay_12n": {(0, "main"): 4.7816000000000004e-05, (0, "MPI_Recv"): 2.1196666666666672e-06},
        "delay_12n_longterm": {(2, "main"): 2.393333333333323e-07},
    },
    "reduce": {
        "delay_latesender": {(1, "main"): 2.9760000000000004e-06, (1, "MPI_Reduce"): 2.4000000000000003e-08},
        "delay_n21": {(1, "main"): 4.7162831199394795e-05, (2, "main"): 8.067577535820543e-07,
                      (2, "MPI_Recv"): 6.013842652454048e-08, (1, "MPI_Send"): 1.6381688006052124e-06},
        "delay_n21_longterm": {(1, "main"): 2.2675010461135655e-08, (1, "MPI_Reduce"): 2.242880943226964e-08},
    },
}


@pytest.mark.parametrize("kind", sorted(LATE_COLLECTIVES))
def test_group_start_at_the_trace_start(tmp_path, kind):
    """1-to-N and N-to-1 delayers that never synchronized with every member: the values of the
    walk over all earlier points, now from the indices (prefix sums, the partner index, the costs'
    tree)."""
    ranks, end = late_collectives(kind, 200)
    testing.write_mpi_trace(tmp_path, kind, ranks, end)
    report = cubescale.analyze(tmp_path / f"{kind}.otf2", root_cause=True)
    for metric in ROOT_CAUSE:
        expected = LATE_COLLECTIVES[kind].get(metric, {})
        assert by_call(report, metric) == pytest.approx(expected, rel=1e-12, abs=1e-18), metric
    # the long-term costs came through the waits of the delayer since the trace start
    short = f"delay_{'12n' if kind == 'bcast' else 'n21'}"
    assert report.values(f"{short}_longterm", inclusive=False).sum() > 0
