"""Reports as Hatchet GraphFrames and Thickets and back (cubescale.hatchet), with the real
llnl-hatchet and llnl-thicket packages (``pip install 'cubescale[hatchet]'``)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from conftest import SHARED_DATA  # CUBESCALE_SHARED_DATA, else ../shared/data

import cubescale
from cubescale.hatchet import to_hatchet, to_thicket
from cubescale.hatchet_reader import from_hatchet
from cubescale.pop import pop_metrics
from cubescale.views import call_paths

hatchet = pytest.importorskip("hatchet", reason="llnl-hatchet is not installed: pip install 'cubescale[hatchet]'")

CUBEX = SHARED_DATA / "cubex"


def shared(name: str) -> cubescale.Report:
    path = CUBEX / name
    if not path.exists():
        pytest.fail(f"shared data {path} not found")
    return cubescale.open(path)


def node_path(node) -> str:
    """A Hatchet node's call path as cubescale names it ("main/solve"), through its parents."""
    names = []
    while node is not None:
        names.append(node.frame["name"])
        node = node.parents[0] if node.parents else None
    return "/".join(reversed(names))


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.cubex", "bt-mz.B.8x4.remapped.cubex"])
def test_every_row_holds_the_reports_values(name):
    report = shared(name)
    metrics = ["time", "visits"] if name.endswith("8x4.cubex") else ["time", "execution", "mpi", "visits"]
    gf = to_hatchet(report, metrics)
    assert isinstance(gf, hatchet.GraphFrame)
    frame = gf.dataframe
    cnodes, locations = report.shape
    assert len(frame) == cnodes * locations and len(gf.graph) == cnodes
    assert sorted(gf.exc_metrics) == sorted(metrics)
    assert sorted(gf.inc_metrics) == sorted(f"{m} (inc)" for m in metrics)
    # Back from Hatchet's index to the report's rows and columns, independently of the module:
    # call paths by their names (unique in these reports), locations by (process rank, thread rank).
    paths = call_paths(report)
    assert len(set(paths)) == len(paths)
    row_of = {p: i for i, p in enumerate(paths)}
    column_of = {(loc.process_rank, loc.rank): loc.index for loc in report.locations}
    rows = np.array([row_of[node_path(n)] for n in frame.index.get_level_values("node")])
    columns = np.array([column_of[rt] for rt in zip(frame.index.get_level_values("rank"),
                                                    frame.index.get_level_values("thread"))])
    for m in metrics:
        np.testing.assert_array_equal(frame[m].to_numpy(), report.values(m, inclusive=False)[rows, columns])
        np.testing.assert_array_equal(frame[f"{m} (inc)"].to_numpy(), report.values(m, inclusive=True)[rows, columns])
    assert (frame["name"].to_numpy() == np.array([report.cnodes[r].region.name for r in rows])).all()


def test_hatchet_works_on_it():
    report = shared("bt-mz.B.8x4.cubex")
    gf = to_hatchet(report, ["time"])
    text = gf.tree(metric_column="time (inc)", precision=3)
    assert "MAIN__" in text and "!$omp parallel @x_solve.f:46" in text
    gf.drop_index_levels(function="sum")  # Hatchet's own aggregation over ranks and threads
    root = gf.graph.roots[0]
    assert gf.dataframe.loc[root, "time (inc)"] == pytest.approx(report.cnode_values("time", inclusive=True)[0])


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.cubex", "blast.p64.cubex"])
def test_round_trip_writes_a_report_with_the_same_values(name, tmp_path):
    report = shared(name)
    back = from_hatchet(to_hatchet(report))
    out = tmp_path / "back.cubex"
    cubescale.write(back, out)
    again = cubescale.open(out)
    assert again.shape == report.shape
    assert [c.region.name for c in again.cnodes] == [c.region.name for c in report.cnodes]
    assert [c.region.paradigm for c in again.cnodes] == [c.region.paradigm or "user" for c in report.cnodes]
    assert again.cnode_parents.tolist() == report.cnode_parents.tolist()
    # what POP needs survives: regions' paradigms and names (MPI, OpenMP runtime)
    assert pop_metrics(again)[0].efficiencies() == pytest.approx(pop_metrics(report)[0].efficiencies(), rel=1e-12)
    for m in ("time", "visits"):
        assert again.metric(m).dtype == ("UINT64" if m == "visits" else "DOUBLE")
        np.testing.assert_array_equal(again.values(m, inclusive=False), report.values(m, inclusive=False))


def test_a_graphframe_of_hatchets_own_reader_becomes_a_report(tmp_path):
    tree = [{"frame": {"name": "main", "type": "function"}, "metrics": {"time": 1.0, "time (inc)": 10.0, "calls": 1},
             "children": [{"frame": {"name": "solve", "file": "s.c", "line": 7, "type": "function"},
                           "metrics": {"time": 6.0, "time (inc)": 9.0, "calls": 4},
                           "children": [{"frame": {"name": "MPI_Allreduce", "type": "function"},
                                         "metrics": {"time": 3.0, "time (inc)": 3.0, "calls": 40}}]}]}]
    gf = hatchet.GraphFrame.from_literal(tree)
    report = from_hatchet(gf)
    out = tmp_path / "literal.cubex"
    cubescale.write(report, out)
    r = cubescale.open(out)
    assert call_paths(r) == ["main", "main/solve", "main/solve/MPI_Allreduce"]
    assert r.values("time", inclusive=True)[:, 0].tolist() == [10.0, 9.0, 3.0]
    assert r.values("calls", inclusive=False)[:, 0].tolist() == [1, 4, 40]
    assert (r.regions[1].module, r.regions[1].begin) == ("s.c", 7)
    assert r.metric("time").unit == "sec"


def test_a_call_graph_is_refused_with_a_reason():
    shared_child = {"frame": {"name": "kernel"}, "metrics": {"time": 1.0, "time (inc)": 1.0, "_hatchet_nid": 9}}
    tree = [{"frame": {"name": "main"}, "metrics": {"time": 0.0, "time (inc)": 2.0},
             "children": [{"frame": {"name": "a"}, "metrics": {"time": 0.0, "time (inc)": 1.0}, "children": [shared_child]},
                          {"frame": {"name": "b"}, "metrics": {"time": 0.0, "time (inc)": 1.0},
                           "children": [dict(shared_child)]}]}]
    gf = hatchet.GraphFrame.from_literal(tree)
    with pytest.raises(ValueError, match="several parents: a call graph"):
        from_hatchet(gf)


def test_thicket_of_two_runs_gives_ensemble_statistics():
    thicket = pytest.importorskip("thicket", reason="llnl-thicket is not installed: pip install 'cubescale[hatchet]'")
    # two runs of BT-MZ 8x4 (Score-P's summary profile; Scalasca's trace run): the same call tree
    small, large = shared("bt-mz.B.8x4.cubex"), shared("bt-mz.B.8x4.remapped.cubex")
    with contextlib.redirect_stdout(io.StringIO()):  # thicket's notice about seaborn
        tk = to_thicket([small, large], ["time"])
    assert isinstance(tk, thicket.Thicket)
    assert list(tk.dataframe.index.names) == ["node", "profile"] and len(tk.profile) == 2
    assert set(tk.metadata["file"]) == {small.path, large.path}
    thicket.stats.mean(tk, columns=["time (inc)"])
    assert [n.frame["name"] for n in tk.graph.roots] == ["MAIN__"] and len(tk.graph) == small.shape[0]
    root = tk.graph.roots[0]
    per_location = [float(r.values("time", inclusive=True)[0].mean()) for r in (small, large)]
    assert tk.statsframe.dataframe.loc[root, "time (inc)_mean"] == pytest.approx(np.mean(per_location), rel=1e-12)
    with pytest.raises(ValueError, match="combine="):
        to_thicket([small], combine="average")


def test_metrics_without_one_number_per_value_are_never_dropped_silently():
    report = shared("all_dtypes.cubex")  # every Cube data type, no 'time'
    with pytest.warns(UserWarning, match=r"left out .*TAU_ATOMIC \(TAU_ATOMIC\).*HISTOGRAM5"):
        gf = to_hatchet(report)
    assert "TAU_ATOMIC" not in gf.exc_metrics and "DOUBLE" in gf.exc_metrics
    assert gf.default_metric == "INT8" == gf.exc_metrics[0]  # the first column, not a 'time' that is none
    assert "main" in gf.tree()  # Hatchet draws the default metric: a KeyError when it is no column
    with pytest.raises(ValueError, match=r"metric 'TAU_ATOMIC' has TAU_ATOMIC values") as error:
        to_hatchet(report, ["DOUBLE", "TAU_ATOMIC"])
    assert "\n" not in str(error.value)


def test_tuples_of_thread_aggregation_fail_clearly():
    tuples = cubescale.threads.aggregate(shared("bt-mz.B.8x4.cubex"), "set")
    with pytest.raises(ValueError, match="metric 'time' has TAU_ATOMIC values"):
        tuples.to_hatchet(["time"])
    with pytest.raises(ValueError, match="no metric has one number per value"):
        tuples.to_hatchet()
