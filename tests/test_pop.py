"""POP efficiencies (cubescale.pop, `cubescale pop`) against hand computations from the
reports' arrays, written independently of the module: the Score-P reports' regions classified
by their roles, the Scalasca reports' metrics summed over every call path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED_DATA  # CUBESCALE_SHARED_DATA, else ../shared/data

import cubescale
from cubescale.cli import main
from cubescale.pop import WAIT_STATES, ideal_runtime, location_time, pop_metrics

DATA = SHARED_DATA
CUBEX = DATA / "cubex"
LATE_SENDER = DATA / "otf2" / "late-sender-barrier"

# The OpenMP runtime as Score-P's metric tree counts it (scorep.spec's omp_time), by region role.
OMP_RUNTIME_ROLES = {"parallel", "barrier", "implicit barrier", "atomic", "critical", "flush", "ordered"}


def shared(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"shared data {path} not found")
    return path


def not_useful(region) -> bool:
    """MPI calls and the OpenMP runtime, decided from the roles and paradigms of the regions."""
    paradigm = region.paradigm or region.description
    if paradigm == "mpi":
        return region.name.startswith("MPI_")
    if paradigm == "openmp":
        return region.role in OMP_RUNTIME_ROLES or (region.name.startswith("omp_") and region.name.endswith("lock"))
    return False


def by_hand_from_regions(report: cubescale.Report) -> dict:
    exclusive = np.asarray(report.values("time", inclusive=False), dtype=np.float64)
    per_location = exclusive.sum(axis=0)
    outside = np.array([not_useful(c.region) for c in report.cnodes])
    useful = per_location - exclusive[outside].sum(axis=0)
    mpi = exclusive[np.array([(c.region.paradigm or c.region.description) == "mpi"
                              and c.region.name.startswith("MPI_") for c in report.cnodes])].sum(axis=0)
    return {"T": per_location, "U": useful, "mpi": mpi}


def metric_sum(report: cubescale.Report, name: str) -> np.ndarray:
    return np.asarray(report.values(name, inclusive=False), dtype=np.float64).sum(axis=0)


def efficiencies(T: np.ndarray, U: np.ndarray) -> dict:
    runtime = T.max()
    return {"LB": U.mean() / U.max(), "CommE": U.max() / runtime, "PE": U.mean() / runtime}


def assert_matches(run, hand: dict) -> None:
    e = efficiencies(hand["T"], hand["U"])
    assert run.runtime == pytest.approx(hand["T"].max(), rel=1e-12)
    np.testing.assert_allclose(run.useful, hand["U"], rtol=1e-12, atol=1e-12)
    assert run.load_balance == pytest.approx(e["LB"], rel=1e-12)
    assert run.communication_efficiency == pytest.approx(e["CommE"], rel=1e-12)
    assert run.parallel_efficiency == pytest.approx(e["PE"], rel=1e-12)


def test_demo_equals_the_hand_computation():
    report = cubescale.open(cubescale.examples.report_path())
    run = pop_metrics(report)[0]
    assert_matches(run, by_hand_from_regions(report))
    assert run.useful_from == "time - MPI and OpenMP runtime regions"
    assert (run.processes, run.locations) == (4, 20)
    assert run.serialisation_efficiency is None and run.transfer_efficiency is None  # no wait states
    assert run.computation_scalability == 1.0 and run.global_efficiency == pytest.approx(run.parallel_efficiency)


def test_bt_mz_score_p_profile_equals_the_hand_computation():
    report = cubescale.open(shared(CUBEX / "bt-mz.B.8x4.cubex"))
    hand = by_hand_from_regions(report)
    run = pop_metrics(report)[0]
    assert_matches(run, hand)
    # the OpenMP runtime matters here: barriers and fork/join are not computation
    assert (hand["U"] < hand["T"] - hand["mpi"] - 0.1).all()
    assert 0.5 < run.parallel_efficiency < 1.0


def test_bt_mz_scalasca_summary_uses_its_metric_tree():
    report = cubescale.open(shared(CUBEX / "bt-mz.B.8x4.remapped.cubex"))
    run = pop_metrics(report)[0]
    hand = {"T": metric_sum(report, "time"),
            "U": metric_sum(report, "execution") - metric_sum(report, "mpi") - metric_sum(report, "omp_time")}
    assert_matches(run, hand)
    assert run.useful_from == "execution - mpi - omp_time"
    # Another run of the same program, measured by Score-P's profile: the region rules and
    # Score-P's metric tree tell the same story to within a point.
    profile = pop_metrics(cubescale.open(shared(CUBEX / "bt-mz.B.8x4.cubex")))[0]
    assert abs(profile.parallel_efficiency - run.parallel_efficiency) < 0.01


@pytest.fixture(scope="module")
def late_sender():
    profile = cubescale.open(shared(LATE_SENDER / "profile.cubex"))
    scout = cubescale.analyze(LATE_SENDER / "traces.otf2")
    return profile, scout


def test_serialisation_and_transfer_from_a_wait_state_report(late_sender):
    profile, scout = late_sender
    run = pop_metrics(profile, scout=scout)[0]
    hand = by_hand_from_regions(profile)
    assert_matches(run, hand)
    waits = sum(metric_sum(scout, name) for name in WAIT_STATES if any(m.name == name for m in scout.metrics))
    assert waits.max() > 1.0  # late senders and a late barrier: seconds of waiting
    ideal = (hand["T"] - np.maximum(hand["mpi"] - waits, 0.0)).max()
    assert run.ideal_runtime == pytest.approx(ideal, rel=1e-12)
    assert run.serialisation_efficiency == pytest.approx(hand["U"].max() / ideal, rel=1e-12)
    assert run.transfer_efficiency == pytest.approx(ideal / hand["T"].max(), rel=1e-12)
    assert run.serialisation_efficiency * run.transfer_efficiency == pytest.approx(run.communication_efficiency)
    # The trace's own report gives the same numbers: time, execution and mpi of the same run.
    alone = pop_metrics(scout)[0]
    assert alone.useful_from == "execution - mpi"
    assert alone.load_balance == pytest.approx(run.load_balance, rel=1e-3)
    assert alone.transfer_efficiency == pytest.approx(run.transfer_efficiency, rel=1e-3)


def test_a_wait_state_report_must_fit_the_run(late_sender):
    profile, scout = late_sender
    demo = cubescale.open(cubescale.examples.report_path())
    with pytest.raises(ValueError, match="4 locations"):
        pop_metrics(demo, scout=scout)
    with pytest.raises(ValueError, match="none of Scalasca's wait-state metrics"):
        pop_metrics(profile, scout=profile)


def test_computation_scalability_and_global_efficiency_across_runs():
    small = cubescale.open(shared(CUBEX / "bt-mz.p2x4.bad_checksums.cubex"))
    large = cubescale.open(shared(CUBEX / "bt-mz.B.8x4.cubex"))
    u_small, u_large = by_hand_from_regions(small)["U"], by_hand_from_regions(large)["U"]
    runs = pop_metrics([large, small])  # the reference is the smaller, wherever it is
    assert runs[1].computation_scalability == 1.0
    assert runs[0].computation_scalability == pytest.approx(u_small.sum() / u_large.sum(), rel=1e-12)
    assert runs[0].global_efficiency == pytest.approx(runs[0].parallel_efficiency * u_small.sum() / u_large.sum())
    weak = pop_metrics([large, small], scaling="weak")
    assert weak[0].computation_scalability == pytest.approx(u_small.sum() * 32 / 8 / u_large.sum(), rel=1e-12)


def test_cli_with_runs_of_different_scale(capsys):
    small, large = shared(CUBEX / "bt-mz.p2x4.bad_checksums.cubex"), shared(CUBEX / "bt-mz.B.8x4.cubex")
    assert main(["pop", str(small), str(large), "--weak"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["POP", "metrics", small.name, large.name]
    runs = pop_metrics([cubescale.open(small), cubescale.open(large)], scaling="weak")
    scalability = next(line for line in out if "Computation scalability" in line).split()[-2:]
    assert scalability == [f"{100 * r.computation_scalability:.2f}%" for r in runs]


def test_the_dataframe_and_the_report_method():
    pytest.importorskip("pandas")
    report = cubescale.open(cubescale.examples.report_path())
    frame = cubescale.pop(report)
    run = pop_metrics(report)[0]
    assert frame.loc["Load balance", "demo.cubex"] == pytest.approx(run.load_balance)
    assert np.isnan(frame.loc["Transfer efficiency", "demo.cubex"])
    assert frame.equals(report.pop())
    twice = cubescale.pop([report, report])
    assert len(twice.columns) == 2  # the same file twice: two columns, told apart


def test_cli_prints_pops_table_and_pairs_the_wait_state_report(late_sender, capsys, tmp_path):
    profile, scout = late_sender
    scout_path = tmp_path / "scout.cubex"
    cubescale.write(scout, scout_path)
    assert main(["pop", str(LATE_SENDER / "profile.cubex"), str(scout_path)]) == 0
    out = capsys.readouterr().out
    run = pop_metrics(profile, scout=scout)[0]
    lines = {line.strip().split("  ")[0].lstrip("- "): line for line in out.splitlines()}
    assert lines["Transfer efficiency"].split()[-1] == f"{100 * run.transfer_efficiency:.2f}%"
    assert lines["Load balance"].split()[-1] == f"{100 * run.load_balance:.2f}%"
    assert "scout.cubex" not in out.splitlines()[0]  # one run, not two
    assert "Runtime, ideal network" in out


def test_cli_errors_are_one_line(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("not a report\n")
    assert main(["pop", str(text)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a text file, not a .cubex report" in err
    demo = cubescale.examples.report_path()
    assert main(["pop", demo, "--plot", demo]) == 2
    assert "nothing was written" in capsys.readouterr().err


# --- MPI+OpenMP, GPU streams, aggregated threads, experiment directories -------------------

JACOBI = DATA / "otf2" / "jacobi-hybrid"  # 2 MPI ranks x (4 OpenMP threads + 1 CUDA stream)


@pytest.fixture(scope="module")
def jacobi():
    return cubescale.analyze(shared(JACOBI / "traces.otf2"))


def per_process_ideal(report: cubescale.Report, T: np.ndarray, X: np.ndarray) -> float:
    """POP's hybrid ideal runtime by hand: per process its longest CPU thread minus the largest
    transfer time of its threads, the maximum over processes."""
    by_process: dict[int, list[int]] = {}
    for loc in report.locations:
        if loc.type == "thread":
            by_process.setdefault(loc.process_rank, []).append(loc.index)
    return max(T[idx].max() - X[idx].max() for idx in by_process.values())


def test_gpu_streams_are_no_cpus(jacobi):
    cpu = np.array([loc.type == "thread" for loc in jacobi.locations])
    assert cpu.sum() == 8 and (~cpu).sum() == 2  # the CUDA streams
    T = metric_sum(jacobi, "time")
    U = metric_sum(jacobi, "execution") - metric_sum(jacobi, "mpi") - metric_sum(jacobi, "omp_time")
    run = pop_metrics(jacobi)[0]
    assert (run.processes, run.locations, run.other_locations) == (2, 8, 2)
    assert_matches(run, {"T": T[cpu], "U": U[cpu]})
    # Counted as CPUs, the streams (busy all along) would set max(U) and lower load balance.
    assert U[~cpu].max() > U[cpu].max()
    assert run.load_balance == pytest.approx(U[cpu].mean() / U[cpu].max(), rel=1e-12)


def test_the_hybrid_ideal_runtime_is_per_process(jacobi):
    run = pop_metrics(jacobi)[0]  # the trace's report holds its own wait states
    waits = sum(metric_sum(jacobi, name) for name in WAIT_STATES if any(m.name == name for m in jacobi.metrics))
    X = np.maximum(metric_sum(jacobi, "mpi") - waits, 0.0)
    T = metric_sum(jacobi, "time")
    assert X.max() > 0.01  # the masters move data
    assert run.ideal_runtime == pytest.approx(per_process_ideal(jacobi, T, X), rel=1e-12)
    assert run.serialisation_efficiency * run.transfer_efficiency == pytest.approx(run.communication_efficiency)


def test_worker_idle_time_does_not_hide_the_masters_transfer():
    # Scalasca's summary gives worker threads their idle time outside parallel regions, up to
    # the full runtime; Score-P's profile does not. The ideal runtime must be the same.
    summary = cubescale.open(shared(CUBEX / "bt-mz.B.8x4.remapped.cubex"))
    T = metric_sum(summary, "time")
    transfer = metric_sum(summary, "mpi")  # no wait states in a summary: all MPI as transfer
    masters = np.array([loc.rank == 0 for loc in summary.locations])
    master_of = {loc.process_rank: loc.index for loc in summary.locations if loc.rank == 0}
    T_master = T[[master_of[loc.process_rank] for loc in summary.locations]]
    np.testing.assert_allclose(T, T_master, rtol=0, atol=0.01)  # every worker lasts as long as its master
    assert transfer[~masters].max() == 0.0 and transfer[masters].min() > 0.1
    idle_free = np.where(masters, T, metric_sum(summary, "execution"))  # workers as a profile sees them
    ideal = ideal_runtime(summary, T, transfer)
    assert ideal == pytest.approx(per_process_ideal(summary, T, transfer), rel=1e-12)
    assert ideal < T.max() - 1.0  # per location, an idle worker would have kept the full runtime
    assert ideal_runtime(summary, idle_free, transfer) == pytest.approx(ideal, rel=1e-12)


@pytest.mark.parametrize("strategy", ["sum", "set", "key", "calltree", "value"])
def test_thread_aggregated_reports_are_refused(strategy):
    aggregated = cubescale.threads.aggregate(cubescale.open(shared(CUBEX / "bt-mz.B.8x4.cubex")), strategy)
    with pytest.raises(ValueError, match="its locations aggregate threads") as error:
        pop_metrics(aggregated)
    assert "\n" not in str(error.value)


def test_tau_atomic_time_is_refused_in_one_line(tmp_path, capsys):
    tuples = cubescale.threads.aggregate(cubescale.open(shared(CUBEX / "bt-mz.B.8x4.cubex")), "set")
    with pytest.raises(ValueError, match="'time' holds TAU_ATOMIC values"):
        location_time(tuples)
    path = tmp_path / "set.cubex"
    cubescale.write(tuples, path)
    assert main(["pop", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "aggregate threads" in err
    pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="aggregate threads"):  # Report.pop as well
        cubescale.open(path).pop()


def test_an_experiment_directory_brings_its_scout(late_sender, tmp_path, capsys):
    profile, scout = late_sender
    experiment = tmp_path / "scorep_late_sender"
    experiment.mkdir()
    (experiment / "profile.cubex").write_bytes((LATE_SENDER / "profile.cubex").read_bytes())
    cubescale.write(scout, experiment / "scout.cubex")
    assert main(["pop", str(experiment)]) == 0
    out = capsys.readouterr().out
    run = pop_metrics(profile, scout=scout)[0]
    lines = {line.strip().split("  ")[0].lstrip("- "): line for line in out.splitlines()}
    assert lines["Transfer efficiency"].split()[-1] == f"{100 * run.transfer_efficiency:.2f}%"
    assert f"wait states: {experiment / 'scout.cubex'}" in out
    # Given explicitly as well, it is paired once and not announced as found
    assert main(["pop", str(experiment), str(experiment / "scout.cubex")]) == 0
    assert "wait states:" not in capsys.readouterr().out
