"""Trace metrics from OTF2 (paper 004): synthetic traces with packages, GPUs and cores whose
counters grow at known rates give the analytic energy per FLOP for the machine, a node and a
package; metric instances sit on their scope, not on the recorder; on the shared PAPI trace an
aggregate over the machine equals NumPy's sum over its locations on the same grid."""

from __future__ import annotations

import numpy as np
import pytest

from cubescale import testing
from cubescale.cli import main
from cubescale.timeline import evaluate
from cubescale.trace import open as open_trace

EPF = ('"energy" "stairstep" source-counter "sum" aggregate "0" diff-quot '
       '"PAPI_FP_OPS" "stairstep" source-counter "sum" aggregate "0" diff-quot /')


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return testing.write_hardware_trace(tmp_path_factory.mktemp("syn"), "traces", seconds=20, samples_per_second=4)


def _element(tree, name):
    return next(e for e in tree.preorder() if tree.name(e) == name)


def test_energy_per_flop_is_analytic_for_machine_node_and_package(synthetic):
    trace = open_trace(synthetic)
    store, tree = trace.timelines(), trace.system_tree()
    watts_packages = [40, 45, 50, 55]
    flops = [1000 * (c + 1) for c in range(16)]
    cases = {tree.preorder()[0]: (sum(watts_packages) + 200 + 250, sum(flops)),
             _element(tree, "node 1"): (50 + 55 + 250, sum(flops[8:]))}
    for target, (watts, flop) in cases.items():
        t, v = evaluate(EPF, store, target, points=81)  # on the samples' times
        assert np.allclose(v, 1e6 * watts / flop, rtol=1e-12), tree.name(target)
        t, v = evaluate(EPF.replace("stairstep", "linear"), store, target, points=57)  # between samples
        assert np.allclose(v, 1e6 * watts / flop, rtol=1e-9), tree.name(target)
    package = _element(tree, "package 0")
    t, w = evaluate('"energy" "stairstep" source-counter "sum" aggregate "0" diff-quot', store, package, points=81)
    assert np.allclose(w, 40e6)


def test_metric_instances_sit_on_their_scope(synthetic):
    trace = open_trace(synthetic)
    store, tree = trace.timelines(), trace.system_tree()
    on = {tree.class_name(e) for e, m in store.metrics() if m == "energy"}
    assert on == {"package", "gpu"}
    assert {tree.class_name(e) for e, m in store.metrics() if m == "PAPI_FP_OPS"} == {"thread"}


def test_machine_aggregate_equals_numpy_on_the_shared_papi_trace(shared_data):
    trace = open_trace(shared_data / "otf2" / "ping-pong-papi" / "traces.otf2")
    store = trace.timelines()
    for metric in ("PAPI_TOT_CYC", "PAPI_L2_TCM"):
        t, v = evaluate(f'"{metric}" "linear" source-counter "sum" aggregate', store, 0, points=200)
        columns = []
        for e, m in store.metrics():
            if m == metric:
                tl = store.get(e, m)
                columns.append(np.interp(t, tl.times, tl.values))
        assert len(columns) == 2
        assert np.allclose(v, np.sum(columns, axis=0), rtol=1e-12), metric


def test_cli_lists_and_evaluates(synthetic, tmp_path, capsys):
    assert main(["timeline", synthetic]) == 0
    listing = capsys.readouterr().out
    assert "package" in listing and "energy" in listing and "PAPI_FP_OPS" in listing
    png = tmp_path / "epf.png"
    assert main(["timeline", synthetic, "--node", "node 0", "--points", "21", "--plot", str(png), "--expr", EPF]) == 0
    out = capsys.readouterr().out
    assert f"{1e6 * 285 / 36000:.6g}" in out and png.stat().st_size > 1000
    assert main(["timeline", synthetic, "--expr", '"energy" source-counter']) == 2


def test_cli_refuses_arguments_it_cannot_honour(shared_data, tmp_path, capsys):
    # Each was silently ignored or answered elsewhere before: a plot without an expression, a
    # grid of one point or of more than a picture can show (10^11 points tried to allocate 745
    # GiB, 10^9 allocated gigabytes), a name that several elements have (every rank's "Master thread",
    # which took rank 0's), an index past the tree (a message about a missing timeline).
    papi = shared_data / "otf2" / "ping-pong-papi"
    cycles = '"PAPI_TOT_CYC" "linear" source-counter "sum" aggregate'
    cases = [(["--plot", str(tmp_path / "x.png")], "--plot draws an expression"),
             (["--points", "1", "--expr", cycles], "--points 1: a timeline needs 2 to 100000 points"),
             (["--points", "100000000000", "--expr", cycles], "--points 100000000000: a timeline needs 2 to 100000"),
             (["--points", "100001", "--expr", cycles], "needs 2 to 100000 points"),
             (["--expr", ""], "empty expression"),
             (["--node", "Master thread", "--expr", cycles],
              "'Master thread' names 2 system tree elements ('MPI Rank 0/Master thread', 'MPI Rank 1/Master thread')"),
             (["--node", "99", "--expr", cycles], "no system tree element 99: the tree has 6"),
             (["--plot", str(tmp_path / "x.txt"), "--expr", cycles], "x.txt: not a picture's extension"),
             (["--node", "0"], "--node names the element an expression is evaluated for: give it with --expr")]
    for arguments, message in cases:
        assert main(["timeline", str(papi), *arguments]) == 2, arguments
        assert message in capsys.readouterr().err, arguments
    # A trace without metrics: said so, not "pass start and stop" (the API's arguments).
    assert main(["timeline", str(shared_data / "otf2" / "ping-pong"), "--expr", cycles]) == 2
    assert "records no metrics" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "x.txt").exists()
    assert main(["timeline", str(papi), "--points", "5", "--plot", str(tmp_path / "x.svg"), "--expr", cycles]) == 0
    assert b"<svg" in (tmp_path / "x.svg").read_bytes()[:1000]  # the format its name asks for
    capsys.readouterr()
    assert main(["timeline", str(papi), "--points", "5", "--node", "MPI Rank 1/Master thread", "--expr", cycles]) == 0
    by_path = capsys.readouterr().out
    assert main(["timeline", str(papi), "--points", "5", "--node", "5", "--expr", cycles]) == 0
    assert capsys.readouterr().out == by_path and "for 'MPI Rank 1/Master thread'" in by_path
